// GPU-hours counters in the ledger (docs/accounting.md#counters): accrual between successful
// cycles only, new cards and pods from their second cycle on, departed pods kept in their
// namespace, and the state file (version 2, version 1 still loads) continuing every counter.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "gpuattr/ledger/ledger.h"
#include "gpuattr/ledger/state_codec.h"

namespace gpuattr::ledger {
namespace {

using accounting::Basis;
using accounting::CardAccount;
using accounting::PerBasis;

// One card on node n1 whose shares are given per pod ("ns/name" → allocation, memory, usage).
CardAccount Card(const std::string& gpu, std::vector<std::pair<kube::PodId, PerBasis>> pods) {
  CardAccount c;
  c.node = "n1";
  c.gpu = gpu;
  c.uuid = "GPU-" + gpu;
  PerBasis used{};
  for (auto& [id, v] : pods) {
    c.pods.push_back({id, "uid-" + id.name, v});
    for (size_t b = 0; b < accounting::kBases; ++b) used[b] += v[b];
  }
  for (size_t b = 0; b < accounting::kBases; ++b) c.idle[b] = 1 - used[b];
  return c;
}

const kube::PodId kA{"ml", "a"}, kB{"ml", "b"};
const PodUids kBoth = {{kA, "uid-a"}, {kB, "uid-b"}};

const GpuHoursView* Find(const std::vector<GpuHoursView>& v, const std::string& name,
                         const kube::PodId& pod = {}) {
  for (const GpuHoursView& x : v)
    if (x.name == name && x.pod == pod) return &x;
  return nullptr;
}

LedgerView Step(Ledger& l, const std::vector<CardAccount>& cards, double now,
                const PodUids& uids = kBoth, const std::vector<std::optional<double>>& prices = {},
                const std::string& currency = "") {
  LedgerView v;
  l.RecordGpuHours(cards, prices, currency, now, &uids, v);
  return v;
}

// Pod a holds the card (allocation 1, memory 1, usage 0.5). First cycle: counters at 0. 60 s
// later: 60/3600 = 1/60 GPU-hour on allocation and memory, 1/120 on usage; the idle 1/120 on
// usage goes to the node.
TEST(LedgerGpuHours, AccruesBetweenSuccessfulCyclesFromZero) {
  Ledger l;
  const std::vector<CardAccount> cards = {Card("0", {{kA, {1, 1, 0.5}}})};
  LedgerView first = Step(l, cards, 1000);
  const GpuHoursView* a = Find(first.other_pod_hours, "n1", kA);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->hours, (PerBasis{0, 0, 0}));
  EXPECT_FALSE(a->cost);
  LedgerView second = Step(l, cards, 1060);
  a = Find(second.other_pod_hours, "n1", kA);
  EXPECT_DOUBLE_EQ(At(a->hours, Basis::kAllocation), 1.0 / 60);
  EXPECT_DOUBLE_EQ(At(a->hours, Basis::kUsage), 1.0 / 120);
  EXPECT_DOUBLE_EQ(At(Find(second.node_idle_gpu_hours, "n1")->hours, Basis::kUsage), 1.0 / 120);
  EXPECT_DOUBLE_EQ(At(Find(second.namespace_gpu_hours, "ml")->hours, Basis::kMemory), 1.0 / 60);
}

// A failed cycle between two successful ones: nothing accrues over its interval; the next
// interval does.
TEST(LedgerGpuHours, NeverAccruesOverAFailedInterval) {
  Ledger l;
  const std::vector<CardAccount> cards = {Card("0", {{kA, {1, 1, 1}}})};
  Step(l, cards, 1000);
  l.BreakInterval();
  LedgerView after = Step(l, cards, 1060);
  EXPECT_EQ(Find(after.other_pod_hours, "n1", kA)->hours, (PerBasis{0, 0, 0}));
  EXPECT_EQ(Find(after.node_idle_gpu_hours, "n1")->hours, (PerBasis{0, 0, 0}));
  LedgerView next = Step(l, cards, 1120);
  EXPECT_DOUBLE_EQ(At(Find(next.other_pod_hours, "n1", kA)->hours, Basis::kAllocation), 1.0 / 60);
}

// A gap longer than the ledger's (5 minutes) accrues nothing, as for energy.
TEST(LedgerGpuHours, ALongGapAccruesNothing) {
  Ledger l;
  const std::vector<CardAccount> cards = {Card("0", {{kA, {1, 1, 1}}})};
  Step(l, cards, 1000);
  LedgerView v = Step(l, cards, 1000 + 301);
  EXPECT_EQ(Find(v.other_pod_hours, "n1", kA)->hours, (PerBasis{0, 0, 0}));
}

// Pod b appears on a card seen before: its half of the interval goes to idle; from the next
// interval on it accrues. A card not seen before accrues nothing in its first interval.
TEST(LedgerGpuHours, NewPodsAndCardsAccrueFromTheirSecondCycle) {
  Ledger l;
  Step(l, {Card("0", {{kA, {0.5, 0.5, 0.5}}})}, 0);
  const std::vector<CardAccount> two = {Card("0", {{kA, {0.5, 0.5, 0.5}}, {kB, {0.5, 0.5, 0.5}}}),
                                        Card("1", {{kA, {1, 1, 1}}})};
  LedgerView v = Step(l, two, 60);
  EXPECT_DOUBLE_EQ(At(Find(v.other_pod_hours, "n1", kA)->hours, Basis::kAllocation), 0.5 / 60);
  EXPECT_EQ(Find(v.other_pod_hours, "n1", kB)->hours, (PerBasis{0, 0, 0}));
  EXPECT_DOUBLE_EQ(At(Find(v.node_idle_gpu_hours, "n1")->hours, Basis::kMemory), 0.5 / 60);
  v = Step(l, two, 120);
  EXPECT_DOUBLE_EQ(At(Find(v.other_pod_hours, "n1", kB)->hours, Basis::kAllocation), 0.5 / 60);
  EXPECT_DOUBLE_EQ(At(Find(v.other_pod_hours, "n1", kA)->hours, Basis::kAllocation), 2.0 / 60);
  EXPECT_DOUBLE_EQ(At(Find(v.node_idle_gpu_hours, "n1")->hours, Basis::kMemory), 0.5 / 60);
}

// Pod b leaves: its record goes, what it accrued stays in the namespace; while no pod has left,
// Σ pods of a namespace = the namespace's counter.
TEST(LedgerGpuHours, DepartedPodsStayInTheirNamespace) {
  Ledger l;
  const std::vector<CardAccount> both = {
      Card("0", {{kA, {0.5, 0.25, 0.1}}, {kB, {0.5, 0.25, 0.2}}})};
  Step(l, both, 0);
  LedgerView v = Step(l, both, 60);
  PerBasis sum{};
  for (const GpuHoursView& p : v.other_pod_hours)
    for (size_t b = 0; b < accounting::kBases; ++b) sum[b] += p.hours[b];
  for (size_t b = 0; b < accounting::kBases; ++b)
    EXPECT_DOUBLE_EQ(sum[b], Find(v.namespace_gpu_hours, "ml")->hours[b]);
  v = Step(l, {Card("0", {{kA, {0.5, 0.25, 0.1}}})}, 120, PodUids{{kA, "uid-a"}});
  EXPECT_FALSE(Find(v.other_pod_hours, "n1", kB));
  // 60 s of a and b (0.5 each), then 60 s of a alone: 1.5/60, b's part kept after it left.
  EXPECT_DOUBLE_EQ(At(Find(v.namespace_gpu_hours, "ml")->hours, Basis::kAllocation), 1.5 / 60);
}

// A pod still in the cluster but on no card this cycle keeps its counter; another UID under the
// same name is another pod, starting at 0.
TEST(LedgerGpuHours, KeepsPodsStillThereAndRestartsRecreatedOnes) {
  Ledger l;
  Step(l, {Card("0", {{kA, {1, 1, 1}}})}, 0);
  Step(l, {Card("0", {{kA, {1, 1, 1}}})}, 60);
  LedgerView v = Step(l, {Card("0", {})}, 120);
  ASSERT_TRUE(Find(v.other_pod_hours, "n1", kA));
  EXPECT_DOUBLE_EQ(At(Find(v.other_pod_hours, "n1", kA)->hours, Basis::kMemory), 1.0 / 60);
  CardAccount recreated = Card("0", {{kA, {1, 1, 1}}});
  recreated.pods[0].uid = "uid-a2";
  v = Step(l, {recreated}, 180, PodUids{{kA, "uid-a2"}});
  EXPECT_EQ(Find(v.other_pod_hours, "n1", kA)->hours, (PerBasis{0, 0, 0}));
  EXPECT_DOUBLE_EQ(At(Find(v.namespace_gpu_hours, "ml")->hours, Basis::kMemory), 1.0 / 60);
}

// Through the state file: a restarted ledger continues every counter, and the interval across
// the restart accrues when the previous cycle was successful and recent.
TEST(LedgerGpuHours, ARestartFromTheStateFileContinuesEveryCounter) {
  Ledger before;
  const std::vector<CardAccount> cards = {Card("0", {{kA, {1, 0.5, 0.25}}})};
  Step(before, cards, 0);
  LedgerView v1 = Step(before, cards, 60, kBoth, {2.0}, "EUR");
  const std::string text = EncodeStateFile({{"c", before.state()}});
  EXPECT_THAT(text, ::testing::HasSubstr("\"accounting\""));
  auto back = DecodeStateFile(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->at("c"), before.state());
  Ledger after(LedgerParams{}, back->at("c"));
  LedgerView v2 = Step(after, cards, 120, kBoth, {2.0}, "EUR");
  const GpuHoursView* a = Find(v2.other_pod_hours, "n1", kA);
  EXPECT_DOUBLE_EQ(At(a->hours, Basis::kAllocation), 2.0 / 60);
  ASSERT_TRUE(a->cost);
  EXPECT_DOUBLE_EQ(At(*a->cost, Basis::kAllocation), 4.0 / 60);
  EXPECT_DOUBLE_EQ(At(Find(v2.node_idle_gpu_hours, "n1")->hours, Basis::kUsage), 1.5 / 60);
  EXPECT_EQ(v2.currency, "EUR");
  EXPECT_DOUBLE_EQ(At(Find(v1.namespace_gpu_hours, "ml")->hours, Basis::kUsage), 0.25 / 60);
}

// A version 1 file (before GPU-hours) loads, with empty accounting.
TEST(LedgerGpuHours, AVersionOneFileLoadsWithEmptyAccounting) {
  auto old = DecodeStateFile(R"({"format": "gpuattr-state", "version": 1, "clusters": {"c": {
      "last_cycle_unix": 1000.5,
      "namespaces": [{"namespace": "ml", "joules": 50, "last_seen_unix": 1000.5}]}}})");
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_TRUE(old->at("c").accounting.empty());
  EXPECT_EQ(old->at("c").namespaces.at("ml").joules, 50);
}

TEST(LedgerGpuHours, MalformedAccountingIsAnErrorNamingTheField) {
  auto bad = DecodeStateFile(R"({"format": "gpuattr-state", "version": 2, "clusters": {"c": {
      "accounting": {"pods": [{"namespace": "ml", "pod": "a", "node": "n1",
                               "hours": {"allocation": "lots"}}]}}}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, ::testing::HasSubstr("accounting.pods[0].hours.allocation"));
}

namespace fastpath {

// A random cycle: cards on two nodes, each with 0-3 pods drawn from a small pool (so pods come,
// go, move between cards and come back), sometimes in another card order, sometimes with one
// card's UUID repeated on another card, some pods without a UID.
std::vector<CardAccount> RandomCycle(std::mt19937& rng) {
  std::uniform_int_distribution<int> pods_on(0, 3), pool(0, 11), coin(0, 9);
  std::vector<CardAccount> cards;
  for (int i = 0; i < 6; ++i) {
    CardAccount c;
    c.node = i < 3 ? "n1" : "n2";
    c.gpu = std::to_string(i);
    c.uuid = "GPU-" + c.gpu;
    std::set<int> chosen;
    for (int k = pods_on(rng); k > 0; --k) chosen.insert(pool(rng));
    const double share = chosen.empty() ? 0 : 1.0 / static_cast<double>(chosen.size());
    for (int p : chosen) {
      const std::string name = "p" + std::to_string(p);
      c.pods.push_back({{"ns" + std::to_string(p % 3), name},
                        p % 5 == 0 ? "" : "uid-" + name,
                        {share, share, share / 2}});
    }
    for (size_t b = 0; b < accounting::kBases; ++b)
      c.idle[b] = chosen.empty() ? 1 : b == 2 ? 0.5 : 0;
    cards.push_back(std::move(c));
  }
  if (coin(rng) == 0) std::swap(cards[0], cards[1]);   // another order
  if (coin(rng) == 0) cards[2].uuid = cards[1].uuid;   // a duplicated UUID
  if (coin(rng) == 0) cards.erase(cards.begin() + 4);  // a card missing
  return cards;
}

}  // namespace fastpath

// The ledger meets a cycle's cards, pods and records in the last cycle's order before it looks
// them up (Ledger::CycleOrder, docs/performance.md): that is a shortcut only. A ledger copied
// before every cycle (a copy starts without the order: every key looked up) and one restarted
// from its state every few cycles must hold exactly the same state after each of 400 random
// cycles with pods coming, going and moving, cards reordered, missing and duplicated, and
// failed cycles in between.
TEST(LedgerGpuHours, TheLastCyclesOrderIsAShortcutOnly) {
  std::mt19937 rng(20261204);
  Ledger fast, restarted;
  double now = 1000;
  for (int cycle = 0; cycle < 400; ++cycle) {
    SCOPED_TRACE("cycle " + std::to_string(cycle));
    const std::vector<CardAccount> cards = fastpath::RandomCycle(rng);
    PodUids uids;
    for (const CardAccount& c : cards)
      for (const accounting::PodAccount& p : c.pods) uids.emplace(p.pod, p.uid);
    if (cycle % 17 == 5) {
      fast.BreakInterval();
      restarted.BreakInterval();
    }
    if (cycle % 7 == 3) restarted = Ledger({}, restarted.state());  // no order after a restart
    Ledger looked_up = fast;                                        // a copy: no order
    now += 20;
    Step(fast, cards, now, uids);
    Step(looked_up, cards, now, uids);
    Step(restarted, cards, now, uids);
    ASSERT_EQ(fast.state(), looked_up.state());
    ASSERT_EQ(fast.state(), restarted.state());
    // The seen sets are exactly this cycle's keys.
    KeySet pods, card_keys;
    for (const CardAccount& c : cards) {
      card_keys.insert(c.node + "/" + c.uuid);
      for (const accounting::PodAccount& p : c.pods)
        pods.insert(p.uid.empty() ? p.pod.Text() : p.uid);
    }
    KeySet seen;
    for (const auto& [id, r] : fast.state().accounting.pod_hours)
      if (r.seen != SeenAs::kNo) seen.insert(r.seen == SeenAs::kUid ? r.uid.str() : id.Text());
    ASSERT_EQ(seen, pods);
    ASSERT_EQ(fast.state().accounting.cards, card_keys);
  }
  // Not vacuous: hours accrued.
  EXPECT_FALSE(fast.state().accounting.pod_hours.empty());
  double hours = 0;
  for (const auto& [id, r] : fast.state().accounting.namespace_hours) hours += r.total.hours[0];
  EXPECT_GT(hours, 1.0);
}

}  // namespace
}  // namespace gpuattr::ledger
