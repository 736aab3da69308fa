// The ledger family group: idle gauges and energy counters from a cluster's LedgerView, absent
// when unknown, and nothing at all before a successful cycle.
#include "gpuattr/metrics/ledger.h"
#include "support/snapshots.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuattr::metrics {
namespace {

using gpuattr::testing::AttributedPod;
using ::testing::HasSubstr;
using ::testing::Not;

model::Snapshot WithLedger(std::shared_ptr<const ledger::LedgerView> view,
                           const std::vector<attribution::Pod>& pods = {}) {
  model::Snapshot s;
  s.complete = true;
  model::ClusterSnapshot c;
  c.cluster = "kind-gpu";
  c.latest.up = true;
  if (view) {
    model::CycleOutput& out = gpuattr::testing::MutableOutput(c);
    out.ledger = *view;
    out.attribution.pods = pods;
  }
  s.clusters.push_back(std::move(c));
  return s;
}

TEST(MetricsLedger, IdleGaugesAndEnergyCounters) {
  auto v = std::make_shared<ledger::LedgerView>();
  v->cluster = "kind-gpu";
  v->other_pods.push_back({{"ml", "idle-nb"}, "gpu-1", true, 120.0, 2400.5});
  v->other_pods.push_back({{"ml", "trainer"}, "gpu-2", false, 0.0, 6000.0});
  v->other_pods.push_back({{"ml", "unknown"}, "gpu-2", std::nullopt, std::nullopt, std::nullopt});
  v->namespaces.push_back({"ml", 9000.25});
  const std::string text = RenderText(WithLedger(v));

  EXPECT_THAT(text, HasSubstr("# TYPE gpuattr_pod_idle gauge\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_pod_idle{cluster=\"kind-gpu\",namespace=\"ml\","
                              "node=\"gpu-1\",pod=\"idle-nb\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_pod_idle{cluster=\"kind-gpu\",namespace=\"ml\","
                              "node=\"gpu-2\",pod=\"trainer\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_pod_idle_seconds{cluster=\"kind-gpu\",namespace=\"ml\","
                              "node=\"gpu-1\",pod=\"idle-nb\"} 120\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_pod_idle_seconds{cluster=\"kind-gpu\",namespace=\"ml\","
                              "node=\"gpu-2\",pod=\"trainer\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE gpuattr_pod_energy_joules_total counter\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_pod_energy_joules_total{cluster=\"kind-gpu\","
                              "namespace=\"ml\",node=\"gpu-1\",pod=\"idle-nb\"} 2400.5\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE gpuattr_namespace_energy_joules_total counter\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_namespace_energy_joules_total{cluster=\"kind-gpu\","
                              "namespace=\"ml\"} 9000.25\n"));
  EXPECT_THAT(text, Not(HasSubstr("pod=\"unknown\"")));  // absent means unknown
}

// Rows that name their pod by index into the cycle's attribution render exactly as rows with
// their own names, merged in pod order with the named rows (kept pods); the ledger families
// read no other field of the attribution.
TEST(MetricsLedger, RowsByIndexRenderAsNamedRows) {
  const std::vector<attribution::Pod> pods = {AttributedPod("idle-nb", "gpu-1"),
                                              AttributedPod("trainer", "gpu-2"),
                                              AttributedPod("unknown", "gpu-2")};
  auto named = std::make_shared<ledger::LedgerView>();
  named->cluster = "kind-gpu";
  named->other_pods = {{{"ml", "idle-nb"}, "gpu-1", true, 120.0, 2400.5},
                       {{"ml", "kept"}, "gpu-3", std::nullopt, std::nullopt, 70.0},
                       {{"ml", "trainer"}, "gpu-2", false, 0.0, 6000.0},
                       {{"ml", "unknown"}, "gpu-2", std::nullopt, std::nullopt, std::nullopt}};
  named->namespaces.push_back({"ml", 9000.25});
  auto by_index = std::make_shared<ledger::LedgerView>(*named);
  by_index->attributed_pods = {{0, true, true, true, 120.0, 2400.5},
                               {1, true, false, true, 0.0, 6000.0},
                               {2, false, false, false, 0, 0}};
  by_index->other_pods = {named->other_pods[1]};
  const std::string text = RenderText(WithLedger(by_index, pods));
  EXPECT_EQ(text, RenderText(WithLedger(named, pods)));
  EXPECT_THAT(text, HasSubstr("gpuattr_pod_idle_seconds{cluster=\"kind-gpu\",namespace=\"ml\","
                              "node=\"gpu-1\",pod=\"idle-nb\"} 120\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_pod_energy_joules_total{cluster=\"kind-gpu\","
                              "namespace=\"ml\",node=\"gpu-3\",pod=\"kept\"} 70\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_pod_energy_joules_total{cluster=\"kind-gpu\","
                              "namespace=\"ml\",node=\"gpu-2\",pod=\"trainer\"} 6000\n"));
  for (const char* family :
       {"gpuattr_pod_idle{", "gpuattr_pod_idle_seconds{", "gpuattr_pod_energy_joules_total{"})
    EXPECT_THAT(text, Not(HasSubstr(std::string(family) + "cluster=\"kind-gpu\",namespace=\"ml\","
                                                          "node=\"gpu-2\",pod=\"unknown\"}")));
}

TEST(MetricsLedger, NothingBeforeTheFirstSuccessfulCycle) {
  const std::string text = RenderText(WithLedger(nullptr));
  EXPECT_THAT(text, Not(HasSubstr("gpuattr_pod_idle")));
  EXPECT_THAT(text, Not(HasSubstr("energy_joules_total")));
}

}  // namespace
}  // namespace gpuattr::metrics
