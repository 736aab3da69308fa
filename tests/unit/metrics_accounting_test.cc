// The accounting family group: GPU-hours counters per basis, cost counters only for what was
// priced (with the currency), card prices, and only the bases accounting.bases publishes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuattr/metrics/accounting.h"
#include "support/snapshots.h"

namespace gpuattr::metrics {
namespace {

using gpuattr::testing::AttributedPod;
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
  v.other_pod_hours.push_back(
      {{"ml", "train"}, "gpu-1", {2, 1.5, 0.5}, accounting::PerBasis{6, 4.5, 1.5}});
  v.other_pod_hours.push_back({{"ml", "cheap"}, "gpu-2", {1, 1, 1}, std::nullopt});  // unpriced
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

accounting::CardAccount Card(
    const std::string& node,
    const std::vector<std::pair<kube::PodId, accounting::PerBasis>>& pods) {
  accounting::CardAccount c;
  c.node = node;
  c.gpu = "0";
  c.uuid = "GPU-" + node;
  accounting::PerBasis idle{1, 1, 1};
  for (const auto& [id, v] : pods) {
    c.pods.push_back({id, "uid-" + id.name, v});
    for (size_t b = 0; b < accounting::kBases; ++b) idle[b] -= v[b];
  }
  c.idle = idle;
  return c;
}

// The pod rows that name their pods by index into the attribution render exactly as rows with
// their own names (the ledger given no attribution: every row named). Of the records: ml/a (on an
// unpriced card) and ml/g are attributed on their record's node; ml/e is attributed but missed
// this cycle's cards (its record kept); ml/b is attributed on another node than the one it accrued
// on (an exporter naming a pod of another node); ml/c has a record but is not attributed; ml/d is
// attributed without a record. Every series carries the record's own namespace, pod and node.
TEST(MetricsAccounting, PodRowsByIndexRenderAsNamedRows) {
  const kube::PodId a{"ml", "a"}, b{"ml", "b"}, c{"ml", "c"}, e{"ml", "e"}, g{"ml", "g"};
  const ledger::PodUids uids = {
      {a, "uid-a"}, {b, "uid-b"}, {c, "uid-c"}, {e, "uid-e"}, {g, "uid-g"}};
  const std::vector<std::optional<double>> prices = {2.5, std::nullopt};  // n1 priced, n2 not
  const auto cards = [&](bool with_e) {
    std::vector<std::pair<kube::PodId, accounting::PerBasis>> n1 = {{b, {0.25, 0.25, 0.25}},
                                                                    {c, {0.25, 0.25, 0.1}}};
    if (with_e) n1.push_back({e, {0.5, 0.5, 0.5}});
    return std::vector<accounting::CardAccount>{
        Card("n1", n1), Card("n2", {{a, {0.5, 0.5, 0.5}}, {g, {0.5, 0.25, 0}}})};
  };
  const std::vector<attribution::Pod> pods = {AttributedPod("a", "n2"), AttributedPod("b", "n3"),
                                              AttributedPod("d", "n1"), AttributedPod("e", "n1"),
                                              AttributedPod("g", "n2")};
  ledger::Ledger by_index, named;
  ledger::LedgerView first_by_index, first_named, v, w;
  by_index.RecordGpuHours(cards(true), prices, "EUR", 1000, &uids, first_by_index, {}, &pods);
  named.RecordGpuHours(cards(true), prices, "EUR", 1000, &uids, first_named);
  by_index.RecordGpuHours(cards(false), prices, "EUR", 1060, &uids, v, {}, &pods);
  named.RecordGpuHours(cards(false), prices, "EUR", 1060, &uids, w);
  v.cluster = w.cluster = "kind-gpu";

  ASSERT_EQ(v.pod_hours.size(), 3u);  // a, e, g
  EXPECT_EQ(v.pod_hours[0].pod, 0u);
  EXPECT_EQ(v.pod_hours[1].pod, 3u);
  EXPECT_EQ(v.pod_hours[2].pod, 4u);
  EXPECT_FALSE(v.pod_hours[0].priced);
  EXPECT_TRUE(v.pod_hours[1].priced);
  EXPECT_EQ(v.pod_costs.size(), 3u);
  ASSERT_EQ(v.other_pod_hours.size(), 2u);  // b on n1, c
  EXPECT_EQ(v.other_pod_hours[0].pod, b);
  EXPECT_EQ(v.other_pod_hours[0].name, "n1");
  EXPECT_EQ(v.other_pod_hours[1].pod, c);
  EXPECT_TRUE(w.pod_hours.empty());
  EXPECT_EQ(w.other_pod_hours.size(), 5u);

  // Both with the attribution (its own families render alike): the named rows do not read it.
  const auto with_pods = [&](const ledger::LedgerView& view) {
    model::Snapshot s = WithView(view);
    gpuattr::testing::MutableOutput(s.clusters[0]).attribution.pods = pods;
    return RenderText(s);
  };
  const std::string text = with_pods(v);
  EXPECT_EQ(text, with_pods(w));
  EXPECT_THAT(text, HasSubstr("gpuattr_pod_gpu_hours_total{basis=\"usage\",cluster=\"kind-gpu\","
                              "namespace=\"ml\",node=\"n1\",pod=\"b\"} "));
  EXPECT_THAT(text, HasSubstr("gpuattr_pod_cost_total{basis=\"usage\",cluster=\"kind-gpu\","
                              "currency=\"EUR\",namespace=\"ml\",node=\"n1\",pod=\"c\"} "));
  EXPECT_THAT(text, HasSubstr("gpuattr_pod_cost_total{basis=\"memory\",cluster=\"kind-gpu\","
                              "currency=\"EUR\",namespace=\"ml\",node=\"n1\",pod=\"e\"} "));
  EXPECT_THAT(text, HasSubstr("gpuattr_pod_gpu_hours_total{basis=\"memory\",cluster=\"kind-"
                              "gpu\",namespace=\"ml\",node=\"n2\",pod=\"g\"} "));
  EXPECT_THAT(text, Not(HasSubstr("gpuattr_pod_gpu_hours_total{basis=\"usage\",cluster=\"kind-"
                                  "gpu\",namespace=\"ml\",node=\"n1\",pod=\"d\"}")));
  EXPECT_THAT(text, Not(HasSubstr("gpuattr_pod_gpu_hours_total{basis=\"usage\",cluster=\"kind-"
                                  "gpu\",namespace=\"ml\",node=\"n3\"")));
  EXPECT_THAT(text, Not(HasSubstr("gpuattr_pod_cost_total{basis=\"usage\",cluster=\"kind-gpu\","
                                  "currency=\"EUR\",namespace=\"ml\",node=\"n2\"")));
  // The first cycle's view, where e was still on its card, renders the same way too.
  first_by_index.cluster = first_named.cluster = "kind-gpu";
  EXPECT_EQ(with_pods(first_by_index), with_pods(first_named));
}

}  // namespace
}  // namespace gpuattr::metrics
