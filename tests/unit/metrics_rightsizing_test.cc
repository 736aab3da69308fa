// The rightsizing family group: one row of series per workload, absent when unknown.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuattr/metrics/rightsizing.h"
#include "support/snapshots.h"

namespace gpuattr::metrics {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(MetricsRightsizing, OneRowPerWorkload) {
  rightsizing::RightsizingView view;
  rightsizing::WorkloadView chat;
  chat.id = {"ml", "Deployment", "chat"};
  chat.recommendation = {"whole", "1g.20gb", rightsizing::Reason::kFitsSmaller, 1, 1.0 / 7};
  chat.pods = 2;
  chat.memory_peak_bytes = 12e9;
  chat.utilization_p95 = 0.1;
  chat.observed_seconds = 86400;
  chat.gpu_equivalents = 2;
  chat.reclaimable_gpu_equivalents = 1.5;
  rightsizing::WorkloadView fresh;  // nothing known yet but its pod
  fresh.id = {"ml", "Pod", "notebook"};
  fresh.pods = 1;
  fresh.recommendation = {"whole", "whole", rightsizing::Reason::kInsufficientData, 1, 1};
  view.workloads = {chat, fresh};

  model::Snapshot s;
  s.complete = true;
  model::ClusterSnapshot c;
  c.cluster = "kind-gpu";
  c.latest.up = true;
  gpuattr::testing::MutableOutput(c).rightsizing = view;
  s.clusters.push_back(std::move(c));
  const std::string text = RenderText(s);

  const std::string chat_labels =
      "cluster=\"kind-gpu\",namespace=\"ml\",workload=\"chat\",workload_kind=\"Deployment\"";
  EXPECT_THAT(text, HasSubstr("# TYPE gpuattr_workload_recommendation gauge\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_workload_recommendation{cluster=\"kind-gpu\","
                              "current=\"whole\",namespace=\"ml\",reason=\"fits_smaller\","
                              "recommended=\"1g.20gb\",workload=\"chat\","
                              "workload_kind=\"Deployment\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_workload_pods{" + chat_labels + "} 2\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_workload_memory_peak_bytes{" + chat_labels + "} "));
  EXPECT_THAT(text, HasSubstr("gpuattr_workload_utilization_p95_ratio{" + chat_labels + "} 0.1\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_workload_observed_seconds{" + chat_labels + "} 86400\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_workload_gpu_equivalents{" + chat_labels + "} 2\n"));
  EXPECT_THAT(text,
              HasSubstr("gpuattr_workload_reclaimable_gpu_equivalents{" + chat_labels + "} 1.5\n"));
  // Unknown peak and p95 are absent, never 0.
  EXPECT_THAT(text, Not(HasSubstr("gpuattr_workload_memory_peak_bytes{cluster=\"kind-gpu\","
                                  "namespace=\"ml\",workload=\"notebook\"")));
  EXPECT_THAT(text, HasSubstr("reason=\"insufficient_data\",recommended=\"whole\","
                              "workload=\"notebook\",workload_kind=\"Pod\"} 1\n"));
}

// gpuattr_workload_reclaimable_cost_per_hour: with the currency, only for workloads on priced
// cards (docs/rightsizing.md#reading-a-recommendation).
TEST(MetricsRightsizing, ReclaimableCostOnlyWhenPriced) {
  rightsizing::RightsizingView view;
  view.currency = "EUR";
  rightsizing::WorkloadView priced;
  priced.id = {"ml", "Deployment", "chat"};
  priced.recommendation = {"whole", "1g.20gb", rightsizing::Reason::kFitsSmaller, 1, 1.0 / 7};
  priced.reclaimable_gpu_equivalents = 1.5;
  priced.reclaimable_cost_per_hour = 3.75;
  rightsizing::WorkloadView unpriced = priced;
  unpriced.id = {"ml", "Deployment", "batch"};
  unpriced.reclaimable_cost_per_hour = std::nullopt;
  view.workloads = {unpriced, priced};

  model::Snapshot s;
  s.complete = true;
  model::ClusterSnapshot c;
  c.cluster = "kind-gpu";
  c.latest.up = true;
  gpuattr::testing::MutableOutput(c).rightsizing = view;
  s.clusters.push_back(std::move(c));
  const std::string text = RenderText(s);
  EXPECT_THAT(text, HasSubstr("# TYPE gpuattr_workload_reclaimable_cost_per_hour gauge\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_workload_reclaimable_cost_per_hour{cluster=\"kind-gpu\","
                              "currency=\"EUR\",namespace=\"ml\",workload=\"chat\","
                              "workload_kind=\"Deployment\"} 3.75\n"));
  EXPECT_THAT(text, Not(HasSubstr("gpuattr_workload_reclaimable_cost_per_hour{cluster=\"kind-gpu\","
                                  "currency=\"EUR\",namespace=\"ml\",workload=\"batch\"")));
}

}  // namespace
}  // namespace gpuattr::metrics
