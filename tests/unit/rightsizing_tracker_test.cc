// Observations per workload over the window (docs/rightsizing.md#what-is-kept).
#include <gtest/gtest.h>

#include "gpuattr/rightsizing/rightsizing.h"

namespace gpuattr::rightsizing {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kT0 = 1'764'000'000;  // a multiple of the 100 s slot

// A 7-slot window of 700 s (100 s slots), 2 min minimum, 20 % headroom, 5 min gap.
RightsizingParams Params() { return {700, 120, 0.2, 300}; }

kube::Pod DeploymentPod(const std::string& name, const std::string& deployment) {
  kube::Pod p;
  p.namespace_ = "ml";
  p.name = name;
  p.node_name = "gpu-1";
  p.phase = "Running";
  p.labels["pod-template-hash"] = "abc12";
  p.owners.push_back({"ReplicaSet", deployment + "-abc12", true, "apps/v1"});
  return p;
}

struct Cluster {
  kube::ClusterObjects objects;
  attribution::Attribution attribution;

  // Adds a pod on its own whole A100 80GB (`gpu` = its index).
  void AddWholePod(const kube::Pod& pod, std::optional<double> memory, std::optional<double> util,
                   attribution::Sharing sharing = attribution::Sharing::kExclusive) {
    objects.pods[pod.Key()] = pod;
    attribution::Device d;
    d.id = {"gpu-1", std::to_string(attribution.devices.size()), std::nullopt};
    d.model = "NVIDIA A100-SXM4-80GB";
    d.memory_total_bytes = 81920 * kMiB;
    d.utilization = util;
    attribution.devices.push_back(d);
    attribution::PodDevice link;
    link.pod = pod.Id();
    link.device = attribution.devices.size() - 1;
    link.sharing = sharing;
    link.memory_used_bytes = memory;
    attribution.pod_devices.push_back(link);
  }
};

const WorkloadView* Find(const RightsizingView& v, const std::string& kind,
                         const std::string& name) {
  for (const WorkloadView& w : v.workloads)
    if (w.id.kind == kind && w.id.name == name) return &w;
  return nullptr;
}

TEST(RightsizingTracker, ObservesAWorkloadOverCyclesAndRecommends) {
  Cluster c;
  c.AddWholePod(DeploymentPod("chat-abc12-a", "chat"), 10e9, 0.05);
  c.AddWholePod(DeploymentPod("chat-abc12-b", "chat"), 12e9, 0.10);
  Tracker t(Params());
  RightsizingView v;
  for (int i = 0; i <= 4; ++i) v = t.Record(c.attribution, c.objects, kT0 + 60 * i);
  const WorkloadView* w = Find(v, "Deployment", "chat");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->pods, 2u);
  // 4 intervals of 60 s (the first cycle has no interval before it).
  EXPECT_DOUBLE_EQ(w->observed_seconds, 240);
  EXPECT_DOUBLE_EQ(*w->memory_peak_bytes, 12e9);
  // 10 samples: five of 0.05, five of 0.10; rank 0.95 × 9 = 8.55 → 0.10, within 2 %.
  EXPECT_NEAR(*w->utilization_p95, 0.10, 0.002);
  // Need 14.4 GB and 0.10 × 1 × 1.2 = 0.12: 1g.20gb (1/7), as in the rule's first case.
  EXPECT_EQ(w->recommendation.current, "whole");
  EXPECT_EQ(w->recommendation.recommended, "1g.20gb");
  EXPECT_EQ(ReasonName(w->recommendation.reason), "fits_smaller");
  EXPECT_DOUBLE_EQ(w->gpu_equivalents, 2);
  EXPECT_NEAR(w->reclaimable_gpu_equivalents, 2 * (1 - 1.0 / 7), 1e-12);
}

TEST(RightsizingTracker, TooShortIsInsufficientData) {
  Cluster c;
  c.AddWholePod(DeploymentPod("chat-abc12-a", "chat"), 10e9, 0.05);
  Tracker t(Params());
  t.Record(c.attribution, c.objects, kT0);
  const RightsizingView v = t.Record(c.attribution, c.objects, kT0 + 60);  // 60 s < 120 s
  ASSERT_EQ(v.workloads.size(), 1u);
  EXPECT_EQ(ReasonName(v.workloads[0].recommendation.reason), "insufficient_data");
  EXPECT_EQ(v.workloads[0].recommendation.recommended, "whole");
  EXPECT_DOUBLE_EQ(v.workloads[0].reclaimable_gpu_equivalents, 0);
}

TEST(RightsizingTracker, UnknownCyclesAddNothing) {
  Cluster known;
  known.AddWholePod(DeploymentPod("chat-abc12-a", "chat"), 10e9, 0.05);
  Cluster unknown;  // the pod is on its device, but its exporter did not answer
  unknown.AddWholePod(DeploymentPod("chat-abc12-a", "chat"), std::nullopt, std::nullopt);
  Tracker t(Params());
  t.Record(known.attribution, known.objects, kT0);
  t.Record(known.attribution, known.objects, kT0 + 60);
  const RightsizingState before = t.state();
  const RightsizingView v = t.Record(unknown.attribution, unknown.objects, kT0 + 120);
  const WorkloadRecord& r = t.state().workloads.begin()->second;
  EXPECT_EQ(r.slots, before.workloads.begin()->second.slots);  // no time, no sample
  EXPECT_DOUBLE_EQ(v.workloads[0].observed_seconds, 60);
  EXPECT_EQ(v.workloads[0].pods, 1u);  // still holding its GPU
  // Nor does the interval after it (half of it unknown): the workload is observed again from
  // the next known cycle on, and the one after adds its 60 s.
  const RightsizingView after = t.Record(known.attribution, known.objects, kT0 + 180);
  EXPECT_DOUBLE_EQ(after.workloads[0].observed_seconds, 60);
  size_t samples = 0;  // its sample counts: three known cycles
  for (const WindowSlot& slot : t.state().workloads.begin()->second.slots)
    samples += slot.utilization.count();
  EXPECT_EQ(samples, 3u);
  const RightsizingView later = t.Record(known.attribution, known.objects, kT0 + 240);
  EXPECT_DOUBLE_EQ(later.workloads[0].observed_seconds, 120);
}

TEST(RightsizingTracker, AWorkloadIsObservedFromItsFirstCycleOn) {
  Cluster before;
  before.AddWholePod(DeploymentPod("chat-abc12-a", "chat"), 10e9, 0.05);
  Cluster both = before;
  both.AddWholePod(DeploymentPod("eval-def34-b", "eval"), 20e9, 0.5);
  Tracker t(Params());
  t.Record(before.attribution, before.objects, kT0);
  // eval appears 60 s later: the interval before its first cycle is nobody's observation.
  RightsizingView v = t.Record(both.attribution, both.objects, kT0 + 60);
  ASSERT_EQ(v.workloads.size(), 2u);
  EXPECT_EQ(v.workloads[0].id.name, "chat");
  EXPECT_DOUBLE_EQ(v.workloads[0].observed_seconds, 60);
  EXPECT_EQ(v.workloads[1].id.name, "eval");
  EXPECT_DOUBLE_EQ(v.workloads[1].observed_seconds, 0);
  v = t.Record(both.attribution, both.objects, kT0 + 120);
  EXPECT_DOUBLE_EQ(v.workloads[0].observed_seconds, 120);
  EXPECT_DOUBLE_EQ(v.workloads[1].observed_seconds, 60);
}

TEST(RightsizingTracker, LongGapAddsNoTime) {
  Cluster c;
  c.AddWholePod(DeploymentPod("chat-abc12-a", "chat"), 10e9, 0.05);
  Tracker t(Params());
  t.Record(c.attribution, c.objects, kT0);
  const RightsizingView v = t.Record(c.attribution, c.objects, kT0 + 301);  // > 300 s
  EXPECT_DOUBLE_EQ(v.workloads[0].observed_seconds, 0);
  EXPECT_EQ(t.state().workloads.begin()->second.slots.back().utilization.count(), 1u);
}

TEST(RightsizingTracker, KeepsItsRowWithoutPodsThenDropsItAfterTheWindow) {
  Cluster c;
  c.AddWholePod(DeploymentPod("chat-abc12-a", "chat"), 10e9, 0.05);
  const Cluster empty;
  Tracker t(Params());
  t.Record(c.attribution, c.objects, kT0);
  t.Record(c.attribution, c.objects, kT0 + 60);
  // Gone (a CronJob between runs): the row stays with its observations and no pod.
  RightsizingView v = t.Record(empty.attribution, empty.objects, kT0 + 500);
  ASSERT_EQ(v.workloads.size(), 1u);
  EXPECT_EQ(v.workloads[0].pods, 0u);
  EXPECT_DOUBLE_EQ(v.workloads[0].gpu_equivalents, 0);
  EXPECT_DOUBLE_EQ(*v.workloads[0].memory_peak_bytes, 10e9);
  // The slot [kT0, kT0 + 100) leaves the 700 s window at kT0 + 800.
  v = t.Record(empty.attribution, empty.objects, kT0 + 799);
  EXPECT_EQ(v.workloads.size(), 1u);
  v = t.Record(empty.attribution, empty.objects, kT0 + 800);
  EXPECT_TRUE(v.workloads.empty());
  EXPECT_TRUE(t.state().workloads.empty());
}

TEST(RightsizingTracker, OldSlotsLeaveTheWindow) {
  Cluster big;
  big.AddWholePod(DeploymentPod("chat-abc12-a", "chat"), 30e9, 0.05);
  Cluster small;
  small.AddWholePod(DeploymentPod("chat-abc12-a", "chat"), 5e9, 0.05);
  Tracker t(Params());
  t.Record(big.attribution, big.objects, kT0);
  RightsizingView v;
  for (double at = kT0 + 100; at <= kT0 + 800; at += 100)
    v = t.Record(small.attribution, small.objects, at);
  // The 30 GB peak was in the first slot, gone at kT0 + 800. The 7 slots of the window remain,
  // and the one now begun: kT0 + 100 … kT0 + 800.
  EXPECT_DOUBLE_EQ(*v.workloads[0].memory_peak_bytes, 5e9);
  EXPECT_EQ(t.state().workloads.begin()->second.slots.size(), 8u);
}

// The window sketch is kept running (docs/rightsizing.md#cost): as slots leave the window, and
// after a restart, the p95 is the one of the slots' sketches merged.
TEST(RightsizingTracker, RunningWindowSketchEqualsTheSlotsMerged) {
  Cluster busy;
  busy.AddWholePod(DeploymentPod("chat-abc12-a", "chat"), 5e9, 0.95);
  Cluster idle;
  idle.AddWholePod(DeploymentPod("chat-abc12-a", "chat"), 5e9, 0.05);
  Tracker t(Params());
  // Two busy slots, then idle ones: the busy samples leave at kT0 + 800 and kT0 + 900.
  for (double at = kT0; at < kT0 + 200; at += 20) t.Record(busy.attribution, busy.objects, at);
  RightsizingView v;
  for (double at = kT0 + 200; at <= kT0 + 900; at += 20) {
    v = t.Record(idle.attribution, idle.objects, at);
    const WorkloadRecord& r = t.state().workloads.begin()->second;
    UtilizationSketch merged;
    for (const WindowSlot& s : r.slots) merged.Merge(s.utilization);
    ASSERT_EQ(r.window, merged) << "at +" << at - kT0;
    EXPECT_EQ(v.workloads[0].utilization_p95, merged.Quantile(0.95));
  }
  EXPECT_NEAR(*v.workloads[0].utilization_p95, 0.05, 0.001);
  // A restart: the state as the file gives it back (no window), and the same p95.
  RightsizingState saved = t.state();
  for (auto& [id, r] : saved.workloads) r.window = {};
  Tracker restarted(Params(), saved);
  EXPECT_EQ(restarted.state().workloads.begin()->second.window,
            t.state().workloads.begin()->second.window);
}

TEST(RightsizingTracker, AnotherKindStartsOver) {
  Cluster whole;
  whole.AddWholePod(DeploymentPod("chat-abc12-a", "chat"), 30e9, 0.5);
  Cluster slice = whole;
  slice.attribution.devices[0].id.gpu_instance = "1";
  slice.attribution.devices[0].mig_profile = "1g.10gb";
  slice.attribution.devices[0].memory_total_bytes = 9856 * kMiB;
  slice.attribution.pod_devices[0].sharing = attribution::Sharing::kMig;
  slice.attribution.pod_devices[0].memory_used_bytes = 4e9;
  Tracker t(Params());
  t.Record(whole.attribution, whole.objects, kT0);
  t.Record(whole.attribution, whole.objects, kT0 + 60);
  const RightsizingView v = t.Record(slice.attribution, slice.objects, kT0 + 120);
  EXPECT_EQ(v.workloads[0].recommendation.current, "1g.10gb");
  EXPECT_DOUBLE_EQ(*v.workloads[0].memory_peak_bytes, 4e9);
  EXPECT_DOUBLE_EQ(v.workloads[0].observed_seconds, 0);  // the slice is observed from now on
  EXPECT_NEAR(v.workloads[0].gpu_equivalents, 1.0 / 7, 1e-12);
}

TEST(RightsizingTracker, RequestedProfileWinsAndTimeSlicingCountsReplicas) {
  Cluster c;
  kube::Pod pod = DeploymentPod("chat-abc12-a", "chat");
  kube::Container ctr;
  ctr.limits["nvidia.com/mig-3g.40gb"] = 1;
  pod.containers.push_back(ctr);
  c.AddWholePod(pod, 4e9, 0.2, attribution::Sharing::kMig);
  c.attribution.devices[0].id.gpu_instance = "2";
  c.attribution.devices[0].mig_profile = "3g.39gb";  // dcgm's name for it
  kube::Pod shared = DeploymentPod("batch-abc12-a", "batch");
  c.AddWholePod(shared, 4e9, 0.2, attribution::Sharing::kTimeSliced);
  kube::Node node;
  node.name = "gpu-1";
  node.labels["nvidia.com/gpu.replicas"] = "4";
  c.objects.nodes[node.Key()] = node;
  Tracker t(Params());
  const RightsizingView v = t.Record(c.attribution, c.objects, kT0);
  EXPECT_EQ(Find(v, "Deployment", "chat")->recommendation.current, "3g.40gb");
  EXPECT_EQ(Find(v, "Deployment", "batch")->recommendation.current, "share-1/4");
  EXPECT_DOUBLE_EQ(Find(v, "Deployment", "batch")->gpu_equivalents, 0.25);
}

// mig.strategy=single: pods request nvidia.com/gpu and every unit is a slice of the node's
// profile, time-sliced by nvidia.com/gpu.replicas (there is no nvidia.com/mig-<profile> resource
// and no label of its replicas).
TEST(RightsizingTracker, MigSingleNodeSlicesAreNvidiaGpuUnits) {
  Cluster c;
  kube::Pod pod = DeploymentPod("chat-abc12-a", "chat");
  kube::Container ctr;
  ctr.limits["nvidia.com/gpu"] = 1;
  pod.containers.push_back(ctr);
  c.AddWholePod(pod, 4e9, 0.2, attribution::Sharing::kTimeSliced);
  c.attribution.devices[0].id.gpu_instance = "7";
  c.attribution.devices[0].mig_profile = "1g.10gb";
  c.attribution.devices[0].pods = 1;  // the other replica is idle: no pod seen on it
  kube::Pod other = DeploymentPod("batch-abc12-a", "batch");
  other.containers.push_back(ctr);
  c.AddWholePod(other, 2e9, 0.1, attribution::Sharing::kMig);
  c.attribution.devices[1].id.gpu_instance = "8";  // the exporter names no profile
  kube::Node node;
  node.name = "gpu-1";
  node.labels["nvidia.com/mig.strategy"] = "single";
  node.labels["nvidia.com/gpu.product"] = "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb";
  node.labels["nvidia.com/gpu.replicas"] = "2";
  node.capacity["nvidia.com/gpu"] = 112;
  c.objects.nodes[node.Key()] = node;
  Tracker t(Params());
  const RightsizingView v = t.Record(c.attribution, c.objects, kT0);
  // A 1g slice of 7, shared 2 ways: 1/14 of a card (it was 1/7, the replicas looked up under
  // nvidia.com/mig-1g.10gb.replicas, which single nodes do not have).
  const WorkloadView* chat = Find(v, "Deployment", "chat");
  EXPECT_EQ(chat->recommendation.current, "1g.10gb");
  EXPECT_NEAR(chat->gpu_equivalents, 1.0 / 14, 1e-12);
  // No profile from the exporter: the node's (it was "whole", a full card).
  const WorkloadView* batch = Find(v, "Deployment", "batch");
  EXPECT_EQ(batch->recommendation.current, "1g.10gb");
  EXPECT_NEAR(batch->gpu_equivalents, 1.0 / 7, 1e-12);
}

// The reclaimable cost: each pod's reclaimable share × its card's price per GPU-hour; a
// workload on unpriced cards has none (docs/rightsizing.md#reading-a-recommendation).
TEST(RightsizingTracker, ReclaimableCostOfPricedCardsOnly) {
  Cluster c;
  c.AddWholePod(DeploymentPod("chat-abc12-a", "chat"), 10e9, 0.05);    // device 0: priced
  c.AddWholePod(DeploymentPod("chat-abc12-b", "chat"), 10e9, 0.05);    // device 1: unpriced
  c.AddWholePod(DeploymentPod("batch-abc12-a", "batch"), 10e9, 0.05);  // device 2: unpriced
  const std::vector<std::optional<double>> prices = {2.8, std::nullopt, std::nullopt};
  Tracker t(Params());
  RightsizingView v;
  for (int i = 0; i <= 4; ++i) v = t.Record(c.attribution, c.objects, kT0 + 60 * i, &prices);
  // chat: 12 GB and 0.06 needed: 1g.20gb (1/7); each pod gives back 6/7 of a card, the priced
  // one 6/7 × 2.8 = 2.4 per hour; the unpriced one adds nothing to the cost.
  const WorkloadView* chat = Find(v, "Deployment", "chat");
  EXPECT_EQ(chat->recommendation.recommended, "1g.20gb");
  EXPECT_NEAR(chat->reclaimable_gpu_equivalents, 2 * 6.0 / 7, 1e-12);
  ASSERT_TRUE(chat->reclaimable_cost_per_hour.has_value());
  EXPECT_NEAR(*chat->reclaimable_cost_per_hour, 2.4, 1e-12);
  EXPECT_FALSE(Find(v, "Deployment", "batch")->reclaimable_cost_per_hour.has_value());
  // Without prices, none at all.
  v = t.Record(c.attribution, c.objects, kT0 + 300);
  EXPECT_FALSE(Find(v, "Deployment", "chat")->reclaimable_cost_per_hour.has_value());
}

TEST(RightsizingTracker, UnrequestedUseAndUnknownPodsAreNotWorkloads) {
  Cluster c;
  c.AddWholePod(DeploymentPod("sneaky-abc12-a", "sneaky"), 4e9, 0.2,
                attribution::Sharing::kUnrequested);
  attribution::PodDevice ghost = c.attribution.pod_devices[0];
  ghost.pod = {"ml", "not-in-the-cache"};
  ghost.sharing = attribution::Sharing::kExclusive;
  c.attribution.pod_devices.push_back(ghost);
  Tracker t(Params());
  EXPECT_TRUE(t.Record(c.attribution, c.objects, kT0).workloads.empty());
}

}  // namespace
}  // namespace gpuattr::rightsizing
