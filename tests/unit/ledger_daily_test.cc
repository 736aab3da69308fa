// Daily GPU-hour totals in the ledger (docs/accounting.md#daily-totals): per UTC day and
// namespace, idle and the cards' own hours, booked to the day of the cycle that ends each
// interval; kept for retention_days; carried through the state file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuattr/ledger/daily.h"
#include "gpuattr/ledger/ledger.h"
#include "gpuattr/ledger/state_codec.h"
#include "gpuattr/util/utc_day.h"

namespace gpuattr::ledger {
namespace {

using accounting::Basis;
using accounting::CardAccount;
using accounting::PerBasis;

constexpr double kDay = 86400;
constexpr double kMidnight = 20'000 * kDay;  // 2024-10-04T00:00:00Z

CardAccount Card(const std::string& node, const std::string& gpu,
                 std::vector<std::pair<kube::PodId, PerBasis>> pods) {
  CardAccount c;
  c.node = node;
  c.gpu = gpu;
  c.uuid = "GPU-" + node + gpu;
  PerBasis used{};
  for (auto& [id, v] : pods) {
    c.pods.push_back({id, "uid-" + id.name, v});
    for (size_t b = 0; b < accounting::kBases; ++b) used[b] += v[b];
  }
  for (size_t b = 0; b < accounting::kBases; ++b) c.idle[b] = 1 - used[b];
  return c;
}

const kube::PodId kA{"ml", "a"}, kB{"web", "b"};
const PodUids kBoth = {{kA, "uid-a"}, {kB, "uid-b"}};

void Step(Ledger& l, const std::vector<CardAccount>& cards, double now,
          const std::vector<std::optional<double>>& prices = {},
          const NamespaceLabels& labels = {}) {
  LedgerView v;
  l.RecordGpuHours(cards, prices, prices.empty() ? "" : "EUR", now, &kBoth, v, labels);
}

const DayTotals& Day(const Ledger& l, double unix) {
  return l.state().accounting.days.at(UtcDayOf(unix));
}

TEST(LedgerDaily, UtcDaysAreIsoDates) {
  EXPECT_EQ(UtcDayText(UtcDayOf(kMidnight)), "2024-10-04");
  EXPECT_EQ(UtcDayText(UtcDayOf(kMidnight - 1)), "2024-10-03");
  EXPECT_EQ(ParseUtcDay("2024-10-04"), UtcDayOf(kMidnight));
  EXPECT_EQ(ParseUtcDay("1970-01-01"), 0);
  EXPECT_EQ(ParseUtcDay("2024-02-29"), UtcDayOf(kMidnight) - 218);
  EXPECT_FALSE(ParseUtcDay("2023-02-29"));
  EXPECT_FALSE(ParseUtcDay("2024-13-01"));
  EXPECT_FALSE(ParseUtcDay("2024-1-01"));
  EXPECT_FALSE(ParseUtcDay("2024-10-04T00:00"));
  EXPECT_FALSE(ParseUtcDay("yesterday"));
}

// Cycles at 23:59:30 and 00:00:30: the minute between them crosses midnight and goes, whole, to
// the day of the cycle that ends it (the new day); the day before keeps only what ended on it.
TEST(LedgerDaily, AnIntervalCrossingMidnightGoesToTheDayOfItsEnd) {
  Ledger l;
  const std::vector<CardAccount> cards = {Card("n1", "0", {{kA, {1, 1, 0.5}}})};
  Step(l, cards, kMidnight - 90);
  Step(l, cards, kMidnight - 30);  // 60 s on the old day
  Step(l, cards, kMidnight + 30);  // 60 s ending on the new day
  const DayTotals& before = Day(l, kMidnight - 30);
  const DayTotals& after = Day(l, kMidnight + 30);
  EXPECT_DOUBLE_EQ(At(before.namespaces.at("ml").total.hours, Basis::kAllocation), 1.0 / 60);
  EXPECT_DOUBLE_EQ(At(after.namespaces.at("ml").total.hours, Basis::kAllocation), 1.0 / 60);
  EXPECT_DOUBLE_EQ(At(after.namespaces.at("ml").total.hours, Basis::kUsage), 0.5 / 60);
  EXPECT_DOUBLE_EQ(At(after.idle.hours, Basis::kUsage), 0.5 / 60);
  EXPECT_DOUBLE_EQ(At(after.cards.hours, Basis::kMemory), 1.0 / 60);
  EXPECT_EQ(l.state().accounting.days.size(), 2u);
}

// retention_days 2: a cycle on day 2 drops day 0 and keeps days 1 and 2.
TEST(LedgerDaily, DaysOlderThanTheRetentionAreDropped) {
  Ledger l(LedgerParams{.retention_days = 2});
  const std::vector<CardAccount> cards = {Card("n1", "0", {{kA, {1, 1, 1}}})};
  for (int day = 0; day < 3; ++day) {
    Step(l, cards, kMidnight + day * kDay + 3600);
    Step(l, cards, kMidnight + day * kDay + 3660);
  }
  const auto& days = l.state().accounting.days;
  ASSERT_EQ(days.size(), 2u);
  EXPECT_EQ(days.begin()->first, UtcDayOf(kMidnight) + 1);
  EXPECT_EQ(days.rbegin()->first, UtcDayOf(kMidnight) + 2);
}

// At most max_namespace_days namespace-days in all: the oldest days go first (the state file
// must stay under its size limit whatever the number of namespaces).
TEST(LedgerDaily, TheOldestDaysGoBeyondTheNamespaceDayBound) {
  std::map<UtcDay, DayTotals> days;
  for (UtcDay d = 10; d < 13; ++d) days[d].namespaces = {{"ml", {}}, {"web", {}}};
  KeepDays(days, 12, 400, 3);  // 2 namespaces a day: two days would be 4
  ASSERT_EQ(days.size(), 1u);
  EXPECT_EQ(days.begin()->first, 12);
  KeepDays(days, 12, 400, 1);  // today stays, whatever its size
  EXPECT_EQ(days.size(), 1u);
  for (UtcDay d = 0; d < 12; ++d) days[d].namespaces = {{"ml", {}}};
  KeepDays(days, 12, 3);  // the retention: days 10, 11 and 12
  EXPECT_EQ(days.begin()->first, 10);
  EXPECT_EQ(days.size(), 3u);
}

// Two namespaces on two nodes, one card priced, a pod arriving mid-day (its first interval is
// idle's) and a new card (its first interval is nobody's): per basis, Σ namespaces + idle = the
// cards' hours, in hours and in cost; the failed interval adds nothing.
TEST(LedgerDaily, NamespacesAndIdleAddUpToTheCardsHours) {
  Ledger l;
  Step(l, {Card("n1", "0", {{kA, {0.5, 0.25, 0.1}}})}, kMidnight + 100, {3.0});
  const std::vector<CardAccount> later = {
      Card("n1", "0", {{kA, {0.5, 0.25, 0.1}}, {kB, {0.5, 0.5, 0.6}}}),
      Card("n2", "0", {{kB, {1, 1, 0.3}}})};
  Step(l, later, kMidnight + 160, {3.0, std::nullopt});
  Step(l, later, kMidnight + 220, {3.0, std::nullopt});
  l.BreakInterval();
  Step(l, later, kMidnight + 280, {3.0, std::nullopt});
  Step(l, later, kMidnight + 310, {3.0, std::nullopt});
  const DayTotals& d = Day(l, kMidnight);
  // n1: 60 + 60 + 30 s accrued; n2 (new at 160): 60 + 30 s. 240 s = 1/15 GPU-hour.
  EXPECT_DOUBLE_EQ(At(d.cards.hours, Basis::kAllocation), 240.0 / 3600);
  EXPECT_DOUBLE_EQ(At(d.cards.cost, Basis::kAllocation), 150.0 / 3600 * 3.0);
  for (size_t b = 0; b < accounting::kBases; ++b) {
    double hours = d.idle.hours[b], cost = d.idle.cost[b];
    for (const auto& [name, ns] : d.namespaces)
      hours += ns.total.hours[b], cost += ns.total.cost[b];
    EXPECT_NEAR(hours, d.cards.hours[b], 1e-12) << b;
    EXPECT_NEAR(cost, d.cards.cost[b], 1e-12) << b;
  }
  EXPECT_TRUE(d.namespaces.at("web").total.priced);
  // web's b on n1 from its second cycle on (60 + 30 s) at 0.5, on n2 90 s at 1.
  EXPECT_DOUBLE_EQ(At(d.namespaces.at("web").total.hours, Basis::kAllocation),
                   (90 * 0.5 + 90) / 3600);
}

// The labels recorded are those seen last that day; a cycle that does not know them (an empty
// map) keeps them.
TEST(LedgerDaily, RecordsEachNamespacesLabelsAsSeenThatDay) {
  Ledger l(LedgerParams{.namespace_labels = {"team", "cost-center"}});
  const std::vector<CardAccount> cards = {Card("n1", "0", {{kA, {1, 1, 1}}})};
  Step(l, cards, kMidnight + 10, {}, {{"ml", {{"team", "vision"}}}, {"web", {}}});
  Step(l, cards, kMidnight + 20, {}, {{"ml", {{"team", "speech"}, {"cost-center", "42"}}}});
  Step(l, cards, kMidnight + 30, {}, {});
  EXPECT_EQ(Day(l, kMidnight).namespaces.at("ml").labels,
            (std::map<std::string, std::string>{{"team", "speech"}, {"cost-center", "42"}}));
  EXPECT_EQ(l.state().accounting.namespace_labels,
            (std::vector<std::string>{"team", "cost-center"}));
}

// Through the state file: the days (labels, costs, the label names) come back as they were, and
// a restarted ledger adds the next interval to the same day.
TEST(LedgerDaily, ARestartContinuesTheDailyTotals) {
  Ledger before;
  const std::vector<CardAccount> cards = {Card("n1", "0", {{kA, {1, 0.5, 0.25}}})};
  Step(before, cards, kMidnight + 600, {2.0}, {{"ml", {{"team", "vision"}}}});
  Step(before, cards, kMidnight + 660, {2.0});
  const std::string text = EncodeStateFile({{"c", before.state()}});
  EXPECT_THAT(text, ::testing::HasSubstr("\"day\": \"2024-10-04\""));
  auto back = DecodeStateFile(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->at("c"), before.state());
  Ledger after(LedgerParams{}, back->at("c"));
  Step(after, cards, kMidnight + 720, {2.0});
  const NamespaceDay& ml = Day(after, kMidnight).namespaces.at("ml");
  EXPECT_DOUBLE_EQ(At(ml.total.hours, Basis::kAllocation), 2.0 / 60);
  EXPECT_DOUBLE_EQ(At(ml.total.cost, Basis::kMemory), 2.0 / 60);
  EXPECT_EQ(ml.labels.at("team"), "vision");
}

TEST(LedgerDaily, AMalformedDayIsAnErrorNamingTheField) {
  auto bad = DecodeStateFile(R"({"format": "gpuattr-state", "version": 2, "clusters": {"c": {
      "accounting": {"days": [{"day": "2024-10-04"}, {"day": "2024-10-32"}]}}}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, ::testing::HasSubstr("accounting.days[1].day"));
  bad = DecodeStateFile(R"({"format": "gpuattr-state", "version": 2, "clusters": {"c": {
      "accounting": {"days": [{"day": "2024-10-04",
                               "namespaces": [{"namespace": "ml", "labels": {"team": 1}}]}]}}}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, ::testing::HasSubstr("days[0].namespaces[0].labels.team"));
}

}  // namespace
}  // namespace gpuattr::ledger
