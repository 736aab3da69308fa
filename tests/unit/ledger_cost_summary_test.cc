// The cost summary of the daily totals (ledger::SummarizeDays,
// docs/accounting.md#on-the-status-page): today, the last 7 and the last 30 UTC days, per
// namespace, idle and cards; a cost only where some hours were priced; the namespaces' labels as
// the latest day recorded them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpuattr/ledger/daily.h"
#include "gpuattr/ledger/ledger.h"
#include "gpuattr/util/utc_day.h"

namespace gpuattr::ledger {
namespace {

constexpr double kDay = 86400;
constexpr UtcDay kToday = 20'000;  // 2024-10-04

GpuHours Hours(double alloc, double mem, double usage, std::optional<double> price = {}) {
  GpuHours g;
  g.hours = {alloc, mem, usage};
  if (price) {
    g.cost = {alloc * *price, mem * *price, usage * *price};
    g.priced = true;
  }
  return g;
}

const NamespaceCost& Find(const CostSummary& s, const std::string& name) {
  for (const NamespaceCost& n : s.namespaces)
    if (n.name == name) return n;
  ADD_FAILURE() << "no namespace " << name;
  static NamespaceCost none;
  return none;
}

TEST(CostSummary, WindowsEndTodayAndIncludeIt) {
  AccountingState s;
  // 1 h on today, on 6 days ago (inside 7 days), on 7 days ago (outside 7, inside 30), on 29
  // days ago (inside 30) and on 30 days ago (outside every window).
  for (int age : {0, 6, 7, 29, 30}) s.days[kToday - age].namespaces["ml"].total = Hours(1, 2, 3);
  const CostSummary sum = SummarizeDays(s, kToday);
  EXPECT_EQ(sum.today, kToday);
  ASSERT_EQ(sum.namespaces.size(), 1u);
  const CostWindows& w = sum.namespaces[0].windows;
  EXPECT_EQ(w[0].hours, (accounting::PerBasis{1, 2, 3}));
  EXPECT_EQ(w[1].hours, (accounting::PerBasis{2, 4, 6}));
  EXPECT_EQ(w[2].hours, (accounting::PerBasis{4, 8, 12}));
}

TEST(CostSummary, DaysAreUtcDaysOfTheCycleTime) {
  // A cycle one second before midnight and one at midnight: two days, so "today" after midnight
  // holds only the second.
  Ledger l;
  const double midnight = static_cast<double>(kToday) * kDay;
  accounting::CardAccount c;
  c.node = "n1";
  c.gpu = "0";
  c.pods.push_back({{"ml", "p"}, "uid-p", {1, 1, 1}});
  const PodUids uids = {{{"ml", "p"}, "uid-p"}};
  LedgerView v;
  l.RecordGpuHours({c}, {}, "", midnight - 61, &uids, v);
  l.RecordGpuHours({c}, {}, "", midnight - 1, &uids, v);  // 60 s on yesterday
  v = {};
  l.RecordGpuHours({c}, {}, "", midnight + 59, &uids, v);  // 60 s on today
  EXPECT_EQ(v.costs.today, kToday);
  ASSERT_EQ(v.costs.namespaces.size(), 1u);
  EXPECT_DOUBLE_EQ(v.costs.namespaces[0].windows[0].hours[0], 60.0 / 3600);
  EXPECT_DOUBLE_EQ(v.costs.namespaces[0].windows[1].hours[0], 120.0 / 3600);
  EXPECT_DOUBLE_EQ(v.costs.cards[0].hours[0], 60.0 / 3600);
}

TEST(CostSummary, MissingDaysAddNothingAndFutureDaysAreLeftOut) {
  AccountingState s;
  s.days[kToday - 3].namespaces["ml"].total = Hours(2, 2, 1);
  s.days[kToday + 1].namespaces["ml"].total = Hours(50, 50, 50);  // a clock that went back
  s.days[kToday + 1].namespaces["future"].total = Hours(50, 50, 50);
  const CostSummary sum = SummarizeDays(s, kToday);
  ASSERT_EQ(sum.namespaces.size(), 1u);  // "future" has no day in any window
  const CostWindows& w = sum.namespaces[0].windows;
  EXPECT_EQ(w[0].hours, (accounting::PerBasis{0, 0, 0}));  // no day today: 0 hours
  EXPECT_EQ(w[1].hours, (accounting::PerBasis{2, 2, 1}));
  EXPECT_EQ(w[2].hours, (accounting::PerBasis{2, 2, 1}));
  EXPECT_EQ(SummarizeDays(AccountingState{}, kToday).namespaces.size(), 0u);
}

TEST(CostSummary, CostOnlyWhereSomeHoursWerePriced) {
  AccountingState s;
  s.days[kToday].namespaces["free"].total = Hours(5, 5, 5);  // unpriced cards only
  s.days[kToday].namespaces["paid"].total = Hours(1, 1, 0.5, 3.0);
  s.days[kToday - 10].namespaces["paid"].total = Hours(2, 2, 2);  // unpriced that day
  s.days[kToday - 10].idle = Hours(4, 4, 4, 2.0);
  const CostSummary sum = SummarizeDays(s, kToday);
  EXPECT_FALSE(Find(sum, "free").windows[0].cost.has_value());  // "-", never 0
  EXPECT_FALSE(Find(sum, "free").windows[2].cost.has_value());
  const CostWindows& paid = Find(sum, "paid").windows;
  ASSERT_TRUE(paid[0].cost.has_value());
  EXPECT_EQ(*paid[0].cost, (accounting::PerBasis{3, 3, 1.5}));
  EXPECT_EQ(*paid[2].cost, (accounting::PerBasis{3, 3, 1.5}));  // the unpriced day adds no cost
  EXPECT_EQ(paid[2].hours, (accounting::PerBasis{3, 3, 2.5}));  // but its hours
  EXPECT_FALSE(sum.idle[0].cost.has_value());
  EXPECT_FALSE(sum.idle[1].cost.has_value());
  ASSERT_TRUE(sum.idle[2].cost.has_value());
  EXPECT_EQ(*sum.idle[2].cost, (accounting::PerBasis{8, 8, 8}));
}

TEST(CostSummary, NamespacesOfDifferentDaysMergeByName) {
  AccountingState s;
  for (const char* ns : {"a", "c", "e"}) s.days[kToday - 1].namespaces[ns].total = Hours(1, 1, 1);
  for (const char* ns : {"b", "c", "d", "f"}) s.days[kToday].namespaces[ns].total = Hours(2, 2, 2);
  const CostSummary sum = SummarizeDays(s, kToday);
  std::vector<std::string> names;
  for (const NamespaceCost& n : sum.namespaces) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d", "e", "f"}));
  EXPECT_EQ(Find(sum, "c").windows[1].hours[0], 3);
  EXPECT_EQ(Find(sum, "c").windows[0].hours[0], 2);
  EXPECT_EQ(Find(sum, "a").windows[0].hours[0], 0);
  EXPECT_EQ(Find(sum, "f").windows[2].hours[0], 2);
}

TEST(CostSummary, LabelsAreTheLatestDaysAndLabelNamesAreCarried) {
  AccountingState s;
  s.namespace_labels = {"team", "cost-center"};
  s.days[kToday - 2].namespaces["ml"].labels = {{"team", "old"}};
  s.days[kToday - 1].namespaces["ml"].labels = {{"team", "research"}};
  s.days[kToday - 1].namespaces["web"] = {};
  const CostSummary sum = SummarizeDays(s, kToday);
  EXPECT_EQ(sum.namespace_labels, s.namespace_labels);
  EXPECT_EQ(Find(sum, "ml").labels.at("team"), "research");
  EXPECT_TRUE(Find(sum, "web").labels.empty());
}

}  // namespace
}  // namespace gpuattr::ledger
