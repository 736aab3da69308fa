// Attribution that matches reality on every node shape (docs/design.md#node-shapes), checked on the
// scenarios made for it (fixtures/scenarios/attr-*, tests/golden/attribution_scenarios_gen.py):
//   attr-dcgm-and-process  dcgm-exporter and a per-process exporter on one node;
//   attr-mig-shared-zero   a mixed-MIG node advertising `.shared` resources at 0;
//   attr-custom-counters   dcgm-exporters with trimmed counter lists (clocks only, profiling only);
//   attr-replicas          time-slicing replicas (not renamed) beside whole GPUs.
// Expected numbers are derived from the scenario's own exporter readings and objects wherever the
// rule is arithmetic, so the test states the rule rather than a copy of the output.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "golden/attribution_harness.h"
#include "gpuattr/allocation/resources.h"

namespace gpuattr::testing {
namespace {

using attribution::Attribution;
using attribution::Device;
using attribution::Method;
using attribution::PodDevice;
using attribution::Sharing;

struct Shape {
  AttributionCase c;
  model::CycleOutput out;
};

Shape LoadShape(const std::string& name) {
  auto c = LoadAttributionCase(FixturePath("scenarios/" + name));
  EXPECT_TRUE(c.ok()) << c.error().message;
  Shape s;
  if (!c.ok()) return s;
  s.c = std::move(*c);
  s.out = RunCase(s.c);
  return s;
}

bool Near(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b)); }

const attribution::Pod* FindPod(const Attribution& a, const std::string& ns,
                                const std::string& name) {
  for (const attribution::Pod& p : a.pods)
    if (p.id.namespace_ == ns && p.id.name == name) return &p;
  return nullptr;
}
const attribution::Namespace* FindNamespace(const Attribution& a, const std::string& name) {
  for (const attribution::Namespace& n : a.namespaces)
    if (n.name == name) return &n;
  return nullptr;
}
const attribution::NodePower* FindNode(const Attribution& a, const std::string& node) {
  for (const attribution::NodePower& n : a.nodes)
    if (n.node == node) return &n;
  return nullptr;
}
const allocation::NodeAllocation* FindAllocNode(const allocation::Allocation& a,
                                                const std::string& node) {
  for (const allocation::NodeAllocation& n : a.nodes)
    if (n.node == node) return &n;
  return nullptr;
}
const allocation::PodRequest* FindRequest(const allocation::Allocation& a, const std::string& ns,
                                          const std::string& name) {
  for (const allocation::PodRequest& p : a.pods)
    if (p.pod.namespace_ == ns && p.pod.name == name) return &p;
  return nullptr;
}

template <typename R>
std::vector<const R*> ReadingsOf(const AttributionCase& c) {
  std::vector<const R*> out;
  for (const sources::ExporterReadings& e : c.exporters)
    if (const auto* r = std::get_if<R>(&e.readings)) out.push_back(r);
  return out;
}

// ---- 1. dcgm-exporter and a per-process exporter on one node ---------------------------------

TEST(NodeShapes, DcgmAndProcessPodsComeFromTheProcessTierPowerByShareOfTotalMemory) {
  Shape s = LoadShape("attr-dcgm-and-process");
  const Attribution& a = s.out.attribution;
  const std::string node = "gpu-both-a";

  // What the exporters said, by card UUID: dcgm's power, the per-process exporter's total memory
  // (dcgm exports no FB_TOTAL/FB_FREE here) and each pod's process memory.
  std::map<std::string, double> card_watts, total_bytes;
  std::map<std::pair<kube::PodId, std::string>, double> pod_bytes;
  for (const auto* d : ReadingsOf<sources::DcgmReadings>(s.c))
    for (const sources::DcgmRecord& r : d->records) {
      ASSERT_FALSE(r.values.memory_total_bytes || r.values.memory_free_bytes);
      if (r.values.power_watts)
        card_watts[r.device.uuid] = std::max(card_watts[r.device.uuid], *r.values.power_watts);
    }
  for (const auto* p : ReadingsOf<sources::ProcessReadings>(s.c)) {
    for (const sources::ProcessDeviceReading& d : p->devices)
      total_bytes[d.uuid] = *d.memory_total_bytes;
    for (const sources::ProcessReading& r : p->processes)
      if (r.pod) pod_bytes[{r.pod->id, r.uuid}] += *r.memory_bytes;
  }
  ASSERT_EQ(card_watts.size(), 2u);
  ASSERT_EQ(total_bytes.size(), 2u);
  ASSERT_EQ(pod_bytes.size(), 5u);

  // Devices: dcgm's gauges; the total memory filled from the per-process exporter by UUID.
  size_t devices = 0;
  for (const Device& d : a.devices) {
    if (d.id.node != node) continue;
    ++devices;
    ASSERT_TRUE(d.memory_total_bytes) << d.uuid;
    EXPECT_EQ(*d.memory_total_bytes, total_bytes.at(d.uuid)) << d.uuid;
    EXPECT_EQ(*d.power_watts, card_watts.at(d.uuid)) << d.uuid;  // not the process exporter's
  }
  EXPECT_EQ(devices, 2u);

  // Every pod: method process; its power on each card = card W × its memory / the card's total.
  double pods_watts = 0;
  size_t links = 0;
  for (const PodDevice& l : a.pod_devices) {
    const Device& d = a.devices[l.device];
    if (d.id.node != node) continue;
    ++links;
    const double expected =
        card_watts.at(d.uuid) * pod_bytes.at({l.pod, d.uuid}) / total_bytes.at(d.uuid);
    ASSERT_TRUE(l.power_watts) << l.pod.name;
    EXPECT_TRUE(Near(*l.power_watts, expected)) << l.pod.name << ": " << *l.power_watts << " W";
    EXPECT_EQ(l.method, Method::kProcess) << l.pod.name;
    EXPECT_EQ(*l.memory_used_bytes, pod_bytes.at({l.pod, d.uuid})) << l.pod.name;
  }
  EXPECT_EQ(links, pod_bytes.size());  // joined by UUID although the card indexes differ
  for (const attribution::Pod& p : a.pods) {
    if (p.node != node) continue;
    EXPECT_EQ(p.method, Method::kProcess) << p.id.name;
    pods_watts += *p.power_watts;
  }
  // The node's unattributed power is the rest: memory nobody holds (and the process of no pod).
  const auto* n = FindNode(a, node);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->tier, attribution::Tier::kProcess);
  const double node_watts = card_watts.begin()->second + card_watts.rbegin()->second;
  EXPECT_TRUE(Near(*n->power_watts, node_watts));
  EXPECT_TRUE(Near(*n->unattributed_power_watts, node_watts - pods_watts));
  EXPECT_GT(*n->unattributed_power_watts, 0);
}

TEST(NodeShapes, DcgmAndProcessPodWithoutRequestIsFlaggedAndIsNoGpuPod) {
  Shape s = LoadShape("attr-dcgm-and-process");
  const Attribution& a = s.out.attribution;
  const auto* nb = FindPod(a, "lab", "notebook-3");
  ASSERT_NE(nb, nullptr);
  EXPECT_TRUE(nb->unrequested_gpu_use);
  for (const PodDevice& l : a.pod_devices)
    EXPECT_EQ(l.sharing == Sharing::kUnrequested, l.pod.name == "notebook-3") << l.pod.name;
  // dcgm's pod labels name only ml/chat-0 and research/ft-0; the process tier finds all five.
  for (const char* name : {"chat-0", "embed-0"}) EXPECT_NE(FindPod(a, "ml", name), nullptr);
  for (const char* name : {"ft-0", "eval-0"}) EXPECT_NE(FindPod(a, "research", name), nullptr);
  // GPU pods hold GPU resources: the unrequested user is not one.
  ASSERT_NE(FindNamespace(a, "lab"), nullptr);
  EXPECT_EQ(FindNamespace(a, "lab")->gpu_pods, 0u);
  EXPECT_EQ(FindNamespace(a, "ml")->gpu_pods, 2u);
  EXPECT_EQ(FindNamespace(a, "research")->gpu_pods, 2u);
}

// ---- 2. `.shared` resources advertised at 0 ---------------------------------------------------

TEST(NodeShapes, SharedResourcesAtZeroLeaveMigSlicesToTheirOnePod) {
  Shape s = LoadShape("attr-mig-shared-zero");
  const Attribution& a = s.out.attribution;
  const kube::Node* node = s.c.objects.FindNode("mig-mixed-2");
  ASSERT_NE(node, nullptr);
  ASSERT_EQ(node->capacity.at("nvidia.com/mig-1g.10gb.shared"), 0);
  ASSERT_FALSE(a.pod_devices.empty());
  for (const PodDevice& l : a.pod_devices) {
    const Device& d = a.devices[l.device];
    EXPECT_TRUE(d.id.gpu_instance.has_value());
    EXPECT_EQ(l.sharing, Sharing::kMig) << l.pod.name;
    EXPECT_EQ(l.method, Method::kDcgmPod) << l.pod.name;
    EXPECT_EQ(l.share, 1) << l.pod.name;
    EXPECT_EQ(*l.power_watts, *d.power_watts) << l.pod.name;  // the slice goes whole to its pod
  }
  for (const attribution::Pod& p : a.pods) EXPECT_EQ(p.method, Method::kDcgmPod) << p.id.name;

  // Node capacity counts the slices, never the .shared resources.
  int64_t slices = 0;
  for (const auto& [resource, count] : node->capacity)
    if (allocation::IsDeviceResource(resource)) slices += count;
  const auto* n = FindAllocNode(s.out.allocation, "mig-mixed-2");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->capacity, slices);
  EXPECT_EQ(slices, 6);
}

// ---- 3. custom counter lists ------------------------------------------------------------------

TEST(NodeShapes, CustomCounterListsStillNameDevicesSlicesAndPods) {
  Shape s = LoadShape("attr-custom-counters");
  const Attribution& a = s.out.attribution;

  // Every device key of the bodies is a device, with the MIG profile exactly as exported.
  std::set<std::pair<std::string, std::optional<std::string>>> keys;
  std::map<std::pair<std::string, std::optional<std::string>>, std::string> profiles;
  for (const auto* d : ReadingsOf<sources::DcgmReadings>(s.c))
    for (const sources::DcgmRecord& r : d->records) {
      keys.insert({r.device.uuid, r.device.gpu_instance});
      profiles[{r.device.uuid, r.device.gpu_instance}] = r.device.mig_profile;
    }
  ASSERT_EQ(keys.size(), 5u);
  ASSERT_EQ(a.devices.size(), keys.size());
  bool saw_7g79 = false;
  for (const Device& d : a.devices) {
    EXPECT_TRUE(keys.count({d.uuid, d.id.gpu_instance})) << attribution::DeviceIdText(d.id);
    EXPECT_EQ(d.mig_profile, profiles.at({d.uuid, d.id.gpu_instance}));
    saw_7g79 = saw_7g79 || d.mig_profile == "7g.79gb";
    // Nothing exported a gauge for these fields: unknown, never 0.
    EXPECT_FALSE(d.utilization || d.memory_used_bytes || d.memory_total_bytes || d.power_watts ||
                 d.temperature_celsius)
        << attribution::DeviceIdText(d.id);
    if (d.id.node == "clk-node-1") {
      // No pod labels: the node's GPU pods are the candidates, of every slice; no owner guessed.
      EXPECT_FALSE(d.pods.has_value());
      EXPECT_EQ(d.candidate_pods, (std::vector<kube::PodId>{{"ml", "big-0"}, {"ml", "mid-0"}}));
    } else {
      EXPECT_TRUE(d.sm_active && d.tensor_active && d.dram_active);
    }
  }
  EXPECT_TRUE(saw_7g79);
  for (const attribution::NodePower& n : a.nodes) EXPECT_FALSE(n.power_watts) << n.node;

  // Profiling fields only, with pod labels: the pod is on its device, its gauges unknown.
  ASSERT_EQ(a.pod_devices.size(), 1u);
  EXPECT_EQ(a.pod_devices[0].pod, (kube::PodId{"web", "rank-0"}));
  EXPECT_EQ(a.pod_devices[0].method, Method::kDcgmPod);
  const auto* rank = FindPod(a, "web", "rank-0");
  ASSERT_NE(rank, nullptr);
  EXPECT_FALSE(rank->power_watts || rank->utilization || rank->memory_used_bytes);
  EXPECT_FALSE(FindNamespace(a, "web")->power_watts.has_value());
  const auto* seen = FindAllocNode(s.out.allocation, "clk-node-1");
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(seen->seen, 3u);
}

// ---- 4. replicas are never devices ------------------------------------------------------------

TEST(NodeShapes, TimeSlicedNodeCountsPhysicalGpusAndReplicasApart) {
  Shape s = LoadShape("attr-replicas");
  const allocation::Allocation& al = s.out.allocation;
  const kube::Node* ts = s.c.objects.FindNode("ts-plain-1");
  ASSERT_NE(ts, nullptr);
  const int64_t r = std::stoll(ts->labels.at("nvidia.com/gpu.replicas"));
  const auto* n = FindAllocNode(al, "ts-plain-1");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->capacity, ts->capacity.at("nvidia.com/gpu") / r);        // 8 replicas: 2 GPUs
  EXPECT_EQ(n->allocatable, ts->allocatable.at("nvidia.com/gpu") / r);  // 4 replicas: 1 GPU
  EXPECT_EQ(n->unhealthy, 1);
  EXPECT_EQ(n->requested, 0);  // replicas held are not devices
  EXPECT_EQ(n->seen, 2u);

  const auto* bot1 = FindRequest(al, "chat", "bot-1");
  ASSERT_NE(bot1, nullptr);
  EXPECT_TRUE(bot1->requested.empty());
  EXPECT_EQ(bot1->replicas, (allocation::ResourceCounts{{"nvidia.com/gpu", 2}}));
  const auto* train = FindRequest(al, "chat", "train-0");
  ASSERT_NE(train, nullptr);
  EXPECT_EQ(train->requested, (allocation::ResourceCounts{{"nvidia.com/gpu", 1}}));
  EXPECT_TRUE(train->replicas.empty());
  ASSERT_EQ(al.namespaces.size(), 1u);
  EXPECT_EQ(al.namespaces[0].requested, (allocation::ResourceCounts{{"nvidia.com/gpu", 1}}));
  EXPECT_EQ(al.namespaces[0].replicas, (allocation::ResourceCounts{{"nvidia.com/gpu", 3}}));
  EXPECT_EQ(FindNamespace(s.out.attribution, "chat")->gpu_pods, 3u);

  // Renamed to .shared (attr-timesliced-vgpu: nvidia.com/gpu.shared 12, 4 replicas per GPU).
  Shape renamed = LoadShape("attr-timesliced-vgpu");
  const kube::Node* rn = renamed.c.objects.FindNode("ts-node-1");
  ASSERT_NE(rn, nullptr);
  const auto* rna = FindAllocNode(renamed.out.allocation, "ts-node-1");
  ASSERT_NE(rna, nullptr);
  EXPECT_EQ(rna->capacity, rn->capacity.at("nvidia.com/gpu.shared") / 4);
  EXPECT_EQ(rna->seen, 3u);
  for (const allocation::PodRequest& p : renamed.out.allocation.pods) {
    EXPECT_TRUE(p.requested.empty()) << p.pod.name;
    EXPECT_EQ(p.replicas, (allocation::ResourceCounts{{"nvidia.com/gpu.shared", 1}}));
  }
}

}  // namespace
}  // namespace gpuattr::testing
