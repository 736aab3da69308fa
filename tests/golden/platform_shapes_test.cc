// Issue 27's node shapes (docs/design.md#node-shapes), each a scenario written by
// tests/golden/attribution_scenarios_gen.py. Every number is worked out by hand in the comments
// from the scenario's exporter bodies and objects: physical GPUs, capacity/allocatable/requested,
// devices and replicas apart, GPU-equivalents, sharing, power split and conservation, and the
// GPU-hours per hour of every card on the three bases (docs/accounting.md).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "golden/accounting_harness.h"
#include "golden/attribution_harness.h"

namespace gpuattr::testing {
namespace {

using accounting::Basis;
using accounting::PerBasis;
using attribution::Sharing;

struct ShapeRun {
  AttributionCase c;
  model::CycleOutput out;
};

ShapeRun Load(const std::string& name) {
  auto c = LoadAttributionCase(FixturePath("scenarios/" + name));
  EXPECT_TRUE(c.ok()) << c.error().message;
  ShapeRun r;
  if (!c.ok()) return r;
  r.c = std::move(*c);
  r.out = RunCase(r.c);
  return r;
}

const attribution::Pod& PodOf(const ShapeRun& r, const std::string& ns, const std::string& name) {
  for (const attribution::Pod& p : r.out.attribution.pods)
    if (p.id.namespace_ == ns && p.id.name == name) return p;
  ADD_FAILURE() << "no pod " << ns << "/" << name;
  static const attribution::Pod none;
  return none;
}

// The sharing of every link of the pod (they agree in these scenarios).
std::set<Sharing> SharingOf(const ShapeRun& r, const std::string& ns, const std::string& name) {
  std::set<Sharing> out;
  for (const attribution::PodDevice& l : r.out.attribution.pod_devices)
    if (l.pod.namespace_ == ns && l.pod.name == name) out.insert(l.sharing);
  return out;
}

void ExpectPod(const ShapeRun& r, const std::string& ns, const std::string& name, double watts,
               double gpu_equivalents, Sharing sharing, size_t devices) {
  SCOPED_TRACE(ns + "/" + name);
  const attribution::Pod& p = PodOf(r, ns, name);
  ASSERT_TRUE(p.power_watts.has_value());
  EXPECT_NEAR(*p.power_watts, watts, 1e-9);
  EXPECT_NEAR(p.gpu_equivalents, gpu_equivalents, 1e-9);
  EXPECT_EQ(p.devices, devices);
  EXPECT_EQ(SharingOf(r, ns, name), std::set<Sharing>{sharing});
}

void ExpectNodePower(const ShapeRun& r, const std::string& node, double watts,
                     double unattributed) {
  SCOPED_TRACE(node);
  for (const attribution::NodePower& n : r.out.attribution.nodes)
    if (n.node == node) {
      ASSERT_TRUE(n.power_watts && n.unattributed_power_watts);
      EXPECT_NEAR(*n.power_watts, watts, 1e-9);
      EXPECT_NEAR(*n.unattributed_power_watts, unattributed, 1e-9);
      return;
    }
  ADD_FAILURE() << "no node power";
}

void ExpectNodeDevices(const ShapeRun& r, const std::string& node, int64_t capacity,
                       int64_t allocatable, int64_t requested, size_t seen) {
  SCOPED_TRACE(node);
  for (const allocation::NodeAllocation& n : r.out.allocation.nodes)
    if (n.node == node) {
      EXPECT_EQ(n.capacity, capacity);
      EXPECT_EQ(n.allocatable, allocatable);
      EXPECT_EQ(n.requested, requested);
      EXPECT_EQ(n.seen, seen);
      return;
    }
  ADD_FAILURE() << "no node allocation";
}

const allocation::PodRequest& RequestOf(const ShapeRun& r, const std::string& ns,
                                        const std::string& name) {
  for (const allocation::PodRequest& p : r.out.allocation.pods)
    if (p.pod.namespace_ == ns && p.pod.name == name) return p;
  ADD_FAILURE() << "no request " << ns << "/" << name;
  static const allocation::PodRequest none;
  return none;
}

const allocation::Hint& HintOf(const ShapeRun& r, const std::string& name) {
  for (const allocation::PendingPod& p : r.out.allocation.pending)
    if (p.pod.name == name) return p.hint;
  ADD_FAILURE() << "no pending pod " << name;
  static const allocation::Hint none;
  return none;
}

const attribution::Device& DeviceOf(const ShapeRun& r, const std::string& node,
                                    const std::string& gpu, std::optional<std::string> instance) {
  for (const attribution::Device& d : r.out.attribution.devices)
    if (d.id.node == node && d.id.gpu == gpu && d.id.gpu_instance == instance) return d;
  ADD_FAILURE() << "no device " << node << "/" << gpu;
  static const attribution::Device none;
  return none;
}

// "node/gpu" → pod ("ns/name") or "idle" → allocation, memory, usage.
using CardRows = std::map<std::string, PerBasis>;
std::map<std::string, CardRows> Shares(const std::string& scenario) {
  auto c = LoadAccountingCase(FixturePath("scenarios/" + scenario));
  EXPECT_TRUE(c.ok()) << c.error().message;
  std::map<std::string, CardRows> out;
  if (!c.ok()) return out;
  for (const accounting::CardAccount& card : ShareCase(*c)) {
    CardRows& rows = out[card.node + "/" + card.gpu];
    for (const accounting::PodAccount& p : card.pods) rows[p.pod.Text()] = p.value;
    rows["idle"] = card.idle;
  }
  return out;
}

void ExpectCard(const std::map<std::string, CardRows>& shares, const std::string& card,
                const CardRows& want) {
  SCOPED_TRACE(card);
  auto it = shares.find(card);
  ASSERT_NE(it, shares.end());
  EXPECT_EQ(it->second.size(), want.size());
  for (const auto& [who, v] : want) {
    auto g = it->second.find(who);
    ASSERT_NE(g, it->second.end()) << who;
    for (Basis b : accounting::kAllBases)
      EXPECT_NEAR(accounting::At(g->second, b), accounting::At(v, b), 1e-9)
          << who << " " << accounting::BasisName(b);
  }
}

// ---- MIG single -------------------------------------------------------------------------------
// mig-single-1: 2 physical A100s (the cards dcgm reports), nvidia.com/gpu 14 = 14 slices of
// 1g.10gb (capacity = allocatable = 14 devices), requested 4 (s-0 1, s-1 2, s-2 1), no replicas.
// Card 0 draws 210 W, card 1 140 W; each card's 7 reported slices have Σg = 7, so a slice gets
// 30 W (card 0) or 20 W (card 1), and g/G = 1/7 GPU-equivalents (G = 7 on an A100).
// s-0 (0:7): 30 W, 1/7; s-1 (0:8, 1:7): 50 W, 2/7; s-2 (1:8): 20 W, 1/7; each alone on its slice:
// sharing mig. Node 350 W, unattributed 350 − 100 = 250 W (Σ pods + unattributed = node).
TEST(PlatformShapes, MigSingleUnitsAreSlices) {
  ShapeRun r = Load("attr-mig-single");
  ExpectPod(r, "ml", "s-0", 30, 1.0 / 7, Sharing::kMig, 1);
  ExpectPod(r, "ml", "s-1", 50, 2.0 / 7, Sharing::kMig, 2);
  ExpectPod(r, "web", "s-2", 20, 1.0 / 7, Sharing::kMig, 1);
  ExpectNodePower(r, "mig-single-1", 350, 250);
  // Card 1's lines carry no GPU_I_PROFILE: the product label's suffix names the profile.
  EXPECT_EQ(DeviceOf(r, "mig-single-1", "1", "7").mig_profile, "1g.10gb");
  EXPECT_EQ(DeviceOf(r, "mig-single-1", "0", "7").mig_profile, "1g.10gb");
  ExpectNodeDevices(r, "mig-single-1", 14, 14, 4, 14);
  EXPECT_EQ(RequestOf(r, "ml", "s-1").requested,
            (allocation::ResourceCounts{{"nvidia.com/gpu", 2}}));
  EXPECT_TRUE(RequestOf(r, "ml", "s-1").replicas.empty());
  // A pod asking for nvidia.com/mig-1g.10gb is told the slices are offered as nvidia.com/gpu.
  const allocation::Hint& h = HintOf(r, "wants-profile");
  EXPECT_EQ(h.code, "resource_not_offered");
  EXPECT_NE(h.message.find("as nvidia.com/gpu"), std::string::npos) << h.message;
  EXPECT_NE(h.text.find("14 such slices"), std::string::npos) << h.text;
  EXPECT_EQ(HintOf(r, "wants-many").code, "exceeds_node_max");  // 20 > 14 on one node
  // Accounting: each slice is 1/7 of its card. Card 0: s-0 and s-1 hold one slice each
  // (allocation = memory = 1/7; usage 1/7 × 0.5 and 1/7 × 0.25), 5 slices idle. Card 1: s-1
  // (0.25) and s-2 (0.75).
  const auto s = Shares("attr-mig-single");
  ExpectCard(s, "mig-single-1/0",
             {{"ml/s-0", {1.0 / 7, 1.0 / 7, 0.5 / 7}},
              {"ml/s-1", {1.0 / 7, 1.0 / 7, 0.25 / 7}},
              {"idle", {5.0 / 7, 5.0 / 7, 1 - 0.75 / 7}}});
  ExpectCard(s, "mig-single-1/1",
             {{"ml/s-1", {1.0 / 7, 1.0 / 7, 0.25 / 7}},
              {"web/s-2", {1.0 / 7, 1.0 / 7, 0.75 / 7}},
              {"idle", {5.0 / 7, 5.0 / 7, 1 - 1.0 / 7}}});
}

// ---- GKE partitions ---------------------------------------------------------------------------
// gke-part-1: 1 physical A100 80GB cut into two 3g.40gb slices, nvidia.com/gpu 2 (capacity =
// allocatable = 2 devices), requested 1 (p-0). The exporter names neither model nor profile: the
// model is gke-accelerator's "nvidia-a100-80gb" (G = 7), the profile the partition label's. The
// card draws 300 W; Σg = 6 so each slice 150 W; GPU-equivalents 3/7 each (a partly partitioned
// card adds up to 6/7). p-0: 150 W, 3/7, mig. Node 300 W, unattributed 150 W.
TEST(PlatformShapes, GkePartitionUnitsAreSlicesOfTheLabelsProfile) {
  ShapeRun r = Load("attr-gke-partition");
  ExpectPod(r, "ml", "p-0", 150, 3.0 / 7, Sharing::kMig, 1);
  ExpectNodePower(r, "gke-part-1", 300, 150);
  const attribution::Device& d = DeviceOf(r, "gke-part-1", "0", "1");
  EXPECT_EQ(d.model, "nvidia-a100-80gb");
  EXPECT_EQ(d.mig_profile, "3g.40gb");
  ExpectNodeDevices(r, "gke-part-1", 2, 2, 1, 2);
  EXPECT_EQ(HintOf(r, "p-big").code, "exceeds_node_max");  // 3 > 2
  // Accounting: p-0 holds 3/7 of the card on allocation and memory, 3/7 × 0.6 on usage.
  ExpectCard(Shares("attr-gke-partition"), "gke-part-1/0",
             {{"ml/p-0", {3.0 / 7, 3.0 / 7, 1.8 / 7}}, {"idle", {4.0 / 7, 4.0 / 7, 1 - 1.8 / 7}}});
}

// ---- MPS --------------------------------------------------------------------------------------
// mps-1: nvidia.com/gpu 8 with replicas=4: 2 physical L40S (capacity = allocatable = 2 devices),
// requested 0 devices; replicas m-a 1, m-b 2, m-c 1. GPU 0 (200 W): m-a and m-b with lines
// repeating the device value: even split, 100 W and 0.5 each; GPU 1 (120 W): m-c alone, still
// mps: 120 W, 1. Node 320 W, unattributed 0.
TEST(PlatformShapes, MpsReplicasAreNeverDevices) {
  ShapeRun r = Load("attr-mps");
  ExpectPod(r, "chat", "m-a", 100, 0.5, Sharing::kMps, 1);
  ExpectPod(r, "chat", "m-b", 100, 0.5, Sharing::kMps, 1);
  ExpectPod(r, "etl", "m-c", 120, 1, Sharing::kMps, 1);
  ExpectNodePower(r, "mps-1", 320, 0);
  ExpectNodeDevices(r, "mps-1", 2, 2, 0, 2);
  EXPECT_TRUE(RequestOf(r, "chat", "m-b").requested.empty());
  EXPECT_EQ(RequestOf(r, "chat", "m-b").replicas,
            (allocation::ResourceCounts{{"nvidia.com/gpu", 2}}));
  // Accounting (r = 4): GPU 0 m-a 1/4, m-b 2/4, idle 1/4 on allocation; memory split as power
  // (0.5 each); usage 0.7 split by equal memory: 0.35 each, idle 0.3. GPU 1: m-c 1/4, memory 1,
  // usage 0.3.
  const auto s = Shares("attr-mps");
  ExpectCard(
      s, "mps-1/0",
      {{"chat/m-a", {0.25, 0.5, 0.35}}, {"chat/m-b", {0.5, 0.5, 0.35}}, {"idle", {0.25, 0, 0.3}}});
  ExpectCard(s, "mps-1/1", {{"etl/m-c", {0.25, 1, 0.3}}, {"idle", {0.75, 0, 0.7}}});
}

// ---- GKE time-sharing and MPS -------------------------------------------------------------------
// gke-ts-1: nvidia.com/gpu 6, 3 clients per GPU: 2 physical L4s (capacity = allocatable = 2),
// requested 0, 1 replica each for g-0, g-1, g-2. GPU 0 (60 W, 23034 MiB) has per-pod FB_USED 6000,
// 3000, 2000 MiB: power and GPU-equivalents by share of the total, time_sliced. GPU 1 (16 W) idle.
// Node 76 W, unattributed 76 − 60 × 11000/23034. gke-mps-1: nvidia.com/gpu 2 with 2 clients: 1
// GPU (50 W) shared by q-0 and q-1 through MPS, even split: 25 W and 0.5 each.
TEST(PlatformShapes, GkeSharingCountsClientsAsReplicas) {
  ShapeRun r = Load("attr-gke-sharing");
  const double total = 23034;
  ExpectPod(r, "chat", "g-0", 60 * 6000 / total, 6000 / total, Sharing::kTimeSliced, 1);
  ExpectPod(r, "chat", "g-1", 60 * 3000 / total, 3000 / total, Sharing::kTimeSliced, 1);
  ExpectPod(r, "etl", "g-2", 60 * 2000 / total, 2000 / total, Sharing::kTimeSliced, 1);
  ExpectNodePower(r, "gke-ts-1", 76, 76 - 60 * 11000 / total);
  EXPECT_EQ(DeviceOf(r, "gke-ts-1", "0", std::nullopt).model, "nvidia-l4");
  ExpectNodeDevices(r, "gke-ts-1", 2, 2, 0, 2);
  EXPECT_EQ(RequestOf(r, "etl", "g-2").replicas,
            (allocation::ResourceCounts{{"nvidia.com/gpu", 1}}));
  ExpectPod(r, "chat", "q-0", 25, 0.5, Sharing::kMps, 1);
  ExpectPod(r, "chat", "q-1", 25, 0.5, Sharing::kMps, 1);
  ExpectNodePower(r, "gke-mps-1", 50, 0);
  ExpectNodeDevices(r, "gke-mps-1", 1, 1, 0, 1);
  // Accounting: gke-ts-1 GPU 0, r = 3: 1/3 each on allocation; memory 6000, 3000, 2000 of 23034;
  // usage 0.4 (the max line) split 6:3:2. gke-mps-1 GPU 0, r = 2: 1/2 each; usage 0.55 evenly.
  const auto s = Shares("attr-gke-sharing");
  ExpectCard(s, "gke-ts-1/0",
             {{"chat/g-0", {1.0 / 3, 6000 / total, 0.4 * 6 / 11}},
              {"chat/g-1", {1.0 / 3, 3000 / total, 0.4 * 3 / 11}},
              {"etl/g-2", {1.0 / 3, 2000 / total, 0.4 * 2 / 11}},
              {"idle", {0, 1 - 11000 / total, 0.6}}});
  ExpectCard(s, "gke-ts-1/1", {{"idle", {1, 1, 1}}});
  ExpectCard(
      s, "gke-mps-1/0",
      {{"chat/q-0", {0.5, 0.5, 0.275}}, {"chat/q-1", {0.5, 0.5, 0.275}}, {"idle", {0, 0, 0.45}}});
}

// ---- HAMi ---------------------------------------------------------------------------------------
// hami-1: 2 L4s registered with 10 slots each: nvidia.com/gpu 20 = 2 physical GPUs (capacity =
// allocatable = 2), requested 0 devices; slots (replicas) h-0 1, h-1 1, h-2 2 (two containers),
// h-bad 1. dcgm has no pod labels: pods come from HAMi's annotation. GPU 0 (60 W, 23034 MiB):
// h-0 11517 MiB, no core limit → 0.5 → 30 W; h-1 4096 MiB and 30 % cores → max(0.178, 0.3) = 0.3
// → 18 W. GPU 1 (40 W): h-2 two containers of max(2048/23034, 0.25) = 0.25 → 0.5 → 20 W. h-bad's
// annotation is malformed: nothing attributed. Node 100 W, unattributed 32 W.
TEST(PlatformShapes, HamiPodsHoldTheirFractionOfTheCard) {
  ShapeRun r = Load("attr-hami");
  ExpectPod(r, "ml", "h-0", 30, 0.5, Sharing::kHami, 1);
  ExpectPod(r, "ml", "h-1", 18, 0.3, Sharing::kHami, 1);
  ExpectPod(r, "web", "h-2", 20, 0.5, Sharing::kHami, 1);
  for (const attribution::Pod& p : r.out.attribution.pods) EXPECT_NE(p.id.name, "h-bad");
  ExpectNodePower(r, "hami-1", 100, 32);
  ExpectNodeDevices(r, "hami-1", 2, 2, 0, 2);
  EXPECT_EQ(RequestOf(r, "web", "h-2").replicas,
            (allocation::ResourceCounts{{"nvidia.com/gpu", 2}}));
  EXPECT_EQ(RequestOf(r, "web", "h-bad").replicas,
            (allocation::ResourceCounts{{"nvidia.com/gpu", 1}}));
  // Accounting: allocation and memory are the held fractions (HAMi's memory figures are not
  // read: memory is split as power is); usage 0.8 split evenly on GPU 0 (no per-pod memory).
  const auto s = Shares("attr-hami");
  ExpectCard(s, "hami-1/0",
             {{"ml/h-0", {0.5, 0.5, 0.4}}, {"ml/h-1", {0.3, 0.3, 0.4}}, {"idle", {0.2, 0.2, 0.2}}});
  ExpectCard(s, "hami-1/1", {{"web/h-2", {0.5, 0.5, 0.35}}, {"idle", {0.5, 0.5, 0.65}}});
}

// attr-hami-monitor: attr-hami's node with HAMi's vGPU monitor scraped (v2.10.0 names plus the
// legacy ones of --legacy-metrics, each container read once). The monitor is a per-pod memory
// source like a per-process exporter: hami-1 is a process-tier node, pods from the monitor, power
// by memory used ÷ the card's FB_TOTAL (23034 MiB, from dcgm), sharing "hami". GPU 0 (60 W):
// h-0 9000 MiB → 9000/23034 = 0.390727 → 23.4436 W; h-1 3000 MiB → 0.130242 → 7.8145 W. GPU 1
// (40 W): h-2's containers 1024 + 1500 = 2524 MiB → 0.109577 → 4.3831 W. Node 100 W, unattributed
// 100 − 35.6412 = 64.3588 W. Utilisation: the busiest container (h-0 0.55, h-2 max(0.10, 0.12)).
// The scheduler view is attr-hami's: 2 physical GPUs, no device requested.
TEST(PlatformShapes, HamiMonitorIsAPerPodMemorySource) {
  ShapeRun r = Load("attr-hami-monitor");
  const double mib = 1048576;
  ExpectPod(r, "ml", "h-0", 60 * 9000 / 23034.0, 9000 / 23034.0, Sharing::kHami, 1);
  ExpectPod(r, "ml", "h-1", 60 * 3000 / 23034.0, 3000 / 23034.0, Sharing::kHami, 1);
  ExpectPod(r, "web", "h-2", 40 * 2524 / 23034.0, 2524 / 23034.0, Sharing::kHami, 1);
  EXPECT_EQ(PodOf(r, "ml", "h-0").method, attribution::Method::kProcess);
  EXPECT_DOUBLE_EQ(*PodOf(r, "ml", "h-0").memory_used_bytes, 9000 * mib);
  EXPECT_DOUBLE_EQ(*PodOf(r, "web", "h-2").memory_used_bytes, 2524 * mib);
  EXPECT_DOUBLE_EQ(*PodOf(r, "ml", "h-0").utilization, 0.55);
  EXPECT_DOUBLE_EQ(*PodOf(r, "web", "h-2").utilization, 0.12);
  ExpectNodePower(r, "hami-1", 100, 100 - (60 * 12000 + 40 * 2524) / 23034.0);
  ExpectNodeDevices(r, "hami-1", 2, 2, 0, 2);
}

// An unrecognised shape: counted as its resources say but never as more GPUs than the cards seen,
// and named for the status page.
TEST(PlatformShapes, UnrecognisedShapeIsCappedAtTheCardsSeenAndNamed) {
  ShapeRun r = Load("attr-gke-sharing");
  kube::Node& n = r.c.objects.nodes.at("gke-ts-1");
  n.labels["cloud.google.com/gke-max-shared-clients-per-gpu"] = "three";
  r.out = RunCase(r.c);
  // nvidia.com/gpu 6 but 2 cards seen: capacity 2. With r unknown each pod's unit is a device as
  // the resource says (3 requested).
  ExpectNodeDevices(r, "gke-ts-1", 2, 2, 3, 2);
  ASSERT_EQ(r.out.allocation.shape_notes.size(), 1u);
  EXPECT_EQ(r.out.allocation.shape_notes[0],
            "node gke-ts-1: unrecognised sharing labels: "
            "cloud.google.com/gke-max-shared-clients-per-gpu=three");
}

}  // namespace
}  // namespace gpuattr::testing
