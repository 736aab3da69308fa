// docs/design.md#attribution rule by rule, on small inline exporter bodies (no files needed), plus
// the acceptance numbers of ../shared/fixtures-real/README.md when those captures are present.
#include <gtest/gtest.h>

#include "golden/attribution_harness.h"
#include "gpuattr/attribution/kube_view.h"
#include "gpuattr/attribution/work.h"

namespace gpuattr::attribution {
namespace {

using gpuattr::testing::ReadExporter;
constexpr double kMiB = 1048576;

// One dcgm-exporter body on `node` → Attribution.
struct Feed {
  kube::ClusterObjects objects;
  std::vector<sources::ExporterReadings> exporters;

  Feed& Dcgm(const std::string& node, const std::string& body, const std::string& pod = "dcgm") {
    auto e = ReadExporter("gpu-operator", pod, node, body);
    EXPECT_TRUE(e.ok());
    if (e) exporters.push_back(std::move(*e));
    return *this;
  }
  Feed& Process(const std::string& node, const std::string& body) {
    return Dcgm(node, body, "proc");
  }
  Attribution Go() { return Attribute(AttributionInput{"c1", objects, exporters, {}}); }
};

const Device* FindDevice(const Attribution& a, const std::string& gpu,
                         std::optional<std::string> gi = std::nullopt) {
  for (const Device& d : a.devices)
    if (d.id.gpu == gpu && d.id.gpu_instance == gi) return &d;
  return nullptr;
}
const Pod* FindPod(const Attribution& a, const std::string& ns, const std::string& name) {
  for (const Pod& p : a.pods)
    if (p.id.namespace_ == ns && p.id.name == name) return &p;
  return nullptr;
}
const NodePower* FindNode(const Attribution& a, const std::string& node) {
  for (const NodePower& n : a.nodes)
    if (n.node == node) return &n;
  return nullptr;
}

kube::Pod GpuPod(const std::string& ns, const std::string& name, const std::string& node,
                 const std::string& resource = "nvidia.com/gpu",
                 const std::string& phase = "Running") {
  kube::Pod p;
  p.namespace_ = ns;
  p.name = name;
  p.node_name = node;
  p.phase = phase;
  kube::Container c;
  c.name = "main";
  if (!resource.empty()) c.limits[resource] = 1;
  p.containers.push_back(c);
  return p;
}

TEST(AttributionRules, ComputeSizeIsTheProfilesLeadingNumber) {
  EXPECT_EQ(ComputeSize("3g.40gb"), 3);
  EXPECT_EQ(ComputeSize("7g.79gb"), 7);
  EXPECT_EQ(ComputeSize("1g.10gb+me"), 1);
  EXPECT_EQ(ComputeSize("12g.96gb"), 12);
  EXPECT_EQ(ComputeSize("mystery"), 1);
  EXPECT_EQ(ComputeSize(""), 1);
  EXPECT_EQ(ComputeSize("3"), 1);
}

TEST(AttributionRules, GpuUtilWinsOverProfNeverAdded) {
  // Two non-MIG GPUs of one pod exporting both GPU_UTIL and PROF_GR_ENGINE_ACTIVE.
  const std::string body =
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"U0\",namespace=\"ml\",pod=\"p\"} 80\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"U1\",namespace=\"ml\",pod=\"p\"} 40\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"U0\",namespace=\"ml\",pod=\"p\"} 0.7\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"1\",UUID=\"U1\",namespace=\"ml\",pod=\"p\"} 0.9\n";
  Attribution a = Feed{}.Dcgm("n1", body).Go();
  ASSERT_EQ(a.devices.size(), 2u);
  EXPECT_DOUBLE_EQ(*FindDevice(a, "0")->utilization, 0.80);
  EXPECT_DOUBLE_EQ(*FindDevice(a, "1")->utilization, 0.40);
  const Pod* p = FindPod(a, "ml", "p");
  ASSERT_NE(p, nullptr);
  EXPECT_NEAR(*p->utilization, 0.60, 1e-12);
  EXPECT_EQ(p->devices, 2u);
}

TEST(AttributionRules, ProfGrEngineStandsInWithoutGpuUtil) {
  const std::string body =
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"U0\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID="
      "\"7\"} 0.42\n";
  Attribution a = Feed{}.Dcgm("n1", body).Go();
  const Device* d = FindDevice(a, "0", "7");
  ASSERT_NE(d, nullptr);
  EXPECT_DOUBLE_EQ(*d->utilization, 0.42);
  EXPECT_EQ(d->mig_profile, "1g.10gb");
}

TEST(AttributionRules, MigSlicesRepeatingCardPowerCountOnce) {
  // Three slices of card 0 each repeating 250 W, plus card 1 at 100 W: 350 W, not 850 W.
  std::string body;
  for (int gi : {7, 8, 9})
    body += "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"C0\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"" +
            std::to_string(gi) + "\"} 250\n";
  body += "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"C1\"} 100\n";
  Attribution a = Feed{}.Dcgm("n1", body).Go();
  const NodePower* n = FindNode(a, "n1");
  ASSERT_NE(n, nullptr);
  EXPECT_DOUBLE_EQ(*n->power_watts, 350);
  EXPECT_DOUBLE_EQ(*n->unattributed_power_watts, 350);
  ASSERT_EQ(a.cards.size(), 2u);
  EXPECT_NEAR(*FindDevice(a, "0", "7")->power_watts, 250.0 / 3, 1e-9);
}

TEST(AttributionRules, SlicePowerIsCardTimesComputeShare) {
  // A 140 W card with one 3g and four 1g slices → 60 W and 20 W each.
  std::string body =
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"C0\",GPU_I_PROFILE=\"3g.40gb\",GPU_I_ID=\"1\"} "
      "140\n";
  for (int gi : {3, 4, 5, 6})
    body += "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"C0\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"" +
            std::to_string(gi) + "\"} 140\n";
  Attribution a = Feed{}.Dcgm("n1", body).Go();
  EXPECT_NEAR(*FindDevice(a, "0", "1")->power_watts, 60, 1e-9);
  EXPECT_NEAR(FindDevice(a, "0", "1")->gpu_equivalents, 3.0 / 7, 1e-12);
  for (const char* gi : {"3", "4", "5", "6"}) {
    EXPECT_NEAR(*FindDevice(a, "0", gi)->power_watts, 20, 1e-9) << gi;
    EXPECT_NEAR(FindDevice(a, "0", gi)->gpu_equivalents, 1.0 / 7, 1e-12) << gi;
  }
  EXPECT_DOUBLE_EQ(*a.cards.at(0).power_watts, 140);
}

TEST(AttributionRules, EveryKeyOnAnyLineIsADeviceAndGaugesTakeTheMax) {
  const std::string body =
      "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"U0\"} 50\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"1\",UUID=\"U1\",namespace=\"a\",pod=\"x\",vgpu=\"0\"} 100\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"1\",UUID=\"U1\",namespace=\"a\",pod=\"y\",vgpu=\"1\"} 100\n"
      "DCGM_FI_DEV_FB_FREE{gpu=\"1\",UUID=\"U1\",namespace=\"a\",pod=\"x\",vgpu=\"0\"} 900\n"
      "DCGM_FI_DEV_FB_FREE{gpu=\"1\",UUID=\"U1\",namespace=\"a\",pod=\"y\",vgpu=\"1\"} 900\n";
  Attribution a = Feed{}.Dcgm("n1", body).Go();
  ASSERT_EQ(a.devices.size(), 2u);  // GPU 0 carries only a temperature: still a device
  const Device* d1 = FindDevice(a, "1");
  EXPECT_DOUBLE_EQ(*d1->memory_used_bytes, 100 * kMiB);    // max, not 200
  EXPECT_DOUBLE_EQ(*d1->memory_total_bytes, 1000 * kMiB);  // used + free
  EXPECT_EQ(*d1->pods, 2u);
  // Equal FB_USED is the device value repeated: split evenly.
  const Pod* x = FindPod(a, "a", "x");
  EXPECT_EQ(x->method, Method::kEvenSplit);
  EXPECT_DOUBLE_EQ(*x->memory_used_bytes, 50 * kMiB);
  EXPECT_DOUBLE_EQ(x->gpu_equivalents, 0.5);
  EXPECT_FALSE(FindDevice(a, "0")->power_watts.has_value());  // unknown, not 0
}

TEST(AttributionRules, DifferentFbUsedArePerPodValuesAndPowerFollowsMemoryShare) {
  const std::string body =
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"U0\",namespace=\"a\",pod=\"x\",vgpu=\"0\"} 600\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"U0\",namespace=\"b\",pod=\"y\",vgpu=\"1\"} 200\n"
      "DCGM_FI_DEV_FB_TOTAL{gpu=\"0\",UUID=\"U0\",namespace=\"a\",pod=\"x\",vgpu=\"0\"} 1000\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"U0\",namespace=\"a\",pod=\"x\",vgpu=\"0\"} 100\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"U0\",namespace=\"b\",pod=\"y\",vgpu=\"1\"} 100\n";
  Attribution a = Feed{}.Dcgm("n1", body).Go();
  const Pod* x = FindPod(a, "a", "x");
  const Pod* y = FindPod(a, "b", "y");
  EXPECT_EQ(x->method, Method::kDcgmPod);
  EXPECT_DOUBLE_EQ(*x->power_watts, 60);
  EXPECT_DOUBLE_EQ(*y->power_watts, 20);
  EXPECT_DOUBLE_EQ(*FindNode(a, "n1")->unattributed_power_watts, 20);
  for (const PodDevice& l : a.pod_devices) EXPECT_EQ(l.sharing, Sharing::kTimeSliced);
}

TEST(AttributionRules, LonePodOnSharedNodeIsTimeSliced) {
  Feed r;
  kube::Node n;
  n.name = "n1";
  n.labels["nvidia.com/gpu.replicas"] = "4";
  r.objects.nodes["n1"] = n;
  r.Dcgm("n1", "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"U0\",namespace=\"a\",pod=\"x\"} 80\n");
  Attribution a = r.Go();
  ASSERT_EQ(a.pod_devices.size(), 1u);
  EXPECT_EQ(a.pod_devices[0].sharing, Sharing::kTimeSliced);
  EXPECT_DOUBLE_EQ(*FindPod(a, "a", "x")->power_watts, 80);

  kube::Node shared;
  shared.name = "n2";
  shared.capacity["nvidia.com/gpu.shared"] = 8;
  EXPECT_TRUE(NodeSharingOf(shared).whole_gpus);
  EXPECT_TRUE(NodeSharingOf(shared).mig_slices);  // no mig-* resource: slices are nvidia.com/gpu
  kube::Node one;
  one.labels["nvidia.com/gpu.replicas"] = "1";
  EXPECT_FALSE(NodeSharingOf(one).whole_gpus);
  kube::Node unrenamed;  // nvidia.com/gpu counts replicas without being renamed
  unrenamed.capacity["nvidia.com/gpu"] = 16;
  unrenamed.labels["nvidia.com/gpu.replicas"] = "4";
  EXPECT_TRUE(NodeSharingOf(unrenamed).whole_gpus);
  EXPECT_EQ(ReplicasLabel(unrenamed, "nvidia.com/gpu"), 4);
  EXPECT_EQ(ReplicasLabel(unrenamed, "nvidia.com/mig-1g.10gb"), 1);
  unrenamed.labels["nvidia.com/gpu.replicas"] = "four";
  EXPECT_EQ(ReplicasLabel(unrenamed, "nvidia.com/gpu"), 1);
}

// mig.strategy=mixed nodes often advertise `.shared` resources at 0 (a sharing config that gives
// no replicas): that time-slices nothing, so a MIG slice with one pod stays `mig`, `dcgm_pod`.
TEST(AttributionRules, SharedResourceAtZeroTimeSlicesNothing) {
  kube::Node n;
  n.name = "mig-1";
  n.labels["nvidia.com/mig.strategy"] = "mixed";
  // The sharing config names nvidia.com/gpu, but every card is MIG-partitioned: whole-GPU
  // replicas say nothing about the slices.
  n.labels["nvidia.com/gpu.replicas"] = "4";
  n.labels["nvidia.com/mig-1g.10gb.replicas"] = "1";
  for (const char* r : {"nvidia.com/gpu.shared", "nvidia.com/mig-1g.10gb.shared"}) {
    n.capacity[r] = 0;
    n.allocatable[r] = 0;
  }
  n.capacity["nvidia.com/mig-1g.10gb"] = 2;
  EXPECT_FALSE(NodeSharingOf(n).mig_slices);
  Feed r;
  r.objects.nodes["mig-1"] = n;
  r.Dcgm("mig-1",
         "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"U0\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"7\","
         "namespace=\"a\",pod=\"x\"} 70\n"
         "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"U0\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"8\","
         "namespace=\"b\",pod=\"y\"} 70\n");
  Attribution a = r.Go();
  ASSERT_EQ(a.pod_devices.size(), 2u);
  for (const PodDevice& l : a.pod_devices) {
    EXPECT_EQ(l.sharing, Sharing::kMig) << l.pod.name;
    EXPECT_EQ(l.method, Method::kDcgmPod) << l.pod.name;
    EXPECT_DOUBLE_EQ(*l.power_watts, 35) << l.pod.name;
  }

  // Replicas above 0 (or a replicas label > 1) for a MIG profile do time-slice the slices.
  n.capacity["nvidia.com/mig-1g.10gb.shared"] = 4;
  EXPECT_TRUE(NodeSharingOf(n).mig_slices);
  n.capacity["nvidia.com/mig-1g.10gb.shared"] = 0;
  n.labels["nvidia.com/mig-1g.10gb.replicas"] = "2";
  EXPECT_TRUE(NodeSharingOf(n).mig_slices);
  EXPECT_FALSE(NodeSharingOf(kube::Node{}).whole_gpus);
}

TEST(AttributionRules, NodeComesFromTheExporterPodThenTheHostnameLabel) {
  const std::string body =
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"U0\",Hostname=\"dcgm-exporter-abc\"} 10\n";
  Attribution a = Feed{}.Dcgm("real-node", body).Go();
  EXPECT_EQ(a.devices.at(0).id.node, "real-node");

  Feed by_object;
  by_object.objects.pods["gpu-operator/dcgm"] = GpuPod("gpu-operator", "dcgm", "obj-node", "");
  a = by_object.Dcgm("", body).Go();
  EXPECT_EQ(a.devices.at(0).id.node, "obj-node");

  a = Feed{}.Dcgm("", body).Go();  // nothing else known: the hostname label is the fallback
  EXPECT_EQ(a.devices.at(0).id.node, "dcgm-exporter-abc");
}

TEST(AttributionRules, NoPodLabelsGiveCandidatesNeverAnOwner) {
  Feed r;
  r.objects.pods["v/a"] = GpuPod("v", "a", "n1");
  r.objects.pods["v/b"] = GpuPod("v", "b", "n1", "nvidia.com/gpu", "Pending");
  r.objects.pods["v/done"] = GpuPod("v", "done", "n1", "nvidia.com/gpu", "Succeeded");
  r.objects.pods["v/cpu"] = GpuPod("v", "cpu", "n1", "");
  r.objects.pods["v/other"] = GpuPod("v", "other", "n2");
  r.Dcgm("n1", "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"U0\"} 70\n");
  Attribution a = r.Go();
  ASSERT_EQ(a.devices.size(), 1u);
  EXPECT_FALSE(a.devices[0].pods.has_value());
  ASSERT_EQ(a.devices[0].candidate_pods.size(), 2u);
  EXPECT_EQ(a.devices[0].candidate_pods[0].name, "a");
  EXPECT_EQ(a.devices[0].candidate_pods[1].name, "b");
  EXPECT_TRUE(a.pods.empty());
  EXPECT_DOUBLE_EQ(*FindNode(a, "n1")->unattributed_power_watts, 70);
  EXPECT_EQ(FindNode(a, "n1")->tier, Tier::kDcgmNoPod);
}

const char* kProcessBody =
    "gpu_process_memory_bytes{namespace=\"ml\",pod=\"vllm\",container=\"c\",pid=\"1\",gpu=\"0\","
    "uuid=\"U0\"} 4000\n"
    "gpu_process_memory_bytes{namespace=\"ml\",pod=\"vllm\",container=\"c\",pid=\"2\",gpu=\"0\","
    "uuid=\"U0\"} 1000\n"
    "gpu_process_memory_bytes{namespace=\"lab\",pod=\"nb\",container=\"c\",pid=\"3\",gpu=\"0\","
    "uuid=\"U0\"} 2000\n"
    "gpu_process_utilization_percent{namespace=\"ml\",pod=\"vllm\",container=\"c\",pid=\"1\",gpu="
    "\"0\",uuid=\"U0\"} 60\n"
    "gpu_process_utilization_percent{namespace=\"ml\",pod=\"vllm\",container=\"c\",pid=\"2\",gpu="
    "\"0\",uuid=\"U0\"} 20\n"
    "gpu_total_memory_bytes{gpu=\"0\",uuid=\"U0\"} 10000\n"
    "gpu_power_usage_watts{gpu=\"0\",uuid=\"U0\"} 300\n";

TEST(AttributionRules, ProcessTierSplitsPowerByShareOfTotalMemory) {
  Feed r;
  r.objects.pods["ml/vllm"] = GpuPod("ml", "vllm", "n1");
  r.objects.pods["lab/nb"] = GpuPod("lab", "nb", "n1", "");  // requests no GPU
  r.Process("n1", kProcessBody);
  Attribution a = r.Go();
  const Pod* vllm = FindPod(a, "ml", "vllm");
  const Pod* nb = FindPod(a, "lab", "nb");
  ASSERT_TRUE(vllm && nb);
  EXPECT_EQ(vllm->method, Method::kProcess);
  EXPECT_DOUBLE_EQ(*vllm->memory_used_bytes, 5000);
  EXPECT_DOUBLE_EQ(*vllm->utilization, 0.60);  // max of its processes
  EXPECT_DOUBLE_EQ(*vllm->power_watts, 150);   // 300 × 5000/10000
  EXPECT_DOUBLE_EQ(*nb->power_watts, 60);
  EXPECT_FALSE(vllm->unrequested_gpu_use);
  EXPECT_TRUE(nb->unrequested_gpu_use);
  EXPECT_DOUBLE_EQ(*FindNode(a, "n1")->unattributed_power_watts, 90);
  EXPECT_DOUBLE_EQ(*FindDevice(a, "0")->memory_used_bytes, 7000);
}

TEST(AttributionRules, DcgmGaugesWinOverProcessDevicesOnTheSameNode) {
  Feed r;
  r.Process("n1", kProcessBody);
  r.Dcgm("n1",
         "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"U0\",namespace=\"x\",pod=\"ignored\"} 200\n"
         "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"U0\",namespace=\"x\",pod=\"ignored\"} "
         "0.00762939453125\n"
         "DCGM_FI_DEV_FB_FREE{gpu=\"0\",UUID=\"U0\",namespace=\"x\",pod=\"ignored\"} "
         "0.00190734863281\n");
  Attribution a = r.Go();
  EXPECT_EQ(FindNode(a, "n1")->tier, Tier::kProcess);
  EXPECT_EQ(FindPod(a, "x", "ignored"), nullptr);  // pods come from the process tier
  EXPECT_DOUBLE_EQ(*a.cards.at(0).power_watts, 200);
  ASSERT_NE(FindPod(a, "ml", "vllm"), nullptr);
  EXPECT_EQ(*FindDevice(a, "0")->pods, 2u);
}

TEST(AttributionRules, NamespacesSumPodsAndWeightUtilisationByGpuEquivalents) {
  std::string body =
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"U0\",namespace=\"t\",pod=\"big\"} 80\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"U0\",namespace=\"t\",pod=\"big\"} 1000\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"U0\",namespace=\"t\",pod=\"big\"} 300\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"1\",UUID=\"U1\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID="
      "\"1\",namespace=\"t\",pod=\"small\"} 0.01\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"1\",UUID=\"U1\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"1\","
      "namespace=\"t\",pod=\"small\"} 512\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"U1\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"1\","
      "namespace=\"t\",pod=\"small\"} 100\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"U1\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"2\"} "
      "100\n";
  Feed r;
  // GPU pods are those holding GPU resources (docs/design.md#invariants): "big" holds a GPU,
  // "small" a slice; "ghost" holds one but is on no device; "seen" is on a device without a Pod
  // object.
  r.objects.pods["t/big"] = GpuPod("t", "big", "n1");
  r.objects.pods["t/small"] = GpuPod("t", "small", "n1", "nvidia.com/mig-1g.10gb");
  r.objects.pods["t/ghost"] = GpuPod("t", "ghost", "n1", "nvidia.com/gpu.shared");
  Attribution a = r.Dcgm("n1", body).Go();
  ASSERT_EQ(a.namespaces.size(), 1u);
  const Namespace& t = a.namespaces[0];
  EXPECT_EQ(t.devices_in_use, 2u);
  EXPECT_EQ(t.gpu_pods, 3u);
  EXPECT_DOUBLE_EQ(t.gpu_equivalents, 1.5);
  EXPECT_NEAR(*t.utilization, (0.8 * 1 + 0.01 * 0.5) / 1.5, 1e-12);
  EXPECT_DOUBLE_EQ(*t.memory_used_bytes, 1512 * kMiB);
  EXPECT_DOUBLE_EQ(*t.power_watts, 350);
  // "small" is idle: util < 0.05 and 512 MiB ≥ 256 MiB.
  EXPECT_EQ(t.idle_pods, 1u);
  EXPECT_DOUBLE_EQ(*t.memory_idle_bytes, 512 * kMiB);
  EXPECT_DOUBLE_EQ(*FindNode(a, "n1")->unattributed_power_watts, 50);

  // Thresholds are parameters.
  Feed plain;
  plain.Dcgm("n1", body);
  AttributionInput in{"c1", plain.objects, plain.exporters, {}};
  in.params.idle_memory_at_least_bytes = 1024 * kMiB;
  EXPECT_EQ(Attribute(in).namespaces[0].idle_pods, 0u);
}

// ---- ../shared/fixtures-real acceptance numbers ------------------------------------------------

std::optional<std::string> Real(const std::string& name) {
  auto dir = gpuattr::testing::RealFixturesDir();
  if (!dir || !std::filesystem::exists(*dir / name)) return std::nullopt;
  return gpuattr::testing::ReadFile(*dir / name);
}

TEST(AttributionReal, DcgmPodLabels) {
  auto body = Real("dcgm_pod_labels.prom");
  if (!body) GTEST_SKIP() << "fixtures-real not present";
  Attribution a = Feed{}.Dcgm("exporter-node", *body).Go();
  const Pod* vllm = FindPod(a, "ml", "vllm-0");
  ASSERT_NE(vllm, nullptr);
  EXPECT_EQ(vllm->node, "exporter-node");
  EXPECT_EQ(vllm->devices, 2u);
  EXPECT_NEAR(*vllm->utilization, 0.65, 1e-12);
  EXPECT_NEAR(*vllm->power_watts, 511, 1e-9);
  EXPECT_DOUBLE_EQ(*vllm->memory_used_bytes, 135000 * kMiB);
  EXPECT_DOUBLE_EQ(*vllm->memory_total_bytes, 162000 * kMiB);
  const Pod* tei = FindPod(a, "embeddings", "tei-7d9f-x1");
  ASSERT_NE(tei, nullptr);
  EXPECT_NEAR(*tei->utilization, 0.12, 1e-12);
  EXPECT_DOUBLE_EQ(*tei->memory_used_bytes, 4096 * kMiB);
  const Device* gpu3 = FindDevice(a, "3");
  ASSERT_NE(gpu3, nullptr);
  EXPECT_EQ(*gpu3->pods, 0u);
  EXPECT_DOUBLE_EQ(*gpu3->memory_total_bytes, 81000 * kMiB);
  EXPECT_NEAR(*FindNode(a, "exporter-node")->unattributed_power_watts, 55, 1e-9);
  EXPECT_DOUBLE_EQ(*FindDevice(a, "0")->utilization, 0.87);
  EXPECT_DOUBLE_EQ(*FindDevice(a, "0")->temperature_celsius, 71);
  // Without the exporter's node, the hostname label is the fallback.
  EXPECT_EQ(Feed{}.Dcgm("", *body).Go().devices.at(0).id.node, "node-a");
}

TEST(AttributionReal, DcgmMig) {
  auto body = Real("dcgm_mig.prom");
  if (!body) GTEST_SKIP() << "fixtures-real not present";
  Attribution a = Feed{}.Dcgm("exporter-node", *body).Go();
  EXPECT_EQ(a.pods.size(), 4u);
  EXPECT_EQ(a.devices.size(), 4u);  // 0:7, 0:8, 0:9 and 1:1 stay separate
  const Pod* t0 = FindPod(a, "it-dgx1", "transcription-0");
  ASSERT_NE(t0, nullptr);
  EXPECT_DOUBLE_EQ(*t0->utilization, 0.42);
  const Pod* ocr = FindPod(a, "it-dgx2", "ocr-0");
  ASSERT_NE(ocr, nullptr);
  EXPECT_DOUBLE_EQ(*ocr->memory_used_bytes, 9000 * kMiB);
  EXPECT_DOUBLE_EQ(*ocr->memory_total_bytes, 9700 * kMiB);
  for (const PodDevice& l : a.pod_devices) EXPECT_EQ(l.sharing, Sharing::kMig);
}

TEST(AttributionReal, Enricher) {
  auto body = Real("enricher.prom");
  if (!body) GTEST_SKIP() << "fixtures-real not present";
  Attribution a = Feed{}.Process("gpu-node-1", *body).Go();
  const Pod* vllm = FindPod(a, "ml", "vllm-0");
  ASSERT_NE(vllm, nullptr);
  EXPECT_DOUBLE_EQ(*vllm->memory_used_bytes, 51200 * kMiB);
  EXPECT_DOUBLE_EQ(*vllm->utilization, 0.60);
  EXPECT_NEAR(*vllm->power_watts, 250, 1e-9);  // 400 W × 50 GiB / 80 GiB
  EXPECT_EQ(vllm->method, Method::kProcess);
  const Pod* tei1 = FindPod(a, "embeddings", "tei-1");
  ASSERT_NE(tei1, nullptr);
  EXPECT_NEAR(*tei1->power_watts, 100, 1e-9);
  const Pod* tei2 = FindPod(a, "embeddings", "tei-2");
  ASSERT_NE(tei2, nullptr);
  EXPECT_EQ(tei2->devices, 1u);
  for (const PodDevice& l : a.pod_devices)
    if (l.pod.name == "tei-2") {
      EXPECT_EQ(a.devices[l.device].id.gpu, "1");
    }
  const Device* d0 = FindDevice(a, "0");
  ASSERT_NE(d0, nullptr);
  EXPECT_DOUBLE_EQ(*d0->memory_used_bytes, 71680 * kMiB);
  EXPECT_DOUBLE_EQ(*d0->memory_total_bytes, 81920 * kMiB);
  EXPECT_DOUBLE_EQ(*d0->power_watts, 400);
  EXPECT_EQ(*d0->pods, 2u);
}

}  // namespace
}  // namespace gpuattr::attribution
