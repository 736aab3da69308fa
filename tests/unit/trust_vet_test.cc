// The vetting between reading and the stages (trust/vet.h, docs/design.md#rejected-lines): per-pod
// labels must name a pod of the exporter's node, values must be in range, a device UUID belongs to
// one exporter of a kind (by trust rank, then name), a node has no more cards than it advertises, a
// query API's node must exist; every dropped line counted by reason.
#include "gpuattr/trust/vet.h"

#include <gtest/gtest.h>

#include "gpuattr/sources/body.h"
#include "support/pods.h"

namespace gpuattr::trust {
namespace {

using sources::DcgmReadings;
using sources::ExporterReadings;
using sources::ProcessReadings;

kube::ClusterObjects Cluster() {
  kube::ClusterObjects o;
  for (const char* n : {"gpu-1", "gpu-2"}) o.nodes[n] = testing::MakeGpuNode(n, 2);
  for (auto p : {testing::MakeRunningPod("ml", "train-0", "gpu-1", "pytorch"),
                 testing::MakeRunningPod("ml", "serve-0", "gpu-2", "vllm")})
    o.pods[p.Key()] = p;
  return o;
}

ExporterReadings Read(std::string ns, std::string pod, std::string node, std::string_view body,
                      sources::BodyKind kind = sources::BodyKind::kDcgm) {
  sources::BodyRead r = sources::ReadBody(body, kind);
  EXPECT_TRUE(r.readings) << r.reason;
  return {std::move(ns), std::move(pod), std::move(node), std::move(*r.readings)};
}

const DcgmReadings& Dcgm(const ExporterReadings& e) { return std::get<DcgmReadings>(e.readings); }
uint64_t Rejected(const ExporterReadings& e, std::string_view reason) {
  const auto& r = sources::StatsOf(e.readings).rejected;
  auto it = r.find(std::string(reason));
  return it == r.end() ? 0 : it->second;
}

TEST(Vet, APodOfTheExportersNodeStays) {
  std::vector<ExporterReadings> v{Read("gpu-operator", "dcgm-a", "gpu-1",
                                       "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\","
                                       "namespace=\"ml\",pod=\"train-0\"} 50\n"
                                       "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-1\","
                                       "namespace=\"ml\",pod=\"train-0\"} 100\n")};
  VetReadings(v, Cluster());
  ASSERT_EQ(Dcgm(v[0]).records.size(), 1u);
  ASSERT_TRUE(Dcgm(v[0]).records[0].pod);
  EXPECT_EQ(Dcgm(v[0]).records[0].pod->id.name, "train-0");
  EXPECT_TRUE(sources::StatsOf(v[0].readings).rejected.empty());
}

TEST(Vet, AnInventedPodIsDroppedTheDeviceStays) {
  std::vector<ExporterReadings> v{Read("gpu-operator", "dcgm-a", "gpu-1",
                                       "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\","
                                       "namespace=\"finance\",pod=\"payroll-db-0\"} 300\n"
                                       "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-1\","
                                       "namespace=\"finance\",pod=\"payroll-db-0\"} 100\n")};
  VetReadings(v, Cluster());
  ASSERT_EQ(Dcgm(v[0]).records.size(), 1u);
  EXPECT_FALSE(Dcgm(v[0]).records[0].pod);  // unattributed
  EXPECT_DOUBLE_EQ(*Dcgm(v[0]).records[0].values.power_watts, 300);
  EXPECT_EQ(Rejected(v[0], kUnknownPod), 2u);  // two lines named it
}

TEST(Vet, APodOnAnotherNodeIsDropped) {
  std::vector<ExporterReadings> v{Read("gpu-operator", "dcgm-a", "gpu-1",
                                       "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-2\","
                                       "namespace=\"ml\",pod=\"serve-0\"} 90\n")};
  VetReadings(v, Cluster());
  EXPECT_FALSE(Dcgm(v[0]).records[0].pod);
  EXPECT_EQ(Rejected(v[0], kPodOnOtherNode), 1u);
  EXPECT_EQ(Rejected(v[0], kUnknownPod), 0u);
}

TEST(Vet, TheNodeIsTheExporterPodsNeverTheHostname) {
  kube::ClusterObjects o = Cluster();
  kube::Pod exporter = testing::MakeRunningPod("gpu-operator", "dcgm-a", "gpu-1", "dcgm");
  o.pods[exporter.Key()] = exporter;
  // No node given: the pod's spec.nodeName, whatever Hostname says.
  std::vector<ExporterReadings> v{Read("gpu-operator", "dcgm-a", "",
                                       "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-9\","
                                       "Hostname=\"gpu-2\",namespace=\"ml\",pod=\"serve-0\"} 9\n")};
  VetReadings(v, o);
  EXPECT_EQ(v[0].node, "gpu-1");
  EXPECT_EQ(Rejected(v[0], kPodOnOtherNode), 1u);
}

TEST(Vet, ProcessLinesOfUnknownPodsLoseTheirPod) {
  std::vector<ExporterReadings> v{
      Read("monitoring", "proc-a", "gpu-1",
           "gpu_process_memory_bytes{namespace=\"ml\",pod=\"train-0\",uuid=\"GPU-1\",gpu=\"0\","
           "pid=\"1\"} 1e9\n"
           "gpu_process_memory_bytes{namespace=\"x\",pod=\"ghost\",uuid=\"GPU-1\",gpu=\"0\","
           "pid=\"2\"} 2e9\n",
           sources::BodyKind::kProcess)};
  VetReadings(v, Cluster());
  const auto& p = std::get<ProcessReadings>(v[0].readings);
  ASSERT_EQ(p.processes.size(), 2u);
  EXPECT_TRUE(p.processes[0].pod);
  EXPECT_FALSE(p.processes[1].pod);
  EXPECT_DOUBLE_EQ(*p.processes[1].memory_bytes, 2e9);  // still the device's memory
  EXPECT_EQ(Rejected(v[0], kUnknownPod), 1u);
}

// bad_value: each rule at its edge and one past it.
TEST(Vet, ValuesOutOfRangeAreDropped) {
  std::vector<ExporterReadings> v{
      Read("gpu-operator", "dcgm-a", "gpu-1",
           "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\"} 100\n"      // 1.0: at the edge, kept
           "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-2\"} 250\n"      // 2.5: dropped
           "DCGM_FI_PROF_SM_ACTIVE{gpu=\"0\",UUID=\"GPU-1\"} 0\n"      // kept
           "DCGM_FI_PROF_SM_ACTIVE{gpu=\"1\",UUID=\"GPU-2\"} -0.1\n"   // dropped
           "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\"} 5000\n"  // kept
           "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"GPU-2\"} 999999\n"
           "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-1\"} 80\n"  // = total: kept
           "DCGM_FI_DEV_FB_TOTAL{gpu=\"0\",UUID=\"GPU-1\"} 80\n"
           "DCGM_FI_DEV_FB_USED{gpu=\"1\",UUID=\"GPU-2\"} 81\n"  // above total: dropped
           "DCGM_FI_DEV_FB_TOTAL{gpu=\"1\",UUID=\"GPU-2\"} 80\n"
           "DCGM_FI_DEV_FB_FREE{gpu=\"1\",UUID=\"GPU-2\"} -1\n")};  // negative memory: dropped
  VetReadings(v, Cluster());
  const auto& good = Dcgm(v[0]).records[0].values;
  const auto& bad = Dcgm(v[0]).records[1].values;
  EXPECT_DOUBLE_EQ(*good.gpu_util, 1.0);
  EXPECT_DOUBLE_EQ(*good.sm_active, 0.0);
  EXPECT_DOUBLE_EQ(*good.power_watts, 5000);
  EXPECT_TRUE(good.memory_used_bytes);
  EXPECT_FALSE(bad.gpu_util);
  EXPECT_FALSE(bad.sm_active);
  EXPECT_FALSE(bad.power_watts);
  EXPECT_FALSE(bad.memory_used_bytes);
  EXPECT_FALSE(bad.memory_free_bytes);
  EXPECT_TRUE(bad.memory_total_bytes);
  EXPECT_EQ(Rejected(v[0], kBadValue), 5u);
}

TEST(Vet, BadProcessAndInferenceValues) {
  std::vector<ExporterReadings> v{
      Read("monitoring", "proc-a", "gpu-1",
           "gpu_process_utilization_percent{namespace=\"ml\",pod=\"train-0\",uuid=\"GPU-1\","
           "gpu=\"0\",pid=\"1\"} 400\n"
           "gpu_process_memory_bytes{namespace=\"ml\",pod=\"train-0\",uuid=\"GPU-1\",gpu=\"0\","
           "pid=\"1\"} -5\n"
           "gpu_power_usage_watts{uuid=\"GPU-1\",gpu=\"0\"} 5001\n",
           sources::BodyKind::kProcess),
      Read("ml", "serve-0", "gpu-2", "vllm:kv_cache_usage_perc{model_name=\"m\"} 1.5\n",
           sources::BodyKind::kVllm)};
  VetReadings(v, Cluster());
  EXPECT_EQ(Rejected(v[0], kBadValue), 3u);
  const auto& p = std::get<ProcessReadings>(v[0].readings);
  EXPECT_FALSE(p.processes[0].utilization);
  EXPECT_FALSE(p.processes[0].memory_bytes);
  EXPECT_FALSE(p.devices[0].power_watts);
  EXPECT_EQ(Rejected(v[1], kBadValue), 1u);
  EXPECT_FALSE(std::get<sources::InferenceReadings>(v[1].readings).models[0].kv_cache_usage);
}

constexpr char kTwoCards[] =
    "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\"} 100\n"
    "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-1\"} 40\n"
    "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"GPU-2\"} 200\n";

TEST(Vet, ADeviceOfTwoExportersStaysWithTheFirstByNamespaceAndName) {
  std::vector<ExporterReadings> v{Read("zz-tenant", "dcgm-fake", "gpu-2",
                                       "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\"} 9\n"),
                                  Read("gpu-operator", "dcgm-a", "gpu-1", kTwoCards)};
  VetReadings(v, Cluster());
  EXPECT_TRUE(Dcgm(v[0]).records.empty());
  EXPECT_EQ(Rejected(v[0], kDuplicateDevice), 1u);
  EXPECT_EQ(Dcgm(v[1]).records.size(), 2u);
  EXPECT_EQ(Rejected(v[1], kDuplicateDevice), 0u);
}

TEST(Vet, APinnedExporterWinsTheDevice) {
  std::vector<ExporterReadings> v{
      Read("gpu-operator", "dcgm-a", "gpu-1", kTwoCards),
      Read("zz", "pinned", "gpu-2", "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-2\"} 9\n")};
  v[1].pinned = true;
  VetReadings(v, Cluster());
  ASSERT_EQ(Dcgm(v[0]).records.size(), 1u);  // GPU-1 only
  EXPECT_EQ(Dcgm(v[0]).records[0].device.uuid, "GPU-1");
  EXPECT_EQ(Rejected(v[0], kDuplicateDevice), 1u);
  EXPECT_EQ(Dcgm(v[1]).records.size(), 1u);
}

// Attribution keys devices by node and GPU index: a second exporter's "GPU 0" on the node, whatever
// its UUID, would merge into the first's (max over lines) and inflate it.
TEST(Vet, TheSameGpuIndexOnOneNodeIsOneDevice) {
  std::vector<ExporterReadings> v{
      Read("tenant", "gpu-telemetry-x", "gpu-1",
           "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-INVENTED\"} 700\n"
           "DCGM_FI_DEV_POWER_USAGE{gpu=\"7\",UUID=\"GPU-OTHER\"} 70\n"),
      Read("gpu-operator", "dcgm-a", "gpu-1", kTwoCards),
      // The same index on another node is another device.
      Read("gpu-operator", "dcgm-b", "gpu-2",
           "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-9\"} 1\n")};
  VetReadings(v, Cluster());
  // Its GPU 0 is dcgm-a's; its GPU 7 is a third card on a node that advertises two.
  EXPECT_TRUE(Dcgm(v[0]).records.empty());
  EXPECT_EQ(Rejected(v[0], kDuplicateDevice), 1u);
  EXPECT_EQ(Rejected(v[0], kOverCapacity), 1u);
  EXPECT_EQ(Dcgm(v[1]).records.size(), 2u);
  EXPECT_EQ(Dcgm(v[2]).records.size(), 1u);
}

TEST(Vet, MigSlicesOfOneCardAreSeparateDevicesOfOneExporter) {
  std::vector<ExporterReadings> v{
      Read("gpu-operator", "dcgm-a", "gpu-1",
           "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-1\",GPU_I_ID=\"1\"} 1\n"
           "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-1\",GPU_I_ID=\"2\"} 1\n"),
      Read("zz", "other", "gpu-1",
           "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-5\",GPU_I_ID=\"2\"} 9\n"
           "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-5\",GPU_I_ID=\"3\"} 9\n")};
  VetReadings(v, Cluster());
  EXPECT_EQ(Dcgm(v[0]).records.size(), 2u);
  ASSERT_EQ(Dcgm(v[1]).records.size(), 1u);  // slice 2 is dcgm-a's; slice 3 nobody else's
  EXPECT_EQ(*Dcgm(v[1]).records[0].device.gpu_instance, "3");
}

TEST(Vet, ExportersOfDifferentKindsShareADevice) {
  std::vector<ExporterReadings> v{
      Read("gpu-operator", "dcgm-a", "gpu-1", kTwoCards),
      Read("monitoring", "proc-a", "gpu-1",
           "gpu_total_memory_bytes{uuid=\"GPU-1\",gpu=\"0\"} 8e10\n", sources::BodyKind::kProcess)};
  VetReadings(v, Cluster());
  EXPECT_EQ(Dcgm(v[0]).records.size(), 2u);
  EXPECT_EQ(std::get<ProcessReadings>(v[1].readings).devices.size(), 1u);
  EXPECT_TRUE(sources::StatsOf(v[1].readings).rejected.empty());
}

TEST(Vet, AQueryApisSeriesForAnUnknownNodeAreDropped) {
  std::vector<ExporterReadings> v{Read("monitoring", "prometheus", "invented-node", kTwoCards),
                                  Read("monitoring", "prometheus", "gpu-1",
                                       "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-7\","
                                       "namespace=\"ml\",pod=\"serve-0\"} 50\n")};
  for (auto& e : v) e.from_query_api = true;
  VetReadings(v, Cluster());
  EXPECT_TRUE(Dcgm(v[0]).records.empty());
  EXPECT_EQ(Rejected(v[0], kUnknownNode), 3u);
  // Its node and pod labels go through the same checks as an exporter's.
  ASSERT_EQ(Dcgm(v[1]).records.size(), 1u);
  EXPECT_FALSE(Dcgm(v[1]).records[0].pod);
  EXPECT_EQ(Rejected(v[1], kPodOnOtherNode), 1u);
}

// The duplicate-device order of docs/design.md#trust: pinned, then trust rules, then DaemonSets in
// exporter namespaces; within a rank the first by namespace/name.
TEST(Vet, ADuplicateDeviceGoesToTheStrongestTrustThenTheFirstByName) {
  std::vector<ExporterReadings> v{
      Read("gpu-operator", "dcgm-a", "gpu-1", kTwoCards),
      Read("a-team", "dcgm-rule", "gpu-1", "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\"} 9\n"),
      Read("zz-ops", "dcgm-pin", "gpu-1", "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"GPU-2\"} 8\n")};
  v[0].rank = 2;  // a DaemonSet in an exporter namespace
  v[1].rank = 1;  // a trust rule names it: it wins GPU 0 from the DaemonSet's pod
  v[2].pinned = true;
  VetReadings(v, Cluster());
  EXPECT_TRUE(Dcgm(v[0]).records.empty());  // GPU 0 is the rule's, GPU 1 the pin's
  EXPECT_EQ(Rejected(v[0], kDuplicateDevice), 3u);
  ASSERT_EQ(Dcgm(v[1]).records.size(), 1u);
  EXPECT_DOUBLE_EQ(*Dcgm(v[1]).records[0].values.power_watts, 9);
  ASSERT_EQ(Dcgm(v[2]).records.size(), 1u);

  // Two DaemonSets of one rank: the first by namespace/name, a-team before gpu-operator. That is
  // why a DaemonSet in a tenant's namespace must never be read at all (candidates.h): here both
  // are in exporter namespaces.
  std::vector<ExporterReadings> w{Read("monitoring", "dcgm-b", "gpu-1", kTwoCards),
                                  Read("gpu-operator", "dcgm-a", "gpu-1", kTwoCards)};
  VetReadings(w, Cluster());
  EXPECT_EQ(Dcgm(w[1]).records.size(), 2u);
  EXPECT_EQ(Rejected(w[0], kDuplicateDevice), 3u);
}

// Issue 25: GPUs 5 and 6 at 4,999 W (below the per-card limit) and a fake XID 79 on a node with
// nvidia.com/gpu: 2.
constexpr char kInventedCards[] =
    "DCGM_FI_DEV_POWER_USAGE{gpu=\"5\",UUID=\"GPU-5757-5\"} 4999\n"
    "DCGM_FI_DEV_XID_ERRORS{gpu=\"5\",UUID=\"GPU-5757-5\"} 79\n"
    "DCGM_FI_DEV_POWER_USAGE{gpu=\"6\",UUID=\"GPU-5757-6\"} 4999\n";

TEST(Vet, CardsBeyondWhatTheNodeAdvertisesAreOverCapacity) {
  std::vector<ExporterReadings> v{Read("gpu-operator", "dcgm-a", "gpu-1", kTwoCards),
                                  Read("monitoring", "gpu-stats", "gpu-1", kInventedCards)};
  VetReadings(v, Cluster());
  EXPECT_EQ(Dcgm(v[0]).records.size(), 2u);
  EXPECT_TRUE(Dcgm(v[1]).records.empty());
  EXPECT_EQ(Rejected(v[1], kOverCapacity), 3u);  // three lines: two powers and the XID
  EXPECT_EQ(Rejected(v[0], kOverCapacity), 0u);

  // One exporter alone: its first two cards by GPU index are the node's two, the rest over.
  std::vector<ExporterReadings> w{
      Read("gpu-operator", "dcgm-a", "gpu-1",
           std::string(kInventedCards) + "DCGM_FI_DEV_POWER_USAGE{gpu=\"10\",UUID=\"GPU-10\"} 9\n"
                                         "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\"} 90\n")};
  VetReadings(w, Cluster());
  ASSERT_EQ(Dcgm(w[0]).records.size(), 2u);
  EXPECT_EQ(Dcgm(w[0]).records[0].device.gpu, "5");
  EXPECT_EQ(Dcgm(w[0]).records[1].device.gpu, "0");
  EXPECT_EQ(Rejected(w[0], kOverCapacity), 2u);  // GPU 6 and GPU 10
}

TEST(Vet, APinnedExporterMayReportMoreCards) {
  std::vector<ExporterReadings> v{Read("gpu-operator", "dcgm-a", "gpu-1", kTwoCards),
                                  Read("ops", "dcgm-pin", "gpu-1", kInventedCards)};
  v[1].pinned = true;
  VetReadings(v, Cluster());
  EXPECT_EQ(Dcgm(v[1]).records.size(), 2u);
  // The pin is outside the rule: its cards do not use up the node's two.
  EXPECT_EQ(Dcgm(v[0]).records.size(), 2u);
  EXPECT_EQ(Rejected(v[0], kOverCapacity), 0u);
  EXPECT_EQ(Rejected(v[1], kOverCapacity), 0u);
}

TEST(Vet, TheNodesAdvertisedCardsCountReplicasMigAndDra) {
  kube::ClusterObjects o = Cluster();
  kube::Node& n = o.nodes["gpu-1"];
  n.capacity = {{"nvidia.com/gpu", 16}};  // time-sliced: 4 replicas of 4 cards
  n.labels["nvidia.com/gpu.replicas"] = "4";
  std::string four;
  for (int i = 0; i < 6; ++i)
    four += "DCGM_FI_DEV_POWER_USAGE{gpu=\"" + std::to_string(i) + "\",UUID=\"G" +
            std::to_string(i) + "\"} 9\n";
  std::vector<ExporterReadings> v{Read("gpu-operator", "dcgm-a", "gpu-1", four)};
  VetReadings(v, o);
  EXPECT_EQ(Dcgm(v[0]).records.size(), 4u);
  EXPECT_EQ(Rejected(v[0], kOverCapacity), 2u);

  // MIG: one card in 7 slices advertises 7 (an upper bound); a DRA slice adds its cards.
  n.labels.clear();
  n.capacity = {{"nvidia.com/mig-1g.10gb", 3}};
  kube::ResourceSlice slice;
  slice.name = "gpu-1-gpu.nvidia.com";
  slice.driver = "gpu.nvidia.com";
  slice.node_name = "gpu-1";
  slice.pool = "gpu-1";
  slice.devices = {{"gpu-0", "gpu", "GPU-D0", "", "", "", std::nullopt},
                   {"gpu-0-mig-1", "mig", "MIG-1", "GPU-D0", "", "1g.10gb", std::nullopt},
                   {"gpu-1", "gpu", "GPU-D1", "", "", "", std::nullopt}};
  o.resource_slices[slice.name] = slice;
  std::vector<ExporterReadings> w{Read("gpu-operator", "dcgm-a", "gpu-1", four)};
  VetReadings(w, o);
  EXPECT_EQ(Dcgm(w[0]).records.size(), 5u);  // 3 + 2 DRA cards
  EXPECT_EQ(Rejected(w[0], kOverCapacity), 1u);
}

TEST(Vet, ANodeThatAdvertisesNothingIsNotBounded) {
  kube::ClusterObjects o = Cluster();
  o.nodes["gpu-1"].capacity.clear();  // no device plugin: the exporter is the only witness
  std::vector<ExporterReadings> v{Read("gpu-operator", "dcgm-a", "gpu-1", kInventedCards)};
  VetReadings(v, o);
  EXPECT_EQ(Dcgm(v[0]).records.size(), 2u);
  // A node that advertises nvidia.com/gpu: 0 has no card.
  o.nodes["gpu-1"].capacity["nvidia.com/gpu"] = 0;
  std::vector<ExporterReadings> w{Read("gpu-operator", "dcgm-a", "gpu-1", kInventedCards)};
  VetReadings(w, o);
  EXPECT_TRUE(Dcgm(w[0]).records.empty());
}

TEST(Vet, ProcessExportersAreBoundedPerKind) {
  std::vector<ExporterReadings> v{
      Read("gpu-operator", "dcgm-a", "gpu-1", kTwoCards),
      Read("monitoring", "proc-a", "gpu-1",
           "gpu_total_memory_bytes{uuid=\"GPU-1\",gpu=\"0\"} 8e10\n"
           "gpu_total_memory_bytes{uuid=\"GPU-2\",gpu=\"1\"} 8e10\n"
           "gpu_process_memory_bytes{namespace=\"ml\",pod=\"train-0\",uuid=\"GPU-X\","
           "gpu=\"5\",pid=\"1\"} 1e9\n",
           sources::BodyKind::kProcess)};
  VetReadings(v, Cluster());
  const auto& p = std::get<ProcessReadings>(v[1].readings);
  EXPECT_EQ(p.devices.size(), 2u);  // the dcgm exporter's cards do not use up the process budget
  EXPECT_TRUE(p.processes.empty());
  EXPECT_EQ(Rejected(v[1], kOverCapacity), 1u);
}

}  // namespace
}  // namespace gpuattr::trust
