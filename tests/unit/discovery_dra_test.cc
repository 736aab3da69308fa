// DRA in discovery: a ResourceSlice publishing a GPU opens the "GPU present" gate, and a ready pod
// holding a DRA GPU device is an inference candidate.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuattr/discovery/candidates.h"

namespace gpuattr::discovery {
namespace {

using ::testing::HasSubstr;

kube::ClusterObjects DraOnlyCluster() {
  kube::ClusterObjects o;
  kube::ResourceSlice s;
  s.name = "n1-gpu";
  s.driver = "gpu.nvidia.com";
  s.pool = "n1";
  kube::DraDevice d;
  d.name = "gpu-0";
  d.type = "gpu";
  d.uuid = "GPU-0";
  s.devices.push_back(d);
  o.resource_slices[s.name] = s;
  kube::Pod p;
  p.namespace_ = "ml";
  p.name = "trainer";  // no inference keyword, no nvidia.com/ request
  p.node_name = "n1";
  p.phase = "Running";
  p.all_containers_ready = true;
  kube::Container c0;
  c0.ports.push_back({"http", 8000});  // a port-less pod would never be probed
  p.containers.push_back(c0);
  o.pods[p.Key()] = p;
  kube::ResourceClaim c;
  c.namespace_ = "ml";
  c.name = "trainer-gpu";
  c.allocated = true;
  c.results.push_back({"gpu", "gpu.nvidia.com", "n1", "gpu-0"});
  c.reserved_for.push_back({"pods", "trainer", ""});
  o.resource_claims[c.Key()] = c;
  return o;
}

TEST(DiscoveryDra, ASliceWithAGpuOpensTheGate) {
  kube::ClusterObjects o = DraOnlyCluster();
  GpuPresence g = DetectGpuPresence(o);
  EXPECT_TRUE(g.present);
  EXPECT_THAT(g.reason, HasSubstr("DRA ResourceSlice n1-gpu publishes GPU device gpu-0"));
  o.resource_slices.begin()->second.driver = "nic.example.com";  // not a GPU driver
  EXPECT_FALSE(DetectGpuPresence(o).present);
}

TEST(DiscoveryDra, AHolderOfADraGpuIsAnInferenceCandidate) {
  kube::ClusterObjects o = DraOnlyCluster();
  auto c = InferenceCandidates(o);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].pod, "trainer");
  EXPECT_EQ(c[0].why, "holds a DRA GPU device (claim ml/trainer-gpu)");
  o.resource_claims.clear();
  EXPECT_TRUE(InferenceCandidates(o).empty());
}

}  // namespace
}  // namespace gpuattr::discovery
