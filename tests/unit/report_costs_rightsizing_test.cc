// "What it costs" and "Rightsizing" in the status view (report/view.h) and its four outputs: the
// ledger's cost summary per namespace, team and idle with the unpriced cards, and the workloads by
// reclaimable GPU-equivalents, capped on the page, the table and the Markdown report, all in JSON.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpuattr/report/outputs.h"
#include "gpuattr/report/status_page.h"
#include "gpuattr/report/text_format.h"
#include "gpuattr/report/view.h"
#include "support/snapshots.h"

namespace gpuattr::report {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kNow = 1764460800;  // 2025-11-30 00:00:00 UTC
constexpr int64_t kToday = 20422;    // 2025-11-30
const std::string kHostile = "<img src=x onerror=alert(1)>";

ledger::CostWindows Windows(double today, double week, double month, std::optional<double> price) {
  ledger::CostWindows w{};
  const double hours[] = {today, week, month};
  for (size_t i = 0; i < w.size(); ++i) {
    w[i].hours = {hours[i], hours[i] / 2, hours[i] / 4};
    if (price)
      w[i].cost =
          accounting::PerBasis{hours[i] * *price, hours[i] / 2 * *price, hours[i] / 4 * *price};
  }
  return w;
}

rightsizing::WorkloadView Workload(std::string ns, std::string name, double reclaimable,
                                   std::optional<double> cost = {}) {
  rightsizing::WorkloadView w;
  w.id = {std::move(ns), "Deployment", std::move(name)};
  w.recommendation.current = "whole";
  w.recommendation.recommended = "3g.40gb";
  w.recommendation.reason = rightsizing::Reason::kFitsSmaller;
  w.pods = 1;
  w.observed_seconds = 2 * 86400;
  w.memory_peak_bytes = 12e9;
  w.utilization_p95 = 0.3;
  w.gpu_equivalents = 1;
  w.reclaimable_gpu_equivalents = reclaimable;
  w.reclaimable_cost_per_hour = cost;
  return w;
}

// Cluster "lab": two cards (n1/0 priced at 2 EUR, n1/1 unpriced); namespaces ml (team research),
// web (no team) and a hostile one (team research); 25 workloads, one hostile, one whose memory
// and utilisation are unknown.
model::ClusterSnapshot Cluster(int workloads = 25) {
  model::ClusterSnapshot c;
  c.cluster = "lab";
  c.latest.up = true;
  c.cycles = 2;
  model::CycleOutput& out = gpuattr::testing::MutableOutput(c);
  out.attribution.cluster = "lab";
  out.attribution.cards = {{"n1", "0", "GPU-0", "NVIDIA A100-SXM4-80GB", 300.0, {}, {}},
                           {"n1", "1", "GPU-1", "NVIDIA L4", 70.0, {}, {}}};
  ledger::LedgerView& l = out.ledger;
  l.cluster = "lab";
  l.currency = "EUR";
  l.card_prices = {{"n1", "0", "GPU-0", "NVIDIA A100-SXM4-80GB", 2.0}};
  l.costs.today = kToday;
  l.costs.namespace_labels = {"team"};
  l.costs.namespaces = {{kHostile, {{"team", "research"}}, Windows(1, 5, 10, 2.0)},
                        {"ml", {{"team", "research"}}, Windows(2, 14, 60, 2.0)},
                        {"web", {}, Windows(1, 7, 20, std::nullopt)}};
  l.costs.idle = Windows(3, 20, 80, 2.0);
  l.costs.cards = Windows(7, 46, 170, 2.0);
  out.rightsizing.currency = "EUR";
  for (int i = 0; i < workloads; ++i)
    out.rightsizing.workloads.push_back(Workload("ns", "w" + std::to_string(100 + i), 0.01 * i,
                                                 i % 2 ? std::optional(0.5) : std::nullopt));
  if (workloads) {
    out.rightsizing.workloads.push_back(Workload(kHostile, kHostile, 0.5, 1.0));
    rightsizing::WorkloadView unknown = Workload("a", "unknown", 0.5);
    unknown.memory_peak_bytes.reset();
    unknown.utilization_p95.reset();
    unknown.recommendation.recommended = "whole";
    unknown.recommendation.reason = rightsizing::Reason::kInsufficientData;
    out.rightsizing.workloads.push_back(unknown);
  }
  return c;
}

model::Snapshot Snap(int workloads = 25) {
  model::Snapshot s;
  s.complete = true;
  s.clusters.push_back(Cluster(workloads));
  return s;
}

// --- the view ------------------------------------------------------------------------------------

TEST(CostsView, NamespacesByLongestWindowTeamsAndIdle) {
  const StatusView v = BuildStatusView(Snap(), kNow, {});
  const CostsView& c = v.costs;
  ASSERT_EQ(c.namespaces.size(), 3u);
  EXPECT_EQ(c.namespaces[0].name, "ml");  // 60 h over 30 days
  EXPECT_EQ(c.namespaces[1].name, "web");
  EXPECT_EQ(c.namespaces[2].name, kHostile);
  EXPECT_EQ(c.namespaces[0].team, "research");
  EXPECT_FALSE(c.namespaces[1].team.has_value());
  ASSERT_EQ(c.teams.size(), 2u);
  EXPECT_EQ(c.teams[0].name, "research");
  EXPECT_THAT(c.teams[0].namespaces, ElementsAre(kHostile, "ml"));
  EXPECT_EQ(c.teams[0].windows[2].hours[0], 70);
  ASSERT_TRUE(c.teams[0].windows[2].cost.has_value());
  EXPECT_EQ((*c.teams[0].windows[2].cost)[0], 140);
  EXPECT_EQ(c.teams[1].name, accounting::kNoTeam);       // last
  EXPECT_FALSE(c.teams[1].windows[0].cost.has_value());  // nothing priced: no cost, not 0
  ASSERT_EQ(c.idle.size(), 1u);
  EXPECT_EQ(c.idle[0].windows[1].hours[0], 20);
  EXPECT_EQ(c.currency, "EUR");
  EXPECT_EQ(c.today, kToday);
  EXPECT_EQ(c.priced_cards, 1u);
  ASSERT_EQ(c.unpriced_cards.size(), 1u);
  EXPECT_EQ(c.unpriced_cards[0].card->gpu, "1");
}

TEST(CostsView, NoTeamsWithoutTheLabel) {
  model::Snapshot s = Snap();
  model::CycleOutput& out = gpuattr::testing::MutableOutput(s.clusters[0]);
  for (ledger::NamespaceCost& n : out.ledger.costs.namespaces) n.labels.clear();
  const StatusView v = BuildStatusView(s, kNow, {});
  EXPECT_TRUE(v.costs.teams.empty());
  EXPECT_EQ(v.costs.namespaces.size(), 3u);
}

TEST(RightsizingView, MostReclaimableFirstThenByNameWithTotals) {
  const StatusView v = BuildStatusView(Snap(), kNow, {});
  ASSERT_EQ(v.rightsizing.size(), 27u);  // the view has them all
  // 0.5 two ways (ties by namespace, kind, name), then w124 (0.24) down to w100 (0).
  EXPECT_EQ(v.rightsizing[0].workload->id.namespace_, kHostile);
  EXPECT_EQ(v.rightsizing[1].workload->id.name, "unknown");
  EXPECT_EQ(v.rightsizing[2].workload->id.name, "w124");
  EXPECT_EQ(v.rightsizing.back().workload->id.name, "w100");
  const RightsizingTotals& t = v.rightsizing_totals;
  EXPECT_EQ(t.workloads, 27u);
  EXPECT_NEAR(t.reclaimable_gpu_equivalents, 1.0 + 0.01 * (24 * 25 / 2), 1e-9);
  ASSERT_TRUE(t.reclaimable_cost_per_hour.has_value());
  EXPECT_DOUBLE_EQ(*t.reclaimable_cost_per_hour, 1.0 + 12 * 0.5);  // priced ones only
  EXPECT_EQ(t.currency, "EUR");
}

TEST(RightsizingView, NoCostWhenNothingIsPriced) {
  model::Snapshot s = Snap();
  model::CycleOutput& out = gpuattr::testing::MutableOutput(s.clusters[0]);
  for (rightsizing::WorkloadView& w : out.rightsizing.workloads)
    w.reclaimable_cost_per_hour.reset();
  const StatusView v = BuildStatusView(s, kNow, {});
  EXPECT_FALSE(v.rightsizing_totals.reclaimable_cost_per_hour.has_value());
  EXPECT_THAT(RenderTable(v), Not(HasSubstr("per hour")));
  const auto j = nlohmann::json::parse(RenderSnapshotJson(v));
  EXPECT_TRUE(j["rightsizing"]["totals"]["reclaimable_cost_per_hour"].is_null());
  EXPECT_TRUE(j["rightsizing"]["workloads"][0]["currency"].is_null());
}

// --- the outputs ---------------------------------------------------------------------------------

TEST(CostsAndRightsizingPage, SectionsEscapedAndCapped) {
  const std::string html = RenderStatusPage(Snap(), kNow);
  const size_t whose = html.find("<section id=\"whose\">"),
               costs = html.find("<section id=\"costs\">"),
               rs = html.find("<section id=\"rightsizing\">"),
               devices = html.find("<section id=\"devices\">");
  ASSERT_NE(costs, std::string::npos);
  ASSERT_NE(rs, std::string::npos);
  EXPECT_LT(whose, costs);
  EXPECT_LT(rs, devices);
  EXPECT_THAT(html, Not(HasSubstr(kHostile)));
  EXPECT_THAT(html, HasSubstr("&lt;img src=x onerror=alert(1)&gt;"));
  // 20 workload rows of 27, and the rest pointed at.
  const std::string table = html.substr(rs, html.find("</section>", rs) - rs);
  size_t rows = 0;
  for (size_t p = table.find("<tr data-key"); p != std::string::npos;
       p = table.find("<tr data-key", p + 1))
    ++rows;
  EXPECT_EQ(rows, kRowsShown);
  EXPECT_THAT(table, HasSubstr("7 more in <a href=\"/snapshot.json\">"));
  EXPECT_THAT(table, HasSubstr("whole → <b>3g.40gb</b>"));
  EXPECT_THAT(table, HasSubstr("data-k=\"memory_peak_bytes\"><span>-</span>"));  // unknown, not 0
  const std::string cost = html.substr(costs, html.find("</section>", costs) - costs);
  EXPECT_THAT(cost, HasSubstr("data-v=\"120\""));  // ml, 60 h × 2 EUR over 30 days (allocation)
  EXPECT_THAT(cost, HasSubstr("120.00 EUR"));
  EXPECT_THAT(cost, HasSubstr("NVIDIA L4"));  // the unpriced card
  EXPECT_THAT(cost, HasSubstr("By team"));
  EXPECT_THAT(cost, HasSubstr("340.00 EUR"));  // all cards over 30 days, 170 h × 2 EUR
  EXPECT_THAT(cost, HasSubstr("cost of the priced cards only"));  // n1/1 is not priced
  EXPECT_THAT(cost, HasSubstr("memory 30 · usage 15"));           // ml's other bases, 30 days
}

TEST(CostsAndRightsizingTable, RowsAndUnknowns) {
  const std::string t = RenderTable(BuildStatusView(Snap(), kNow, {}));
  const size_t costs = t.find("\nWhat it costs\n"), rs = t.find("\nRightsizing\n");
  ASSERT_NE(costs, std::string::npos);
  ASSERT_NE(rs, std::string::npos);
  EXPECT_THAT(t, HasSubstr("ml"));
  EXPECT_THAT(t, HasSubstr("120.00 EUR"));
  EXPECT_THAT(t, HasSubstr("(idle)"));
  EXPECT_THAT(t, HasSubstr("Unpriced (no price rule matched): 1 card: NVIDIA L4 ×1"));
  EXPECT_THAT(t, HasSubstr("a/Deployment/unknown"));
  EXPECT_THAT(t, HasSubstr("whole -> 3g.40gb"));
  EXPECT_THAT(t, HasSubstr("7 more in /snapshot.json"));
  EXPECT_THAT(t, Not(HasSubstr("ns/Deployment/w100")));  // cut: the least reclaimable
  EXPECT_THAT(t, HasSubstr("Reclaimable: 4 GPU-eq over 27 workloads, 7.00 EUR per hour."));
}

TEST(CostsAndRightsizingMarkdown, SectionsAndRows) {
  const std::string md = RenderMarkdown(BuildStatusView(Snap(), kNow, {}));
  ASSERT_NE(md.find("## What it costs"), std::string::npos);
  ASSERT_NE(md.find("## Rightsizing"), std::string::npos);
  EXPECT_THAT(md,
              HasSubstr("| `ml` | allocation | 2 | 4.00 EUR | 14 | 28.00 EUR | 60 | 120.00 EUR |"));
  EXPECT_THAT(md, HasSubstr("| `web` | allocation | 1 | - | 7 | - | 20 | - |"));
  EXPECT_THAT(md, HasSubstr("| `research` | allocation |"));
  EXPECT_THAT(md,
              HasSubstr("| `a/Deployment/unknown` | 1 | `whole` | `insufficient_data` | - | - |"));
  EXPECT_THAT(md, HasSubstr("7 more in /snapshot.json."));
}

TEST(CostsAndRightsizingJson, ParsesWithEveryKeyAndAllRows) {
  const auto j = nlohmann::json::parse(RenderSnapshotJson(BuildStatusView(Snap(), kNow, {})));
  const auto& c = j.at("costs");
  EXPECT_EQ(c.at("currency"), "EUR");
  EXPECT_EQ(c.at("today"), "2025-11-30");
  EXPECT_EQ(c.at("windows")[1].at("from"), "2025-11-24");
  EXPECT_EQ(c.at("team_label"), "team");
  EXPECT_EQ(c.at("bases"), nlohmann::json({"allocation", "memory", "usage"}));
  ASSERT_EQ(c.at("namespaces").size(), 3u);
  const auto& ml = c.at("namespaces")[0];
  EXPECT_EQ(ml.at("namespace"), "ml");
  EXPECT_EQ(ml.at("team"), "research");
  EXPECT_EQ(ml.at("windows").at("last_30_days").at("gpu_hours").at("allocation"), 60);
  EXPECT_EQ(ml.at("windows").at("last_30_days").at("cost").at("memory"), 60);
  const auto& web = c.at("namespaces")[1];
  EXPECT_TRUE(web.at("team").is_null());
  EXPECT_TRUE(web.at("windows").at("today").at("cost").is_null());
  EXPECT_EQ(c.at("teams").size(), 2u);
  EXPECT_EQ(c.at("idle")[0].at("windows").at("last_7_days").at("gpu_hours").at("allocation"), 20);
  EXPECT_EQ(c.at("cards").size(), 1u);
  EXPECT_EQ(c.at("priced_cards"), 1);
  ASSERT_EQ(c.at("unpriced_cards").size(), 1u);
  EXPECT_EQ(c.at("unpriced_cards")[0].at("model"), "NVIDIA L4");
  const auto& r = j.at("rightsizing");
  EXPECT_EQ(r.at("workloads").size(), 27u);  // all of them
  EXPECT_EQ(r.at("totals").at("workloads"), 27);
  const auto& unknown = r.at("workloads")[1];
  EXPECT_EQ(unknown.at("workload"), "unknown");
  EXPECT_EQ(unknown.at("workload_kind"), "Deployment");
  EXPECT_TRUE(unknown.at("memory_peak_bytes").is_null());
  EXPECT_TRUE(unknown.at("utilization_p95_ratio").is_null());
  EXPECT_TRUE(unknown.at("reclaimable_cost_per_hour").is_null());
  EXPECT_EQ(unknown.at("reason"), "insufficient_data");
  EXPECT_EQ(r.at("workloads")[0].at("currency"), "EUR");
}

TEST(CostsAndRightsizingOutputs, TwoClustersKeepTheirRowsApart) {
  model::Snapshot s = Snap(1);
  s.clusters.push_back(Cluster(1));
  s.clusters[1].cluster = "lab2";
  const StatusView v = BuildStatusView(s, kNow, {});
  ASSERT_EQ(v.costs.idle.size(), 2u);
  EXPECT_EQ(v.costs.idle[1].cluster, "lab2");
  EXPECT_EQ(v.costs.namespaces.size(), 6u);
  EXPECT_EQ(v.costs.teams.size(), 4u);  // research and (no team), per cluster
  EXPECT_EQ(v.costs.unpriced_cards.size(), 2u);
  EXPECT_EQ(v.rightsizing.size(), 6u);
  const std::string html = RenderStatusPage(v);
  EXPECT_THAT(html, HasSubstr("data-key=\"lab2/ml\""));
  EXPECT_THAT(RenderMarkdown(v), HasSubstr("| `lab2/ml` | allocation |"));
  EXPECT_THAT(RenderTable(v), HasSubstr("lab2     ml"));
}

TEST(CostsAndRightsizingOutputs, EmptyBeforeAnyAccounting) {
  model::Snapshot s;
  s.complete = false;
  model::ClusterSnapshot c;
  c.cluster = "lab";
  s.clusters.push_back(c);
  const StatusView v = BuildStatusView(s, kNow, {});
  EXPECT_THAT(RenderStatusPage(v), HasSubstr("No cycle has been accounted yet."));
  EXPECT_THAT(RenderTable(v), HasSubstr("No workload observed yet."));
  const auto j = nlohmann::json::parse(RenderSnapshotJson(v));
  EXPECT_TRUE(j["costs"]["today"].is_null());
  EXPECT_TRUE(j["rightsizing"]["workloads"].empty());
}

TEST(TextFormat, MoneyHoursAndDays) {
  EXPECT_EQ(MoneyText(0.074, "USD"), "0.07 USD");
  EXPECT_EQ(MoneyText(1234.5, "EUR"), "1,234.50 EUR");
  EXPECT_EQ(MoneyText(-2.005, ""), "-2.01");
  EXPECT_EQ(MoneyText(0.999, "USD"), "1.00 USD");
  EXPECT_EQ(GpuHoursText(0.25), "0.25");
  EXPECT_EQ(GpuHoursText(12.54), "12.5");
  EXPECT_EQ(GpuHoursText(1234.4), "1,234");
  EXPECT_EQ(GpuHoursText(0), "0");
  EXPECT_EQ(DayText(kToday), "2025-11-30");
  EXPECT_EQ(WindowText(1), "today");
  EXPECT_EQ(WindowText(30), "last 30 days");
}

}  // namespace
}  // namespace gpuattr::report
