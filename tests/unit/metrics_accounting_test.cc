// The accounting family group: GPU-hours counters per basis, cost counters only for what was
// priced (with the currency), card prices, and only the bases accounting.bases publishes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuattr/metrics/accounting.h"
#include "support/snapshots.h"

namespace gpuattr::metrics {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

model::Snapshot WithView(const ledger::LedgerView& view) {
  model::Snapshot s;
  s.complete = true;
  model::ClusterSnapshot c;
  c.cluster = "kind-gpu";
  c.latest.up = true;
  gpuattr::testing::MutableOutput(c).ledger = view;
  s.clusters.push_back(std::move(c));
  return s;
}

ledger::LedgerView SampleView() {
  ledger::LedgerView v;
  v.cluster = "kind-gpu";
  v.currency = "EUR";
  v.pod_gpu_hours.push_back(
      {{"ml", "train"}, "gpu-1", {2, 1.5, 0.5}, accounting::PerBasis{6, 4.5, 1.5}});
  v.pod_gpu_hours.push_back({{"ml", "cheap"}, "gpu-2", {1, 1, 1}, std::nullopt});  // unpriced
  v.namespace_gpu_hours.push_back({{}, "ml", {3, 2.5, 1.5}, accounting::PerBasis{6, 4.5, 1.5}});
  v.node_idle_gpu_hours.push_back({{}, "gpu-1", {0, 0.5, 1.5}, accounting::PerBasis{0, 1.5, 4.5}});
  v.node_idle_gpu_hours.push_back({{}, "gpu-2", {0, 0, 0}, std::nullopt});
  v.card_prices.push_back({"gpu-1", "0", "GPU-1", "NVIDIA A100-SXM4-80GB", 3});
  return v;
}

TEST(MetricsAccounting, HoursPerBasisCostsOnlyWherePriced) {
  const std::string text = RenderText(WithView(SampleView()));
  EXPECT_THAT(text, HasSubstr("# TYPE gpuattr_pod_gpu_hours_total counter\n"));
  EXPECT_THAT(text,
              HasSubstr("gpuattr_pod_gpu_hours_total{basis=\"allocation\",cluster=\"kind-gpu\","
                        "namespace=\"ml\",node=\"gpu-1\",pod=\"train\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_pod_gpu_hours_total{basis=\"usage\",cluster=\"kind-gpu\","
                              "namespace=\"ml\",node=\"gpu-2\",pod=\"cheap\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_namespace_gpu_hours_total{basis=\"memory\",cluster=\"kind-"
                              "gpu\",namespace=\"ml\"} 2.5\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_node_idle_gpu_hours_total{basis=\"usage\",cluster=\"kind-"
                              "gpu\",node=\"gpu-1\"} 1.5\n"));
  EXPECT_THAT(text,
              HasSubstr("gpuattr_pod_cost_total{basis=\"allocation\",cluster=\"kind-gpu\","
                        "currency=\"EUR\",namespace=\"ml\",node=\"gpu-1\",pod=\"train\"} 6\n"));
  EXPECT_THAT(text,
              Not(HasSubstr("gpuattr_pod_cost_total{basis=\"allocation\",cluster=\"kind-gpu\","
                            "currency=\"EUR\",namespace=\"ml\",node=\"gpu-2\"")));
  EXPECT_THAT(text, HasSubstr("gpuattr_node_idle_cost_total{basis=\"usage\",cluster=\"kind-gpu\","
                              "currency=\"EUR\",node=\"gpu-1\"} 4.5\n"));
  EXPECT_THAT(text, Not(HasSubstr("gpuattr_node_idle_cost_total{basis=\"usage\",cluster=\"kind-"
                                  "gpu\",currency=\"EUR\",node=\"gpu-2\"")));
  EXPECT_THAT(text, HasSubstr("gpuattr_card_price_per_hour{cluster=\"kind-gpu\",currency=\"EUR\","
                              "gpu=\"0\",model=\"NVIDIA A100-SXM4-80GB\",node=\"gpu-1\",uuid=\"GPU-"
                              "1\"} 3\n"));
}

TEST(MetricsAccounting, PublishesOnlyTheConfiguredBases) {
  ledger::LedgerView v = SampleView();
  v.bases = {accounting::Basis::kUsage};
  const std::string text = RenderText(WithView(v));
  EXPECT_THAT(text, HasSubstr("basis=\"usage\""));
  EXPECT_THAT(text, Not(HasSubstr("basis=\"allocation\"")));
  EXPECT_THAT(text, Not(HasSubstr("basis=\"memory\"")));
}

}  // namespace
}  // namespace gpuattr::metrics
