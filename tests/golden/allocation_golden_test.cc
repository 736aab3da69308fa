// Allocation over real-shaped scenarios: fixtures/scenarios/dra (DRA v1: 2 whole H100s + 2 MIG
// devices, a GPU and a MIG claim allocated, an 8-GPU claim pending), attr-a100-mixed (a mixed
// MIG node) and the node shapes of tests/golden/node_shapes_test.cc (both exporters on a
// time-sliced node, `.shared` at 0, trimmed counter lists, replicas renamed and not). The
// allocation group's exposition is compared with
// tests/golden/allocation_golden/NAME.prom (UPDATE_GOLDEN=1 regenerates) and must pass
// `promtool check metrics` silently (skipped when promtool is absent).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "golden/attribution_harness.h"
#include "gpuattr/allocation/allocation.h"
#include "support/golden.h"
#include "support/promtool.h"
#include "test_paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;

constexpr double kNow = 1'780'000'000;

// The DRA objects of fixtures/scenarios/dra/dra/*.yaml as records. Added only where the loader
// did not decode them already (emplace), so a DRA decoder in the harness takes over unchanged.
void AddDraFixtureRecords(kube::ClusterObjects& o) {
  kube::ResourceSlice s;
  s.name = "dgx-a-gpu.nvidia.com-x7r2q";
  s.driver = "gpu.nvidia.com";
  s.node_name = "dgx-a";
  s.pool = "dgx-a";
  auto device = [](std::string name, std::string type, std::string profile) {
    kube::DraDevice d;
    d.name = std::move(name);
    d.type = std::move(type);
    d.profile = std::move(profile);
    d.product_name = "NVIDIA H100 80GB HBM3";
    return d;
  };
  s.devices = {device("gpu-0", "gpu", ""), device("gpu-1", "gpu", ""),
               device("gpu-2-mig-3g40gb-0", "mig", "3g.40gb"),
               device("gpu-2-mig-3g40gb-1", "mig", "3g.40gb")};
  o.resource_slices.emplace(s.name, s);

  kube::ResourceClaim llm;
  llm.namespace_ = "ml";
  llm.name = "llm-dra-0-gpu-7kq2x";
  llm.requests = {{"gpu", "gpu.nvidia.com", "ExactCount", 1}};
  llm.allocated = true;
  llm.results = {{"gpu", "gpu.nvidia.com", "dgx-a", "gpu-0"}};
  llm.reserved_for = {{"pods", "llm-dra-0", "7d0c6f0e-1c2b-4a5d-9e8f-000000000101"}};
  o.resource_claims.emplace(llm.Key(), llm);

  kube::ResourceClaim nb;
  nb.namespace_ = "research";
  nb.name = "notebook-mig-slice";
  nb.requests = {{"slice", "mig.nvidia.com", "ExactCount", 1}};
  nb.allocated = true;
  nb.results = {{"slice", "gpu.nvidia.com", "dgx-a", "gpu-2-mig-3g40gb-0"}};
  nb.reserved_for = {{"pods", "notebook-mig", "7d0c6f0e-1c2b-4a5d-9e8f-000000000102"}};
  o.resource_claims.emplace(nb.Key(), nb);

  kube::ResourceClaim eight;
  eight.namespace_ = "ml";
  eight.name = "eight-gpus";
  eight.requests = {{"gpus", "gpu.nvidia.com", "ExactCount", 8}};
  o.resource_claims.emplace(eight.Key(), eight);
}

struct Loaded {
  AttributionCase c;
  attribution::Attribution attribution;
  allocation::Allocation allocation;
};

Loaded Load(const std::string& name) {
  auto c = LoadAttributionCase(FixturePath("scenarios/" + name));
  EXPECT_TRUE(c.ok()) << c.error().message;
  Loaded l;
  if (!c.ok()) return l;
  l.c = std::move(*c);
  if (name == "dra") AddDraFixtureRecords(l.c.objects);
  model::CycleOutput out = RunCase(l.c, "test", kNow);
  l.attribution = std::move(out.attribution);
  l.allocation = std::move(out.allocation);
  return l;
}

// The families of the allocation group only, through the real group table.
std::string RenderAllocation(const allocation::Allocation& a) {
  model::ClusterSnapshot cs;
  cs.cluster = a.cluster;
  auto out = std::make_shared<model::CycleOutput>();
  out->allocation = a;
  cs.latest.output = std::move(out);
  return gpuattr::testing::RenderGroups(std::move(cs), {"allocation"});
}

TEST(AllocationDraScenario, NodeHoldsTwoDevicesAndTheEightGpuJobIsHinted) {
  Loaded l = Load("dra");
  const allocation::Allocation& a = l.allocation;
  ASSERT_EQ(a.nodes.size(), 1u);
  EXPECT_EQ(a.nodes[0].node, "dgx-a");
  EXPECT_EQ(a.nodes[0].capacity, 4);
  EXPECT_EQ(a.nodes[0].allocatable, 4);
  EXPECT_EQ(a.nodes[0].requested, 2);
  ASSERT_EQ(a.pending.size(), 1u);
  EXPECT_EQ(a.pending[0].pod, (kube::PodId{"ml", "big-train"}));
  EXPECT_EQ(a.pending[0].hint.code, "dra_exceeds_node_max");
  EXPECT_EQ(a.pending[0].hint.text,
            "Needs 8 gpu on one node (claim eight-gpus); the most any node offers is 2.");
  ASSERT_EQ(a.pods.size(), 2u);
  EXPECT_EQ(a.pods[0].pod, (kube::PodId{"ml", "llm-dra-0"}));
  EXPECT_EQ(a.pods[0].requested, (allocation::ResourceCounts{{"gpu.nvidia.com/gpu", 1}}));
  EXPECT_EQ(a.pods[1].pod, (kube::PodId{"research", "notebook-mig"}));
  EXPECT_EQ(a.pods[1].requested, (allocation::ResourceCounts{{"gpu.nvidia.com/mig-3g.40gb", 1}}));
}

TEST(AllocationMixedScenario, MixedMigNodesOfferEveryProfile) {
  Loaded l = Load("attr-a100-mixed");
  ASSERT_FALSE(l.allocation.nodes.empty());
  for (const allocation::NodeAllocation& n : l.allocation.nodes) {
    EXPECT_EQ(n.capacity, 48) << n.node;
    EXPECT_GT(n.seen, 0u) << n.node;
  }
}

class AllocationGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(AllocationGolden, MatchesExposition) {
  std::string text = RenderAllocation(Load(GetParam()).allocation);
  ASSERT_FALSE(text.empty());
  auto golden = fs::path(GPUATTR_SOURCE_DIR) / "tests" / "golden" / "allocation_golden" /
                (GetParam() + ".prom");
  auto r = CompareGolden(golden, text);
  EXPECT_TRUE(r.ok) << r.message;
}

TEST_P(AllocationGolden, PromtoolCheckMetricsPrintsNothing) {
  std::string text = RenderAllocation(Load(GetParam()).allocation);
  ASSERT_FALSE(text.empty());
  auto lint = gpuattr::testing::PromtoolCheckMetrics(text);
  if (!lint.available) GTEST_SKIP() << "/usr/bin/promtool is not installed";
  EXPECT_EQ(lint.exit_code, 0) << lint.printed;
  EXPECT_EQ(lint.printed, "");
}

INSTANTIATE_TEST_SUITE_P(Scenarios, AllocationGolden,
                         ::testing::Values("dra", "attr-a100-mixed", "attr-dcgm-and-process",
                                           "attr-mig-single", "attr-gke-partition", "attr-mps",
                                           "attr-gke-sharing", "attr-hami", "attr-hami-monitor",
                                           "attr-mig-shared-zero", "attr-custom-counters",
                                           "attr-replicas", "attr-timesliced-vgpu"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace gpuattr::testing
