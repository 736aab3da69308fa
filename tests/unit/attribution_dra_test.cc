// DRA in attribution (docs/design.md#tiers): who holds a device according to ResourceClaims, tier-3
// candidate pods from those holders, and DRA holders counted as GPU pods.
#include <gtest/gtest.h>

#include "golden/attribution_harness.h"
#include "gpuattr/attribution/attribution.h"
#include "gpuattr/kube/dra_gpus.h"

namespace gpuattr::attribution {
namespace {

using gpuattr::testing::ReadExporter;

kube::Pod MakePod(const std::string& ns, const std::string& name, const std::string& node,
                  const std::string& phase = "Running", const std::string& uid = "") {
  kube::Pod p;
  p.namespace_ = ns;
  p.name = name;
  p.uid = uid;
  p.node_name = node;
  p.phase = phase;
  p.containers.push_back(kube::Container{});
  return p;
}

kube::DraDevice Device(const std::string& name, const std::string& type, const std::string& uuid,
                       const std::string& parent = "") {
  kube::DraDevice d;
  d.name = name;
  d.type = type;
  d.uuid = uuid;
  d.parent_uuid = parent;
  return d;
}

// A claim in `ns` allocated `devices` (of pool p1) and reserved for pod `holder`.
kube::ResourceClaim Claim(const std::string& ns, const std::string& name,
                          const std::vector<std::string>& devices, const std::string& holder,
                          const std::string& holder_uid = "") {
  kube::ResourceClaim c;
  c.namespace_ = ns;
  c.name = name;
  c.allocated = true;
  for (const auto& d : devices) c.results.push_back({"r", "gpu.nvidia.com", "p1", d});
  if (!holder.empty()) c.reserved_for.push_back({"pods", holder, holder_uid});
  return c;
}

// Node n1: whole GPUs U0 and U1 and card U3 split into MIG devices published by DRA; GPU U2 is
// not in any slice (a device-plugin GPU beside DRA).
kube::ClusterObjects Objects() {
  kube::ClusterObjects o;
  kube::ResourceSlice s;
  s.name = "n1-gpu.nvidia.com";
  s.driver = "gpu.nvidia.com";
  s.node_name = "n1";
  s.pool = "p1";
  s.devices = {Device("gpu-0", "gpu", "U0"), Device("gpu-1", "gpu", "U1"),
               Device("gpu-3-mig-0", "mig", "MIG-a", "U3"),
               Device("gpu-3-mig-1", "mig", "MIG-b", "U3")};
  o.resource_slices[s.name] = s;
  kube::ResourceSlice other;  // another driver's devices are not GPUs
  other.name = "n1-nic";
  other.driver = "nic.example.com";
  other.pool = "p1";
  other.devices = {Device("nic-0", "gpu", "U1")};
  o.resource_slices[other.name] = other;

  o.pods["ml/llm"] = MakePod("ml", "llm", "n1", "Running", "uid-llm");
  o.pods["lab/nb"] = MakePod("lab", "nb", "n1");
  o.pods["ml/plain"] = MakePod("ml", "plain", "n1");
  o.pods["ml/plain"].containers[0].limits["nvidia.com/gpu"] = 1;  // the device-plugin GPU pod
  o.pods["ml/done"] = MakePod("ml", "done", "n1", "Succeeded");
  o.pods["ml/replaced"] = MakePod("ml", "replaced", "n1", "Running", "uid-new");
  o.resource_claims["ml/llm-gpu"] = Claim("ml", "llm-gpu", {"gpu-0"}, "llm", "uid-llm");
  o.resource_claims["lab/nb-slice"] = Claim("lab", "nb-slice", {"gpu-3-mig-1"}, "nb");
  o.resource_claims["ml/done-gpu"] = Claim("ml", "done-gpu", {"gpu-1"}, "done");
  o.resource_claims["ml/stale"] = Claim("ml", "stale", {"gpu-1"}, "replaced", "uid-old");
  o.resource_claims["ml/nic"] = Claim("ml", "nic", {"nic-0"}, "plain");
  return o;
}

TEST(DraGpuIndex, HoldersByUuidAndByParentCard) {
  kube::ClusterObjects o = Objects();
  kube::DraGpuIndex idx = kube::IndexDraGpus(o);
  using Set = std::set<kube::PodId>;
  EXPECT_EQ(idx.by_uuid.at("U0"), (Set{{"ml", "llm"}}));
  // U1 is known and free: the Succeeded pod and the claim of a replaced pod (uid differs) hold
  // nothing, and the NIC driver's "U1" is not a GPU.
  EXPECT_EQ(idx.by_uuid.at("U1"), Set{});
  EXPECT_EQ(idx.by_uuid.at("MIG-b"), (Set{{"lab", "nb"}}));
  EXPECT_EQ(idx.by_parent_uuid.at("U3"), (Set{{"lab", "nb"}}));
  EXPECT_EQ(idx.by_uuid.count("U2"), 0u);
  EXPECT_EQ(idx.holders.size(), 2u);
  EXPECT_EQ(idx.holders.at({"ml", "llm"}), "ml/llm-gpu");
  EXPECT_EQ(idx.holders.at({"lab", "nb"}), "lab/nb-slice");

  // A MIG slice asks the card's MIG devices; a whole GPU its own UUID; unknown: nullptr.
  ASSERT_NE(idx.HoldersOf("U3", true), nullptr);
  EXPECT_EQ(*idx.HoldersOf("U3", true), (Set{{"lab", "nb"}}));
  EXPECT_EQ(*idx.HoldersOf("U0", false), (Set{{"ml", "llm"}}));
  EXPECT_EQ(*idx.HoldersOf("U3", false), (Set{{"lab", "nb"}}));  // falls back to the slices
  EXPECT_EQ(idx.HoldersOf("U2", false), nullptr);
  EXPECT_EQ(idx.HoldersOf("", false), nullptr);

  EXPECT_TRUE(kube::IndexDraGpus(kube::ClusterObjects{}).by_uuid.empty());
}

TEST(DraGpuIndex, PendingPodBoundToANodeHoldsItsDevice) {
  kube::ClusterObjects o = Objects();
  o.pods["ml/llm"].phase = "Pending";
  EXPECT_EQ(kube::IndexDraGpus(o).holders.count({"ml", "llm"}), 1u);
  o.pods["ml/llm"].node_name.clear();
  EXPECT_EQ(kube::IndexDraGpus(o).holders.count({"ml", "llm"}), 0u);
}

TEST(AttributionDra, TierThreeCandidatesComeFromClaimsElseTheNodesGpuPods) {
  kube::ClusterObjects o = Objects();
  const std::string body =
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"U0\"} 300\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"U1\"} 60\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"2\",UUID=\"U2\"} 200\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"3\",UUID=\"U3\",GPU_I_PROFILE=\"3g.40gb\",GPU_I_ID=\"1\"} "
      "250\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"3\",UUID=\"U3\",GPU_I_PROFILE=\"3g.40gb\",GPU_I_ID=\"2\"} "
      "250\n";
  auto e = ReadExporter("gpu-operator", "dcgm", "n1", body);
  ASSERT_TRUE(e.ok());
  Attribution a = Attribute(AttributionInput{"c1", o, {std::move(*e)}, {}});
  auto candidates = [&](const std::string& gpu, std::optional<std::string> gi) {
    for (const auto& d : a.devices)
      if (d.id.gpu == gpu && d.id.gpu_instance == gi) return d.candidate_pods;
    ADD_FAILURE() << "no device " << gpu;
    return std::vector<kube::PodId>{};
  };
  EXPECT_EQ(candidates("0", std::nullopt), (std::vector<kube::PodId>{{"ml", "llm"}}));
  EXPECT_TRUE(candidates("1", std::nullopt).empty());
  // DRA says nothing about U2: the node's pods holding GPU resources.
  EXPECT_EQ(candidates("2", std::nullopt), (std::vector<kube::PodId>{{"ml", "plain"}}));
  EXPECT_EQ(candidates("3", "1"), (std::vector<kube::PodId>{{"lab", "nb"}}));
  EXPECT_EQ(candidates("3", "2"), (std::vector<kube::PodId>{{"lab", "nb"}}));
  EXPECT_TRUE(a.pods.empty());  // never an owner

  std::map<std::string, size_t> gpu_pods;
  for (const auto& n : a.namespaces) gpu_pods[n.name] = n.gpu_pods;
  EXPECT_EQ(gpu_pods["ml"], 2u);  // plain (device plugin) and llm (DRA)
  EXPECT_EQ(gpu_pods["lab"], 1u);
}

TEST(AttributionDra, ADraHolderUsingItsGpuIsNotUnrequestedUse) {
  kube::ClusterObjects o = Objects();
  o.pods["ml/llm"].resource_claims.push_back({"gpu", "llm-gpu"});
  const std::string body =
      "gpu_process_memory_bytes{namespace=\"ml\",pod=\"llm\",container=\"c\",pid=\"1\",gpu=\"0\","
      "uuid=\"U0\"} 4000\n"
      "gpu_total_memory_bytes{gpu=\"0\",uuid=\"U0\"} 10000\n";
  auto e = ReadExporter("monitoring", "proc", "n1", body);
  ASSERT_TRUE(e.ok());
  Attribution a = Attribute(AttributionInput{"c1", o, {std::move(*e)}, {}});
  ASSERT_EQ(a.pods.size(), 1u);
  EXPECT_EQ(a.pods[0].id, (kube::PodId{"ml", "llm"}));
  EXPECT_FALSE(a.pods[0].unrequested_gpu_use);
}

}  // namespace
}  // namespace gpuattr::attribution
