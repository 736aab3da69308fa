// Allocation (docs/design.md#allocation): effective requests, GPU node totals and free per
// resource, DRA devices and claims, and the hint of every pending GPU pod. Pure: objects built in
// code.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "gpuattr/allocation/allocation.h"
#include "gpuattr/allocation/resources.h"
#include "gpuattr/metrics/allocation.h"
#include "gpuattr/report/status_page.h"
#include "support/family_collector.h"
#include "support/snapshots.h"

namespace gpuattr::allocation {
namespace {

kube::Container Wants(kube::ResourceList limits, std::string restart_policy = "") {
  kube::Container c;
  c.name = "c";
  c.limits = std::move(limits);
  c.restart_policy = std::move(restart_policy);
  return c;
}

kube::Pod MakePod(std::string ns, std::string name, std::string node, std::string phase,
                  kube::ResourceList limits) {
  kube::Pod p;
  p.namespace_ = std::move(ns);
  p.name = std::move(name);
  p.node_name = std::move(node);
  p.phase = std::move(phase);
  p.creation_unix = 1000;
  if (!limits.empty()) p.containers.push_back(Wants(std::move(limits)));
  return p;
}

kube::Pod Running(std::string ns, std::string name, std::string node, kube::ResourceList limits) {
  return MakePod(std::move(ns), std::move(name), std::move(node), "Running", std::move(limits));
}

kube::Pod Unscheduled(std::string ns, std::string name, kube::ResourceList limits) {
  return MakePod(std::move(ns), std::move(name), "", "Pending", std::move(limits));
}

kube::Node MakeNode(std::string name, kube::ResourceList resources) {
  kube::Node n;
  n.name = std::move(name);
  n.capacity = resources;
  n.allocatable = std::move(resources);
  return n;
}

struct World {
  kube::ClusterObjects objects;
  attribution::Attribution attribution;
  double now = 5000;

  void Add(kube::Pod p) { objects.pods[p.Key()] = std::move(p); }
  void Add(kube::Node n) { objects.nodes[n.name] = std::move(n); }
  void Idle(std::string ns, std::string name) {
    attribution::Pod p;
    p.id = {std::move(ns), std::move(name)};
    p.idle = true;
    attribution.pods.push_back(std::move(p));
  }
  Allocation Run() const { return Allocate(AllocationInput{"c1", objects, attribution, now}); }
};

const PendingPod* FindPending(const Allocation& a, const std::string& ns, const std::string& name) {
  for (const PendingPod& p : a.pending)
    if (p.pod.namespace_ == ns && p.pod.name == name) return &p;
  return nullptr;
}

const PodRequest* FindPod(const Allocation& a, const std::string& ns, const std::string& name) {
  for (const PodRequest& p : a.pods)
    if (p.pod.namespace_ == ns && p.pod.name == name) return &p;
  return nullptr;
}

const NodeAllocation* FindNode(const Allocation& a, const std::string& name) {
  for (const NodeAllocation& n : a.nodes)
    if (n.node == name) return &n;
  return nullptr;
}

const NodeResource* FindResource(const Allocation& a, const std::string& node,
                                 const std::string& resource) {
  for (const NodeResource& r : a.node_resources)
    if (r.node == node && r.resource == resource) return &r;
  return nullptr;
}

// ---- resources -------------------------------------------------------------------------------

TEST(AllocationResources, DevicesAreGpuMigAndGpuDotButNeverShared) {
  EXPECT_TRUE(IsDeviceResource("nvidia.com/gpu"));
  EXPECT_TRUE(IsDeviceResource("nvidia.com/mig-1g.10gb"));
  EXPECT_TRUE(IsDeviceResource("nvidia.com/gpu.a100"));
  EXPECT_FALSE(IsDeviceResource("nvidia.com/gpu.shared"));
  EXPECT_FALSE(IsDeviceResource("nvidia.com/mig-1g.10gb.shared"));
  EXPECT_FALSE(IsDeviceResource("nvidia.com/hostdev"));
  EXPECT_FALSE(IsDeviceResource("amd.com/gpu"));
  EXPECT_TRUE(IsReplicaResource("nvidia.com/gpu.shared"));
  EXPECT_TRUE(IsReplicaResource("nvidia.com/mig-1g.10gb.shared"));
  EXPECT_FALSE(IsReplicaResource("nvidia.com/gpu"));
  EXPECT_EQ(ShortResourceName("nvidia.com/mig-2g.20gb"), "mig-2g.20gb");
  EXPECT_EQ(ShortResourceName("gpu.nvidia.com/gpu"), "gpu.nvidia.com/gpu");
}

TEST(AllocationRequests, AppContainersAddUpAndLimitsWinOverRequests) {
  kube::Pod p = Running("ml", "p", "n", {{"nvidia.com/gpu", 2}});
  kube::Container only_request;
  only_request.requests["nvidia.com/gpu"] = 1;
  p.containers.push_back(only_request);
  kube::Container both;  // request 0 is not what the scheduler uses: the limit is
  both.requests["nvidia.com/mig-1g.10gb"] = 0;
  both.limits["nvidia.com/mig-1g.10gb"] = 1;
  both.limits["example.com/fpga"] = 3;  // not a GPU resource
  p.containers.push_back(both);
  ResourceCounts r = EffectiveRequests(p);
  EXPECT_EQ(r, (ResourceCounts{{"nvidia.com/gpu", 3}, {"nvidia.com/mig-1g.10gb", 1}}));
}

TEST(AllocationRequests, InitContainerPeakWinsWhenLargerThanTheApp) {
  kube::Pod p = Running("ml", "p", "n", {{"nvidia.com/gpu", 1}});
  p.init_containers.push_back(Wants({{"nvidia.com/gpu", 4}}));
  p.init_containers.push_back(Wants({{"nvidia.com/gpu", 2}}));
  EXPECT_EQ(EffectiveRequests(p), (ResourceCounts{{"nvidia.com/gpu", 4}}));
}

TEST(AllocationRequests, SidecarsAddToTheAppAndToLaterInitContainers) {
  // sidecar(1), then init(2) runs with it (3), then sidecar(1): app 2 + sidecars 2 = 4 wins.
  kube::Pod p = Running("ml", "p", "n", {{"nvidia.com/gpu", 2}});
  p.init_containers.push_back(Wants({{"nvidia.com/gpu", 1}}, "Always"));
  p.init_containers.push_back(Wants({{"nvidia.com/gpu", 2}}));
  p.init_containers.push_back(Wants({{"nvidia.com/gpu", 1}}, "Always"));
  EXPECT_EQ(EffectiveRequests(p), (ResourceCounts{{"nvidia.com/gpu", 4}}));

  // A big init container after a sidecar: 5 + 1 = 6 beats app 1 + sidecar 1.
  kube::Pod q = Running("ml", "q", "n", {{"nvidia.com/gpu", 1}});
  q.init_containers.push_back(Wants({{"nvidia.com/gpu", 1}}, "Always"));
  q.init_containers.push_back(Wants({{"nvidia.com/gpu", 5}}));
  EXPECT_EQ(EffectiveRequests(q), (ResourceCounts{{"nvidia.com/gpu", 6}}));

  // An init container before the sidecar does not run with it.
  kube::Pod r = Running("ml", "r", "n", {});
  r.init_containers.push_back(Wants({{"nvidia.com/gpu", 3}}));
  r.init_containers.push_back(Wants({{"nvidia.com/gpu", 1}}, "Always"));
  EXPECT_EQ(EffectiveRequests(r), (ResourceCounts{{"nvidia.com/gpu", 3}}));
}

// ---- nodes ------------------------------------------------------------------------------------

// The mixed-MIG A100 node of docs/design.md#node-shapes: 1 whole GPU, 46 1g slices (with a .shared
// resource at 0) and one 3g.
World MixedMigNode() {
  World w;
  w.Add(MakeNode("a100-mixed", {{"nvidia.com/gpu", 1},
                                {"nvidia.com/mig-1g.10gb", 46},
                                {"nvidia.com/mig-1g.10gb.shared", 0},
                                {"nvidia.com/mig-3g.40gb", 1}}));
  for (int i = 0; i < 28; ++i)
    w.Add(
        Running("ml", "slice-" + std::to_string(i), "a100-mixed", {{"nvidia.com/mig-1g.10gb", 1}}));
  w.Add(Running("ml", "big-slice", "a100-mixed", {{"nvidia.com/mig-3g.40gb", 1}}));
  return w;
}

TEST(AllocationNodes, MixedMigNodeCountsDevicesNotReplicas) {
  Allocation a = MixedMigNode().Run();
  const NodeAllocation* n = FindNode(a, "a100-mixed");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->capacity, 48);
  EXPECT_EQ(n->allocatable, 48);
  EXPECT_EQ(n->unhealthy, 0);
  EXPECT_EQ(n->requested, 29);
  ASSERT_NE(FindResource(a, "a100-mixed", "nvidia.com/mig-1g.10gb"), nullptr);
  EXPECT_EQ(FindResource(a, "a100-mixed", "nvidia.com/mig-1g.10gb")->free, 18);
  EXPECT_EQ(FindResource(a, "a100-mixed", "nvidia.com/mig-1g.10gb")->requested, 28);
  EXPECT_EQ(FindResource(a, "a100-mixed", "nvidia.com/mig-3g.40gb")->free, 0);
  EXPECT_EQ(FindResource(a, "a100-mixed", "nvidia.com/gpu")->free, 1);
  const NodeResource* shared = FindResource(a, "a100-mixed", "nvidia.com/mig-1g.10gb.shared");
  ASSERT_NE(shared, nullptr);  // per resource, replicas are shown (here: none offered)
  EXPECT_EQ(shared->allocatable, 0);
  ASSERT_EQ(a.namespaces.size(), 1u);
  EXPECT_EQ(a.namespaces[0].requested,
            (ResourceCounts{{"nvidia.com/mig-1g.10gb", 28}, {"nvidia.com/mig-3g.40gb", 1}}));
  EXPECT_EQ(a.namespaces[0].pending_pods, 0u);
  EXPECT_TRUE(a.pending.empty());
}

TEST(AllocationNodes, UnhealthyIsCapacityMinusAllocatable) {
  World w;
  kube::Node n = MakeNode("n1", {{"nvidia.com/gpu", 8}});
  n.allocatable["nvidia.com/gpu"] = 6;
  w.Add(n);
  Allocation a = w.Run();
  ASSERT_EQ(a.nodes.size(), 1u);
  EXPECT_EQ(a.nodes[0].capacity, 8);
  EXPECT_EQ(a.nodes[0].allocatable, 6);
  EXPECT_EQ(a.nodes[0].unhealthy, 2);
}

TEST(AllocationNodes, GpuNodesAreThoseAdvertisingNvidiaEvenAtZeroOrSeenByAnExporter) {
  World w;
  w.Add(MakeNode("cpu-1", {{"example.com/fpga", 1}}));
  w.Add(MakeNode("drained", {{"nvidia.com/gpu", 0}}));
  attribution::Device seen_busy;
  seen_busy.id = {"ghost", "0", std::nullopt};
  seen_busy.utilization = 0.5;
  attribution::Device seen_quiet;
  seen_quiet.id = {"ghost", "1", std::nullopt};
  seen_quiet.utilization = 0.01;
  attribution::Device with_pod;
  with_pod.id = {"ghost", "2", std::nullopt};
  w.attribution.devices = {seen_busy, seen_quiet, with_pod};
  attribution::PodDevice link;
  link.pod = {"ml", "x"};
  link.device = 2;
  w.attribution.pod_devices.push_back(link);
  Allocation a = w.Run();
  ASSERT_EQ(a.nodes.size(), 2u);
  EXPECT_EQ(a.nodes[0].node, "drained");
  EXPECT_EQ(a.nodes[0].capacity, 0);
  EXPECT_EQ(a.nodes[0].seen, 0u);
  // A node only an exporter knows: seen and busy, but no Node object, so capacity is unknown.
  EXPECT_EQ(a.nodes[1].node, "ghost");
  EXPECT_EQ(a.nodes[1].seen, 3u);
  EXPECT_EQ(a.nodes[1].busy, 2u);
  EXPECT_FALSE(a.nodes[1].capacity.has_value());
  EXPECT_EQ(FindResource(a, "ghost", "nvidia.com/gpu"), nullptr);
}

TEST(AllocationPods, BoundPendingPodCountsAsRequestedNotPending) {
  World w;
  w.Add(MakeNode("n1", {{"nvidia.com/gpu", 4}}));
  w.Add(MakePod("ml", "bound", "n1", "Pending", {{"nvidia.com/gpu", 2}}));
  w.Add(MakePod("ml", "done", "n1", "Succeeded", {{"nvidia.com/gpu", 1}}));
  w.Add(Running("ml", "cpu-only", "n1", {}));
  Allocation a = w.Run();
  EXPECT_TRUE(a.pending.empty());
  ASSERT_EQ(a.pods.size(), 1u);
  EXPECT_EQ(a.pods[0].pod.name, "bound");
  EXPECT_EQ(a.pods[0].requested, (ResourceCounts{{"nvidia.com/gpu", 2}}));
  EXPECT_EQ(a.nodes[0].requested, 2);
  EXPECT_EQ(FindResource(a, "n1", "nvidia.com/gpu")->free, 2);
  ASSERT_EQ(a.namespaces.size(), 1u);
  EXPECT_EQ(a.namespaces[0].pending_pods, 0u);
}

TEST(AllocationPods, SharedReplicaPodIsAGpuPodUnderItsReplicaResourceButNoDevice) {
  World w;
  w.Add(MakeNode("ts", {{"nvidia.com/gpu", 0}, {"nvidia.com/gpu.shared", 4}}));
  w.Add(Running("lab", "nb", "ts", {{"nvidia.com/gpu.shared", 1}}));
  w.Add(Unscheduled("lab", "nb2", {{"nvidia.com/gpu.shared", 1}}));
  Allocation a = w.Run();
  const PodRequest* p = FindPod(a, "lab", "nb");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->requested.empty());  // replicas are never devices
  EXPECT_EQ(p->replicas, (ResourceCounts{{"nvidia.com/gpu.shared", 1}}));
  EXPECT_EQ(a.namespaces[0].replicas, (ResourceCounts{{"nvidia.com/gpu.shared", 1}}));
  EXPECT_EQ(a.nodes[0].capacity, 0);  // replicas, and r unknown without the replicas label
  EXPECT_EQ(a.nodes[0].requested, 0);
  EXPECT_EQ(FindResource(a, "ts", "nvidia.com/gpu.shared")->free, 3);
  ASSERT_NE(FindPending(a, "lab", "nb2"), nullptr);
  EXPECT_EQ(a.namespaces[0].pending_pods, 1u);
}

// A time-sliced node counts replicas in its GPU resource whether it was renamed to `.shared` or
// not: its device totals are physical GPUs (replicas ÷ r), and replica requests are replicas.
TEST(AllocationNodes, TimeSlicedNodeCountsPhysicalGpusRenamedOrNot) {
  World w;
  kube::Node plain = MakeNode("plain", {{"nvidia.com/gpu", 16}});
  plain.labels["nvidia.com/gpu.replicas"] = "4";
  plain.allocatable["nvidia.com/gpu"] = 12;  // one GPU's 4 replicas withdrawn
  w.Add(plain);
  kube::Node renamed = MakeNode("renamed", {{"nvidia.com/gpu.shared", 16}});
  renamed.labels["nvidia.com/gpu.replicas"] = "4";
  w.Add(renamed);
  kube::Node mig = MakeNode("mig-ts", {{"nvidia.com/mig-1g.10gb.shared", 14},
                                       {"nvidia.com/mig-3g.40gb", 1},
                                       {"nvidia.com/mig-3g.40gb.shared", 0}});
  mig.labels["nvidia.com/mig-1g.10gb.replicas"] = "2";
  w.Add(mig);
  w.Add(Running("ml", "three", "plain", {{"nvidia.com/gpu", 3}}));
  w.Add(Running("ml", "one", "renamed", {{"nvidia.com/gpu.shared", 1}}));
  w.Add(Running("ml", "slice", "mig-ts", {{"nvidia.com/mig-3g.40gb", 1}}));
  Allocation a = w.Run();
  const NodeAllocation* p = FindNode(a, "plain");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->capacity, 4);
  EXPECT_EQ(p->allocatable, 3);
  EXPECT_EQ(p->unhealthy, 1);
  EXPECT_EQ(p->requested, 0);                                           // 3 replicas are no device
  EXPECT_EQ(FindResource(a, "plain", "nvidia.com/gpu")->requested, 3);  // per resource: replicas
  EXPECT_EQ(FindResource(a, "plain", "nvidia.com/gpu")->free, 9);
  EXPECT_EQ(FindNode(a, "renamed")->capacity, 4);
  EXPECT_EQ(FindNode(a, "mig-ts")->capacity, 8);  // 14 / 2 + one 3g slice
  EXPECT_EQ(FindNode(a, "mig-ts")->requested, 1);
  EXPECT_EQ(FindPod(a, "ml", "three")->replicas, (ResourceCounts{{"nvidia.com/gpu", 3}}));
  EXPECT_TRUE(FindPod(a, "ml", "three")->requested.empty());
  EXPECT_EQ(FindPod(a, "ml", "slice")->requested, (ResourceCounts{{"nvidia.com/mig-3g.40gb", 1}}));
  ASSERT_EQ(a.namespaces.size(), 1u);
  EXPECT_EQ(a.namespaces[0].requested, (ResourceCounts{{"nvidia.com/mig-3g.40gb", 1}}));
  EXPECT_EQ(a.namespaces[0].replicas,
            (ResourceCounts{{"nvidia.com/gpu", 3}, {"nvidia.com/gpu.shared", 1}}));

  // The same request on a node that does not time-slice is devices.
  EXPECT_FALSE(CountsReplicas(nullptr, "nvidia.com/gpu"));
  EXPECT_TRUE(CountsReplicas(nullptr, "nvidia.com/gpu.shared"));
  EXPECT_TRUE(CountsReplicas(&plain, "nvidia.com/gpu"));
  EXPECT_EQ(PhysicalDevices(plain, "nvidia.com/gpu", 16), 4);
  EXPECT_EQ(PhysicalDevices(MakeNode("x", {}), "nvidia.com/gpu.shared", 16), 0);
  EXPECT_EQ(PhysicalDevices(MakeNode("x", {}), "nvidia.com/gpu", 2), 2);
  EXPECT_EQ(PhysicalDevices(plain, "example.com/fpga", 2), 0);
}

// ---- pending hints ----------------------------------------------------------------------------

TEST(AllocationHints, ResourceNotOfferedListsOffersLargestFirstWithoutShared) {
  World w = MixedMigNode();
  w.Add(Unscheduled("ml", "wants-2g", {{"nvidia.com/mig-2g.20gb", 1}}));
  Allocation a = w.Run();
  const PendingPod* p = FindPending(a, "ml", "wants-2g");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->hint.code, "resource_not_offered");
  EXPECT_EQ(p->hint.resource, "nvidia.com/mig-2g.20gb");
  EXPECT_EQ(p->hint.text,
            "No node offers mig-2g.20gb. The cluster offers: mig-1g.10gb \u00d746, gpu \u00d71, "
            "mig-3g.40gb \u00d71.");
  EXPECT_EQ(p->hint.text.find(".shared"), std::string::npos);
  EXPECT_EQ(p->hint.message, "No node offers mig-2g.20gb.");  // the label: no counts
  ASSERT_TRUE(p->age_seconds.has_value());
  EXPECT_DOUBLE_EQ(*p->age_seconds, 4000);
  EXPECT_EQ(a.namespaces[0].pending_pods, 1u);
}

TEST(AllocationHints, WholeGpuOnAMigOnlyClusterIsMigPartitioned) {
  World w;
  w.Add(MakeNode("mig-only", {{"nvidia.com/mig-1g.10gb", 14}, {"nvidia.com/mig-3g.40gb", 2}}));
  w.Add(Unscheduled("ml", "train", {{"nvidia.com/gpu", 1}}));
  Allocation a = w.Run();
  ASSERT_EQ(a.pending.size(), 1u);
  EXPECT_EQ(a.pending[0].hint.code, "mig_partitioned");
  EXPECT_EQ(a.pending[0].hint.resource, "nvidia.com/gpu");
  EXPECT_NE(a.pending[0].hint.text.find("request a slice such as nvidia.com/mig-1g.10gb"),
            std::string::npos)
      << a.pending[0].hint.text;
  EXPECT_EQ(a.pending[0].hint.message,
            "No node offers whole GPUs (nvidia.com/gpu): the GPUs are MIG-partitioned; request a "
            "MIG slice (nvidia.com/mig-<profile>).");
}

TEST(AllocationHints, MoreDevicesThanAnyNodeHasExceedsNodeMax) {
  World w;
  w.Add(MakeNode("a", {{"nvidia.com/gpu", 4}}));
  w.Add(MakeNode("b", {{"nvidia.com/gpu", 2}}));
  w.Add(Unscheduled("ml", "huge", {{"nvidia.com/gpu", 16}}));
  Allocation a = w.Run();
  ASSERT_EQ(a.pending.size(), 1u);
  EXPECT_EQ(a.pending[0].hint.code, "exceeds_node_max");
  EXPECT_EQ(a.pending[0].hint.text, "Needs 16 gpu on one node; the most any node has is 4.");
  EXPECT_EQ(a.pending[0].hint.message, "Needs more gpu on one node than any node has.");
}

TEST(AllocationHints, WaitingCountsIdlePodsHoldingTheSameResource) {
  World w;
  w.Add(MakeNode("a", {{"nvidia.com/gpu", 2}}));
  w.Add(MakeNode("b", {{"nvidia.com/gpu", 1}, {"nvidia.com/mig-1g.10gb", 7}}));
  w.Add(Running("ml", "idle-1", "a", {{"nvidia.com/gpu", 1}}));
  w.Add(Running("lab", "idle-2", "a", {{"nvidia.com/gpu", 1}}));
  w.Add(Running("ml", "busy", "b", {{"nvidia.com/gpu", 1}}));
  w.Add(Running("ml", "idle-slice", "b", {{"nvidia.com/mig-1g.10gb", 1}}));
  w.Idle("ml", "idle-1");
  w.Idle("lab", "idle-2");
  w.Idle("ml", "idle-slice");  // holds another resource: not reclaimable for a whole GPU
  w.Add(Unscheduled("ml", "next", {{"nvidia.com/gpu", 1}}));
  Allocation a = w.Run();
  const PendingPod* p = FindPending(a, "ml", "next");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->hint.code, "waiting_for_free_device");
  EXPECT_EQ(p->hint.resource, "nvidia.com/gpu");
  EXPECT_EQ(p->hint.text,
            "Waiting for 1 free gpu on one node; 2 idle pods hold gpu (reclaimable capacity).");

  w.attribution.pods.clear();
  Allocation b = w.Run();
  EXPECT_EQ(FindPending(b, "ml", "next")->hint.text,
            "Waiting for 1 free gpu on one node; no idle pod holds gpu.");
  // The label stays the same while the number of idle holders changes.
  EXPECT_EQ(p->hint.message, "Waiting for free gpu on one node.");
  EXPECT_EQ(FindPending(b, "ml", "next")->hint.message, p->hint.message);
}

TEST(AllocationHints, PendingPodWithoutGpuRequestIsNotAGpuPod) {
  World w;
  w.Add(MakeNode("a", {{"nvidia.com/gpu", 2}}));
  w.Add(Unscheduled("web", "frontend", {}));
  Allocation a = w.Run();
  EXPECT_TRUE(a.pending.empty());
  EXPECT_TRUE(a.namespaces.empty());
}

// ---- DRA --------------------------------------------------------------------------------------

kube::DraDevice DraGpu(std::string name) {
  kube::DraDevice d;
  d.name = std::move(name);
  d.type = "gpu";
  return d;
}

kube::DraDevice DraMig(std::string name, std::string profile) {
  kube::DraDevice d;
  d.name = std::move(name);
  d.type = "mig";
  d.profile = std::move(profile);
  return d;
}

kube::ResourceClaim Claim(std::string ns, std::string name, std::string device_class,
                          int64_t count) {
  kube::ResourceClaim c;
  c.namespace_ = std::move(ns);
  c.name = std::move(name);
  c.requests.push_back(kube::DraRequest{"r", std::move(device_class), "ExactCount", count});
  return c;
}

void AddSlice(World& w, std::string node, std::vector<kube::DraDevice> devices) {
  kube::ResourceSlice s;
  s.name = node + "-slice";
  s.driver = "gpu.nvidia.com";
  s.node_name = node;
  s.pool = node;
  s.devices = std::move(devices);
  w.objects.resource_slices[s.name] = std::move(s);
}

kube::Pod WithClaim(kube::Pod p, std::string claim_name) {
  p.resource_claims.push_back(kube::PodResourceClaim{"claim", std::move(claim_name)});
  return p;
}

TEST(AllocationDra, NoNodePublishingTheClassTypeIsDraNoDevice) {
  World w;
  w.Add(MakeNode("dgx", {}));
  AddSlice(w, "dgx", {DraGpu("gpu-0"), DraGpu("gpu-1")});
  w.objects.resource_claims["research/c"] = Claim("research", "c", "mig.nvidia.com", 1);
  w.Add(WithClaim(Unscheduled("research", "nb", {}), "c"));
  Allocation a = w.Run();
  ASSERT_EQ(a.pending.size(), 1u);
  EXPECT_EQ(a.pending[0].hint.code, "dra_no_device");
  EXPECT_EQ(a.pending[0].hint.resource, "gpu.nvidia.com/mig");
  EXPECT_EQ(a.pending[0].hint.message,
            "No node publishes a mig device in a DRA ResourceSlice (claim c).");
  EXPECT_EQ(a.pending[0].hint.text, a.pending[0].hint.message);
  EXPECT_EQ(a.pending[0].requested, (ResourceCounts{{"gpu.nvidia.com/mig", 1}}));
}

TEST(AllocationDra, ClaimForMoreThanOneNodeOffersIsDraExceedsNodeMax) {
  World w;
  AddSlice(w, "a", {DraGpu("gpu-0"), DraGpu("gpu-1")});
  AddSlice(w, "b", {DraGpu("gpu-0")});
  w.objects.resource_claims["ml/eight-gpus"] = Claim("ml", "eight-gpus", "gpu.nvidia.com", 8);
  w.Add(WithClaim(Unscheduled("ml", "big-train", {}), "eight-gpus"));
  Allocation a = w.Run();
  ASSERT_EQ(a.pending.size(), 1u);
  EXPECT_EQ(a.pending[0].hint.code, "dra_exceeds_node_max");
  EXPECT_EQ(a.pending[0].hint.text,
            "Needs 8 gpu on one node (claim eight-gpus); the most any node offers is 2.");
  EXPECT_EQ(a.pending[0].hint.message,
            "Needs more gpu on one node than any node offers (claim eight-gpus).");
}

TEST(AllocationDra, ClaimThatFitsWaitsAndNonGpuClaimsAreIgnored) {
  World w;
  w.Add(MakeNode("a", {}));
  AddSlice(w, "a", {DraGpu("gpu-0")});
  w.objects.resource_claims["ml/one"] = Claim("ml", "one", "gpu.nvidia.com", 1);
  w.objects.resource_claims["ml/nic"] = Claim("ml", "nic", "rdma.example.com", 1);
  w.Add(WithClaim(Unscheduled("ml", "fits", {}), "one"));
  w.Add(WithClaim(Unscheduled("ml", "nic-only", {}), "nic"));
  w.Add(WithClaim(Unscheduled("ml", "not-generated", {}), ""));
  Allocation a = w.Run();
  ASSERT_EQ(a.pending.size(), 1u);
  EXPECT_EQ(a.pending[0].pod.name, "fits");
  EXPECT_EQ(a.pending[0].hint.code, "waiting_for_free_device");
  EXPECT_EQ(a.pending[0].hint.resource, "gpu.nvidia.com/gpu");
}

TEST(AllocationDra, SliceDevicesCountInNodeCapacityAndAllocatedResultsAsRequested) {
  World w;
  w.Add(MakeNode("dgx", {}));
  AddSlice(w, "dgx",
           {DraGpu("gpu-0"), DraGpu("gpu-1"), DraMig("gpu-2-mig-0", "3g.40gb"),
            DraMig("gpu-2-mig-1", "3g.40gb")});
  kube::ResourceClaim c = Claim("ml", "pair", "gpu.nvidia.com", 2);
  c.allocated = true;
  c.results = {{"r", "gpu.nvidia.com", "dgx", "gpu-0"}, {"r", "gpu.nvidia.com", "dgx", "gpu-1"}};
  c.reserved_for = {{"pods", "worker-0", ""}, {"pods", "worker-1", ""}};  // a shared claim
  w.objects.resource_claims[c.Key()] = c;
  w.Add(WithClaim(Running("ml", "worker-0", "dgx", {}), "pair"));
  w.Add(WithClaim(Running("ml", "worker-1", "dgx", {}), "pair"));
  Allocation a = w.Run();
  const NodeAllocation* n = FindNode(a, "dgx");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->capacity, 4);
  EXPECT_EQ(n->allocatable, 4);
  EXPECT_EQ(n->requested, 2);  // two devices, however many pods share the claim
  EXPECT_EQ(FindResource(a, "dgx", "gpu.nvidia.com/gpu")->free, 0);
  EXPECT_EQ(FindResource(a, "dgx", "gpu.nvidia.com/mig-3g.40gb")->free, 2);
  ASSERT_NE(FindPod(a, "ml", "worker-1"), nullptr);
  EXPECT_EQ(FindPod(a, "ml", "worker-1")->requested, (ResourceCounts{{"gpu.nvidia.com/gpu", 2}}));
}

// ---- metrics ----------------------------------------------------------------------------------

std::vector<prometheus::MetricFamily> Families(const Allocation& a) {
  model::Snapshot s;
  model::ClusterSnapshot c;
  c.cluster = a.cluster;
  gpuattr::testing::MutableOutput(c).allocation = a;
  s.clusters.push_back(c);
  return metrics::BuildFamilies(s);
}

const prometheus::MetricFamily* Family(const std::vector<prometheus::MetricFamily>& fs,
                                       const std::string& name) {
  for (const auto& f : fs)
    if (f.name == name) return &f;
  return nullptr;
}

std::string Label(const prometheus::ClientMetric& m, const std::string& name) {
  for (const auto& l : m.label)
    if (l.name == name) return l.value;
  return "<absent>";
}

TEST(AllocationPublish, HintSeriesCarriesResourceCodeAndMessage) {
  World w = MixedMigNode();
  w.Add(Unscheduled("ml", "huge", {{"nvidia.com/mig-1g.10gb", 50}}));
  auto fs = Families(w.Run());
  const auto* hint = Family(fs, "gpuattr_pending_pod_hint");
  ASSERT_NE(hint, nullptr);
  ASSERT_EQ(hint->metric.size(), 1u);
  const auto& m = hint->metric[0];
  EXPECT_EQ(Label(m, "cluster"), "c1");
  EXPECT_EQ(Label(m, "namespace"), "ml");
  EXPECT_EQ(Label(m, "pod"), "huge");
  EXPECT_EQ(Label(m, "resource"), "nvidia.com/mig-1g.10gb");
  EXPECT_EQ(Label(m, "hint"), "exceeds_node_max");
  // The label carries no number that may change (the request, the node maximum).
  EXPECT_EQ(Label(m, "message"), "Needs more mig-1g.10gb on one node than any node has.");
  ASSERT_NE(Family(fs, "gpuattr_pending_pod_seconds"), nullptr);
  EXPECT_DOUBLE_EQ(Family(fs, "gpuattr_pending_pod_seconds")->metric[0].gauge.value, 4000);
  const auto* capacity = Family(fs, "gpuattr_node_devices_capacity");
  ASSERT_NE(capacity, nullptr);
  EXPECT_DOUBLE_EQ(capacity->metric[0].gauge.value, 48);
  const auto* pod_requested = Family(fs, "gpuattr_pod_requested_devices");
  ASSERT_NE(pod_requested, nullptr);
  EXPECT_EQ(pod_requested->metric.size(), 29u);
}

// Replicas are published in their own families, never among the devices.
TEST(AllocationPublish, ReplicasHaveTheirOwnFamiliesNeverTheDevicesOnes) {
  World w;
  kube::Node ts = MakeNode("ts", {{"nvidia.com/gpu", 8}});
  ts.labels["nvidia.com/gpu.replicas"] = "4";
  w.Add(ts);
  w.Add(MakeNode("whole", {{"nvidia.com/gpu", 2}}));
  w.Add(MakeNode("renamed", {{"nvidia.com/gpu.shared", 4}}));
  w.Add(Running("ml", "a", "ts", {{"nvidia.com/gpu", 2}}));
  w.Add(Running("ml", "b", "whole", {{"nvidia.com/gpu", 1}}));
  w.Add(Running("ml", "c", "renamed", {{"nvidia.com/gpu.shared", 1}}));
  auto fs = Families(w.Run());
  auto series = [&](const char* family) {
    std::map<std::string, double> out;  // pod or namespace + resource → value
    if (const auto* f = Family(fs, family))
      for (const auto& m : f->metric)
        out[Label(m, "pod") + "|" + Label(m, "resource")] = m.gauge.value;
    return out;
  };
  EXPECT_EQ(series("gpuattr_pod_requested_devices"),
            (std::map<std::string, double>{{"b|nvidia.com/gpu", 1}}));
  EXPECT_EQ(
      series("gpuattr_pod_requested_replicas"),
      (std::map<std::string, double>{{"a|nvidia.com/gpu", 2}, {"c|nvidia.com/gpu.shared", 1}}));
  EXPECT_EQ(series("gpuattr_namespace_requested_devices"),
            (std::map<std::string, double>{{"<absent>|nvidia.com/gpu", 1}}));
  EXPECT_EQ(series("gpuattr_namespace_requested_replicas"),
            (std::map<std::string, double>{{"<absent>|nvidia.com/gpu", 2},
                                           {"<absent>|nvidia.com/gpu.shared", 1}}));
}

TEST(AllocationPublish, UnknownCapacityIsAbsentNotZero) {
  World w;
  attribution::Device d;
  d.id = {"ghost", "0", std::nullopt};
  w.attribution.devices = {d};
  auto fs = Families(w.Run());
  EXPECT_EQ(Family(fs, "gpuattr_node_devices_capacity"), nullptr);
  ASSERT_NE(Family(fs, "gpuattr_node_devices_seen"), nullptr);
  EXPECT_DOUBLE_EQ(Family(fs, "gpuattr_node_devices_seen")->metric[0].gauge.value, 1);
}

TEST(AllocationStatusPage, ListsPendingPodsWithTheirHintEscaped) {
  World w = MixedMigNode();
  w.Add(Unscheduled("ml", "wants-<2g>", {{"nvidia.com/mig-2g.20gb", 1}}));
  model::Snapshot s;
  s.complete = true;
  model::ClusterSnapshot c;
  c.cluster = "c1";
  gpuattr::testing::MutableOutput(c).allocation = w.Run();
  s.clusters.push_back(c);
  std::string page = report::RenderStatusPage(s, 5000);
  EXPECT_NE(page.find("Pending GPU pods"), std::string::npos);
  EXPECT_NE(page.find("ml/wants-&lt;2g&gt;"), std::string::npos);
  EXPECT_NE(page.find("resource_not_offered"), std::string::npos);
  EXPECT_NE(page.find("No node offers mig-2g.20gb."), std::string::npos);
  // The page shows the full text, numbers included (the label has none).
  EXPECT_NE(page.find("The cluster offers: mig-1g.10gb \u00d746"), std::string::npos);

  gpuattr::testing::MutableOutput(s.clusters[0]).allocation = MixedMigNode().Run();
  EXPECT_NE(report::RenderStatusPage(s, 5000).find("No pending GPU pods."), std::string::npos);
}

}  // namespace
}  // namespace gpuattr::allocation
