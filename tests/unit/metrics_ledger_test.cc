// The ledger family group: idle gauges and energy counters from a cluster's LedgerView, absent
// when unknown, and nothing at all before a successful cycle.
#include "gpuattr/metrics/ledger.h"
#include "support/snapshots.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuattr::metrics {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

model::Snapshot WithLedger(std::shared_ptr<const ledger::LedgerView> view) {
  model::Snapshot s;
  s.complete = true;
  model::ClusterSnapshot c;
  c.cluster = "kind-gpu";
  c.latest.up = true;
  if (view) gpuattr::testing::MutableOutput(c).ledger = *view;
  s.clusters.push_back(std::move(c));
  return s;
}

TEST(MetricsLedger, IdleGaugesAndEnergyCounters) {
  auto v = std::make_shared<ledger::LedgerView>();
  v->cluster = "kind-gpu";
  v->pods.push_back({{"ml", "idle-nb"}, "gpu-1", true, 120.0, 2400.5});
  v->pods.push_back({{"ml", "trainer"}, "gpu-2", false, 0.0, 6000.0});
  v->pods.push_back({{"ml", "unknown"}, "gpu-2", std::nullopt, std::nullopt, std::nullopt});
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

TEST(MetricsLedger, NothingBeforeTheFirstSuccessfulCycle) {
  const std::string text = RenderText(WithLedger(nullptr));
  EXPECT_THAT(text, Not(HasSubstr("gpuattr_pod_idle")));
  EXPECT_THAT(text, Not(HasSubstr("energy_joules_total")));
}

}  // namespace
}  // namespace gpuattr::metrics
