// The ledger's rules (ledger.h, docs/ledger.md): idle runs, energy integration with the gap
// rule, namespace counters that never go down, and pods that come, go and move.
#include "gpuattr/ledger/ledger.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>

#include "gpuattr/util/clock.h"
#include "support/fake_clock.h"

namespace gpuattr::ledger {
namespace {

using attribution::Attribution;
using attribution::Pod;
using kube::PodId;

Pod MakePod(const std::string& ns, const std::string& name, std::optional<double> watts,
            std::optional<bool> idle = false, const std::string& node = "n1") {
  Pod p;
  p.id = kube::PodId{ns, name};
  p.node = node;
  p.power_watts = watts;
  p.idle = idle;
  return p;
}

Attribution Attr(std::vector<Pod> pods) {
  Attribution a;
  a.cluster = "c";
  std::sort(pods.begin(), pods.end(), [](const Pod& x, const Pod& y) { return x.id < y.id; });
  a.pods = std::move(pods);
  return a;
}

// A cycle's view with the attribution it was recorded from (its pod rows index into it).
struct Recorded {
  Attribution attribution;
  LedgerView view;
};

Recorded Record(Ledger& ledger, Attribution a, double now, const PodUids* in_cluster = nullptr) {
  Recorded r{std::move(a), {}};
  r.view = ledger.Record(r.attribution, now, in_cluster);
  return r;
}

// Every pod's row as a reader sees it (ForEachPodLedger), in its order, with its names copied.
std::vector<PodLedger> Rows(const LedgerView& v, const std::vector<Pod>& pods) {
  std::vector<PodLedger> out;
  ForEachPodLedger(v, pods, [&](const PodLedgerRef& r) {
    out.push_back({r.id, r.node, r.idle, r.idle_seconds, r.energy_joules});
  });
  return out;
}
std::vector<PodLedger> Rows(const Recorded& r) { return Rows(r.view, r.attribution.pods); }

std::optional<PodLedger> FindPod(const Recorded& r, const std::string& ns,
                                 const std::string& name) {
  for (const PodLedger& p : Rows(r))
    if (p.id == kube::PodId{ns, name}) return p;
  return std::nullopt;
}

std::optional<double> NamespaceJoules(const Recorded& r, const std::string& ns) {
  for (const NamespaceLedger& n : r.view.namespaces)
    if (n.name == ns) return n.energy_joules;
  return std::nullopt;
}

double WallSeconds(const Clock& clock) {
  return std::chrono::duration<double>(clock.WallNow().time_since_epoch()).count();
}

// --- idle runs
// ------------------------------------------------------------------------------------

TEST(LedgerIdle, PodIdleForThreeCyclesReportsTheRunLength) {
  FakeClock clock;
  Ledger ledger;
  const Attribution idle = Attr({MakePod("a", "x", 50, true)});
  std::vector<double> seen;
  for (int cycle = 0; cycle < 3; ++cycle) {
    if (cycle > 0) clock.Advance(std::chrono::seconds(20));
    Recorded v = Record(ledger, idle, WallSeconds(clock));
    const std::optional<PodLedger> p = FindPod(v, "a", "x");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->idle, true);
    ASSERT_TRUE(p->idle_seconds.has_value());
    seen.push_back(*p->idle_seconds);
  }
  // The run starts at the first cycle that found the pod idle.
  EXPECT_EQ(seen, (std::vector<double>{0, 20, 40}));
}

TEST(LedgerIdle, OneBusyCycleResetsTheRun) {
  Ledger ledger;
  ledger.Record(Attr({MakePod("a", "x", 50, true)}), 1000);
  ledger.Record(Attr({MakePod("a", "x", 50, true)}), 1020);
  Recorded busy = Record(ledger, Attr({MakePod("a", "x", 50, false)}), 1040);
  EXPECT_EQ(FindPod(busy, "a", "x")->idle, false);
  EXPECT_EQ(FindPod(busy, "a", "x")->idle_seconds, 0.0);  // known: not idle, a run of 0
  Recorded again = Record(ledger, Attr({MakePod("a", "x", 50, true)}), 1060);
  EXPECT_EQ(FindPod(again, "a", "x")->idle_seconds, 0.0);
  Recorded later = Record(ledger, Attr({MakePod("a", "x", 50, true)}), 1080);
  EXPECT_EQ(FindPod(later, "a", "x")->idle_seconds, 20.0);
}

// A cycle that cannot tell (no memory or utilisation figure) neither extends nor ends the run.
TEST(LedgerIdle, UnknownIdlenessIsAbsentAndKeepsTheRun) {
  Ledger ledger;
  ledger.Record(Attr({MakePod("a", "x", 50, true)}), 1000);
  Recorded unknown = Record(ledger, Attr({MakePod("a", "x", 50, std::nullopt)}), 1020);
  EXPECT_FALSE(FindPod(unknown, "a", "x")->idle.has_value());
  EXPECT_FALSE(FindPod(unknown, "a", "x")->idle_seconds.has_value());
  Recorded idle = Record(ledger, Attr({MakePod("a", "x", 50, true)}), 1040);
  EXPECT_EQ(FindPod(idle, "a", "x")->idle_seconds, 40.0);  // the run since 1000 goes on
}

// The pod's exporter did not answer for two cycles (the pod is missing from the attribution but
// still in the cluster): unknown, so the idle run survives; a busy observation still ends it.
TEST(LedgerIdle, AMissingPodKeepsItsRunAcrossAShortGap) {
  Ledger ledger;
  const PodUids cluster = {{{"a", "x"}, "uid-x"}, {{"a", "y"}, "uid-y"}};
  ledger.Record(Attr({MakePod("a", "x", 50, true), MakePod("a", "y", 9)}), 1000, &cluster);
  ledger.Record(Attr({MakePod("a", "x", 50, true), MakePod("a", "y", 9)}), 1020, &cluster);
  for (double t : {1040.0, 1060.0}) {
    Recorded gap = Record(ledger, Attr({MakePod("a", "y", 9)}), t, &cluster);
    ASSERT_TRUE(FindPod(gap, "a", "x"));
    EXPECT_FALSE(FindPod(gap, "a", "x")->idle_seconds.has_value());  // unknown, not 0
    EXPECT_EQ(ledger.state().pods.at({"a", "x"}).idle_since_unix, 1000.0);
  }
  Recorded back = Record(ledger, Attr({MakePod("a", "x", 50, true)}), 1080, &cluster);
  EXPECT_EQ(FindPod(back, "a", "x")->idle_seconds, 80.0);
  Recorded busy = Record(ledger, Attr({MakePod("a", "x", 50, false)}), 1100, &cluster);
  EXPECT_EQ(FindPod(busy, "a", "x")->idle_seconds, 0.0);
  Recorded again = Record(ledger, Attr({MakePod("a", "x", 50, true)}), 1120, &cluster);
  EXPECT_EQ(FindPod(again, "a", "x")->idle_seconds, 0.0);
}

// Unknown for longer than the gap bound: nobody watched the pod, so the next idle cycle starts a
// new run.
TEST(LedgerIdle, AnUnknownSpellLongerThanTheBoundRestartsTheRun) {
  Ledger ledger(LedgerParams{.max_gap_seconds = 300});
  const PodUids cluster = {{{"a", "x"}, "uid-x"}};
  ledger.Record(Attr({MakePod("a", "x", 50, true)}), 1000, &cluster);
  for (double t = 1020; t <= 1300; t += 20) ledger.Record(Attr({}), t, &cluster);
  Recorded within = Record(ledger, Attr({MakePod("a", "x", 50, true)}), 1300, &cluster);
  EXPECT_EQ(FindPod(within, "a", "x")->idle_seconds, 300.0);  // exactly the bound: kept
  for (double t = 1320; t <= 1600; t += 20) ledger.Record(Attr({}), t, &cluster);
  Recorded after = Record(ledger, Attr({MakePod("a", "x", 50, true)}), 1601, &cluster);
  EXPECT_EQ(FindPod(after, "a", "x")->idle_seconds, 0.0);
}

TEST(LedgerIdle, AGapLongerThanTheBoundRestartsTheRun) {
  Ledger ledger(LedgerParams{.max_gap_seconds = 300});
  ledger.Record(Attr({MakePod("a", "x", 50, true)}), 1000);
  Recorded within = Record(ledger, Attr({MakePod("a", "x", 50, true)}), 1300);
  EXPECT_EQ(FindPod(within, "a", "x")->idle_seconds, 300.0);
  Recorded after_gap = Record(ledger, Attr({MakePod("a", "x", 50, true)}), 1601);
  EXPECT_EQ(FindPod(after_gap, "a", "x")->idle_seconds, 0.0);
}

// --- energy
// ---------------------------------------------------------------------------------------

TEST(LedgerEnergy, ConstantHundredWattsForSixtySecondsGainsSixThousandJoules) {
  FakeClock clock;
  Ledger ledger;
  const Attribution a = Attr({MakePod("a", "x", 100)});
  Recorded v = Record(ledger, a, WallSeconds(clock));
  EXPECT_EQ(FindPod(v, "a", "x")->energy_joules, 0.0);  // the counter starts at 0
  for (int i = 0; i < 4; ++i) {  // 20 s, 10 s, 15 s and 15 s: uneven cycles, 60 s in all
    clock.Advance(std::chrono::seconds(i == 0 ? 20 : i == 1 ? 10 : 15));
    v = Record(ledger, a, WallSeconds(clock));
  }
  ASSERT_TRUE(FindPod(v, "a", "x")->energy_joules.has_value());
  EXPECT_DOUBLE_EQ(*FindPod(v, "a", "x")->energy_joules, 6000);
  EXPECT_DOUBLE_EQ(*NamespaceJoules(v, "a"), 6000);
}

TEST(LedgerEnergy, ChangingPowerIsIntegratedWithTheTrapezoidRule) {
  Ledger ledger;
  ledger.Record(Attr({MakePod("a", "x", 100)}), 1000);
  Recorded v = Record(ledger, Attr({MakePod("a", "x", 200)}), 1010);
  EXPECT_DOUBLE_EQ(*FindPod(v, "a", "x")->energy_joules, 1500);
}

TEST(LedgerEnergy, AGapLongerThanTheBoundAddsNothing) {
  Ledger ledger(LedgerParams{.max_gap_seconds = 300});
  ledger.Record(Attr({MakePod("a", "x", 100)}), 1000);
  Recorded v = Record(ledger, Attr({MakePod("a", "x", 100)}), 1020);
  EXPECT_DOUBLE_EQ(*FindPod(v, "a", "x")->energy_joules, 2000);
  v = Record(ledger, Attr({MakePod("a", "x", 100)}), 1020 + 301);  // gpuattr was down 5 min
  EXPECT_DOUBLE_EQ(*FindPod(v, "a", "x")->energy_joules, 2000);
  v = Record(ledger, Attr({MakePod("a", "x", 100)}), 1020 + 301 + 10);  // counting again
  EXPECT_DOUBLE_EQ(*FindPod(v, "a", "x")->energy_joules, 3000);
}

TEST(LedgerEnergy, AClockGoingBackwardsAddsNothing) {
  Ledger ledger;
  ledger.Record(Attr({MakePod("a", "x", 100, true)}), 1000);
  Recorded v = Record(ledger, Attr({MakePod("a", "x", 100, true)}), 990);
  EXPECT_DOUBLE_EQ(*FindPod(v, "a", "x")->energy_joules, 0);
  EXPECT_EQ(FindPod(v, "a", "x")->idle_seconds, 0.0);  // never negative
  v = Record(ledger, Attr({MakePod("a", "x", 100, true)}), 1000);
  EXPECT_DOUBLE_EQ(*FindPod(v, "a", "x")->energy_joules, 1000);
}

// A cycle without the pod's power keeps its last known power: the next known power closes the
// trapezoid over the whole stretch, so a blip loses no energy.
TEST(LedgerEnergy, UnknownPowerKeepsTheCounterAndTheLastPower) {
  Ledger ledger;
  ledger.Record(Attr({MakePod("a", "x", 100)}), 1000);
  ledger.Record(Attr({MakePod("a", "x", 100)}), 1010);  // 1000 J
  Recorded v = Record(ledger, Attr({MakePod("a", "x", std::nullopt)}), 1020);
  EXPECT_DOUBLE_EQ(*FindPod(v, "a", "x")->energy_joules, 1000);  // nothing invented meanwhile
  v = Record(ledger, Attr({MakePod("a", "x", 300)}), 1030);
  EXPECT_DOUBLE_EQ(*FindPod(v, "a", "x")->energy_joules, 1000 + (100 + 300) / 2.0 * 20);
  EXPECT_DOUBLE_EQ(*NamespaceJoules(v, "a"), 5000);
}

// The pod missing from two cycles (its exporter failed) and back: the same.
TEST(LedgerEnergy, AMissingPodLosesNoEnergyAcrossAShortGap) {
  Ledger ledger;
  const PodUids cluster = {{{"a", "x"}, "uid-x"}};
  ledger.Record(Attr({MakePod("a", "x", 100)}), 1000, &cluster);
  ledger.Record(Attr({}), 1020, &cluster);
  Recorded gap = Record(ledger, Attr({}), 1040, &cluster);
  EXPECT_DOUBLE_EQ(*FindPod(gap, "a", "x")->energy_joules, 0);
  Recorded back = Record(ledger, Attr({MakePod("a", "x", 100)}), 1060, &cluster);
  EXPECT_DOUBLE_EQ(*FindPod(back, "a", "x")->energy_joules, 6000);
  // Missing for longer than the bound: that stretch adds nothing, counting resumes afterwards.
  for (double t = 1080; t <= 1380; t += 20) ledger.Record(Attr({}), t, &cluster);
  Recorded late = Record(ledger, Attr({MakePod("a", "x", 100)}), 1400, &cluster);
  EXPECT_DOUBLE_EQ(*FindPod(late, "a", "x")->energy_joules, 6000);
  late = Record(ledger, Attr({MakePod("a", "x", 100)}), 1410, &cluster);
  EXPECT_DOUBLE_EQ(*FindPod(late, "a", "x")->energy_joules, 7000);
}

TEST(LedgerEnergy, APodWhosePowerWasNeverKnownHasNoCounter) {
  Ledger ledger;
  ledger.Record(Attr({MakePod("a", "x", std::nullopt)}), 1000);
  Recorded v = Record(ledger, Attr({MakePod("a", "x", std::nullopt)}), 1020);
  ASSERT_TRUE(FindPod(v, "a", "x"));
  EXPECT_FALSE(FindPod(v, "a", "x")->energy_joules.has_value());
  EXPECT_FALSE(NamespaceJoules(v, "a").has_value());
}

// Σ pods = namespace while no pod has left; the namespace never goes down while pods come and go.
TEST(LedgerEnergy, NamespaceCounterIsMonotonicWhilePodsComeAndGo) {
  Ledger ledger;
  const std::vector<Attribution> cycles = {
      Attr({MakePod("a", "x", 100), MakePod("a", "y", 50), MakePod("b", "z", 10)}),
      Attr({MakePod("a", "x", 120), MakePod("a", "y", 60), MakePod("b", "z", 10)}),
      Attr({MakePod("a", "x", 80), MakePod("b", "z", 10)}),                         // y left
      Attr({MakePod("a", "x", 80), MakePod("a", "w", 40), MakePod("b", "z", 10)}),  // w came
      Attr({MakePod("a", "w", 40), MakePod("b", "z", 10)}),                         // x left
      Attr({MakePod("b", "z", 10)}),                         // no pod of a is left
      Attr({MakePod("a", "x", 90), MakePod("b", "z", 10)}),  // a pod named x again: a new pod
      Attr({MakePod("a", "x", 90), MakePod("b", "z", 10)}),
  };
  double previous = 0;
  double t = 1000;
  bool a_lost_a_pod = false;
  for (size_t i = 0; i < cycles.size(); ++i, t += 10) {
    SCOPED_TRACE("cycle " + std::to_string(i));
    Recorded v = Record(ledger, cycles[i], t);
    const double a = NamespaceJoules(v, "a").value_or(-1);
    EXPECT_GE(a, previous);
    previous = a;
    double sum_a = 0, sum_b = 0;
    for (const PodLedger& p : Rows(v))
      (p.id.namespace_ == "a" ? sum_a : sum_b) += p.energy_joules.value_or(0);
    a_lost_a_pod |= i == 2;
    if (!a_lost_a_pod) {
      EXPECT_DOUBLE_EQ(a, sum_a);
    }
    EXPECT_DOUBLE_EQ(*NamespaceJoules(v, "b"), sum_b);  // b never lost a pod
  }
  // a accrued: x 1100+1000+800, y 550, w 400, and the new x 900.
  EXPECT_DOUBLE_EQ(previous, 1100 + 1000 + 800 + 550 + 400 + 900);
}

TEST(LedgerPods, APodThatLeftIsDroppedButItsJoulesStayInTheNamespace) {
  Ledger ledger;
  ledger.Record(Attr({MakePod("a", "x", 100), MakePod("a", "y", 100)}), 1000);
  ledger.Record(Attr({MakePod("a", "x", 100), MakePod("a", "y", 100)}), 1010);
  Recorded v = Record(ledger, Attr({MakePod("a", "y", 100)}), 1020);
  EXPECT_FALSE(FindPod(v, "a", "x"));
  EXPECT_EQ(ledger.state().pods.count(kube::PodId{"a", "x"}), 0u);
  EXPECT_DOUBLE_EQ(*NamespaceJoules(v, "a"), 1000 + 2000);
}

TEST(LedgerPods, APodStillInTheClusterButNotAttributedKeepsItsRecord) {
  Ledger ledger;
  const PodUids cluster = {{{"a", "x"}, "ux"}, {{"a", "y"}, "uy"}};
  ledger.Record(Attr({MakePod("a", "x", 100, true), MakePod("a", "y", 10)}), 1000, &cluster);
  ledger.Record(Attr({MakePod("a", "x", 100, true), MakePod("a", "y", 10)}), 1010, &cluster);
  // x's exporter did not answer this cycle: x is still in the cluster.
  Recorded v = Record(ledger, Attr({MakePod("a", "y", 10)}), 1020, &cluster);
  const std::optional<PodLedger> x = FindPod(v, "a", "x");
  ASSERT_TRUE(x);
  EXPECT_DOUBLE_EQ(*x->energy_joules, 1000);
  EXPECT_FALSE(x->idle.has_value());
  EXPECT_FALSE(x->idle_seconds.has_value());
  // Back: the idle run goes on and the unseen interval is integrated from the last known power.
  v = Record(ledger, Attr({MakePod("a", "x", 100, true), MakePod("a", "y", 10)}), 1030, &cluster);
  EXPECT_DOUBLE_EQ(*FindPod(v, "a", "x")->energy_joules, 3000);
  EXPECT_EQ(FindPod(v, "a", "x")->idle_seconds, 30.0);
  EXPECT_DOUBLE_EQ(*NamespaceJoules(v, "a"), 3000 + 300);  // Σ pods: none left
}

// A pod deleted and recreated under the same name between two cycles (a StatefulSet pod, a
// Job retry) is another pod: its UID differs, so it starts with no idle run and a zero counter.
TEST(LedgerPods, ARecreatedPodWithTheSameNameStartsFresh) {
  Ledger ledger;
  const PodUids first = {{{"a", "x"}, "uid-1"}};
  ledger.Record(Attr({MakePod("a", "x", 100, true)}), 1000, &first);
  ledger.Record(Attr({MakePod("a", "x", 100, true)}), 1020, &first);
  const PodUids second = {{{"a", "x"}, "uid-2"}};
  Recorded v = Record(ledger, Attr({MakePod("a", "x", 100, true)}), 1040, &second);
  EXPECT_EQ(FindPod(v, "a", "x")->idle_seconds, 0.0);
  EXPECT_DOUBLE_EQ(*FindPod(v, "a", "x")->energy_joules, 0);
  EXPECT_DOUBLE_EQ(*NamespaceJoules(v, "a"), 2000);  // the first pod's joules stay
  EXPECT_EQ(ledger.state().pods.at({"a", "x"}).uid, "uid-2");
}

// Recreated but not attributed this cycle: the old pod left (dropped), and the new one has no
// record until it is seen.
TEST(LedgerPods, ARecreatedPodNotYetAttributedDropsTheOldRecord) {
  Ledger ledger;
  const PodUids first = {{{"a", "x"}, "uid-1"}};
  ledger.Record(Attr({MakePod("a", "x", 100, true)}), 1000, &first);
  ledger.Record(Attr({MakePod("a", "x", 100, true)}), 1020, &first);
  const PodUids second = {{{"a", "x"}, "uid-2"}};
  Recorded v = Record(ledger, Attr({}), 1040, &second);
  EXPECT_FALSE(FindPod(v, "a", "x"));
  EXPECT_EQ(ledger.state().pods.count({"a", "x"}), 0u);
  EXPECT_DOUBLE_EQ(*NamespaceJoules(v, "a"), 2000);
  v = Record(ledger, Attr({MakePod("a", "x", 100, true)}), 1060, &second);
  EXPECT_EQ(FindPod(v, "a", "x")->idle_seconds, 0.0);
  EXPECT_DOUBLE_EQ(*FindPod(v, "a", "x")->energy_joules, 0);
}

TEST(LedgerPods, APodOnAnotherNodeIsANewPod) {
  Ledger ledger;
  ledger.Record(Attr({MakePod("a", "x", 100, true, "n1")}), 1000);
  ledger.Record(Attr({MakePod("a", "x", 100, true, "n1")}), 1010);
  Recorded v = Record(ledger, Attr({MakePod("a", "x", 100, true, "n2")}), 1020);
  EXPECT_EQ(FindPod(v, "a", "x")->node, "n2");
  EXPECT_DOUBLE_EQ(*FindPod(v, "a", "x")->energy_joules, 0);
  EXPECT_EQ(FindPod(v, "a", "x")->idle_seconds, 0.0);
  EXPECT_DOUBLE_EQ(*NamespaceJoules(v, "a"), 1000);
}

TEST(LedgerPods, ANamespaceWithoutPodsIsForgottenAfterTheRetention) {
  Ledger ledger(LedgerParams{.max_gap_seconds = 300, .namespace_retention_seconds = 3600});
  ledger.Record(Attr({MakePod("a", "x", 100), MakePod("b", "z", 1)}), 1000);
  ledger.Record(Attr({MakePod("a", "x", 100), MakePod("b", "z", 1)}), 1010);
  Recorded v = Record(ledger, Attr({MakePod("b", "z", 1)}), 1010 + 3600);
  EXPECT_DOUBLE_EQ(NamespaceJoules(v, "a").value_or(-1), 1000);  // kept for the retention
  v = Record(ledger, Attr({MakePod("b", "z", 1)}), 1010 + 3601);
  EXPECT_FALSE(NamespaceJoules(v, "a").has_value());
  EXPECT_TRUE(NamespaceJoules(v, "b").has_value());
}

TEST(LedgerView, CarriesTheClusterTimeAndSortedPods) {
  Ledger ledger;
  Recorded v = Record(ledger, Attr({MakePod("b", "z", 1), MakePod("a", "x", 1)}), 1234.5);
  EXPECT_EQ(v.view.cluster, "c");
  EXPECT_EQ(v.view.recorded_unix, 1234.5);
  const std::vector<PodLedger> rows = Rows(v);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].id.name, "x");
  EXPECT_EQ(rows[1].id.name, "z");
  EXPECT_EQ(ledger.state().last_cycle_unix, 1234.5);
}

// A row as text, every field: ids, node, idle, idle seconds and joules ("-" when absent).
std::string Text(const PodLedger& p) {
  const auto known = [](const std::optional<double>& v) {
    return v ? std::to_string(*v) : std::string("-");
  };
  return p.id.Text() + " " + p.node + " " + (p.idle ? (*p.idle ? "idle" : "busy") : "-") + " " +
         known(p.idle_seconds) + " " + known(p.energy_joules);
}

std::vector<std::string> Texts(const std::vector<PodLedger>& rows) {
  std::vector<std::string> out;
  for (const PodLedger& p : rows) out.push_back(Text(p));
  return out;
}

// The reader yields the rows a view with names in every row held (before attributed pods were
// named by index): attributed pods by index, kept ones (a/k, b/a) with their names, in one pod
// order; two pods named x on two nodes keep their own node. An index outside the attribution
// the view is read with is skipped.
TEST(LedgerView, TheReaderYieldsEveryRowInPodOrderAndSkipsIndicesOutOfRange) {
  Ledger ledger;
  const PodUids cluster = {{{"a", "k"}, "uk"}, {{"a", "x"}, "ux"},  {{"a", "y"}, "uy"},
                           {{"b", "a"}, "ua"}, {{"b", "x"}, "ubx"}, {{"c", "z"}, "uz"}};
  const auto first = [] {
    return Attr({MakePod("a", "k", 20, true), MakePod("a", "x", 100, true),
                 MakePod("a", "y", 50, false), MakePod("b", "a", 40, false, "n3"),
                 MakePod("b", "x", 10, std::nullopt, "n2")});
  };
  Record(ledger, first(), 1000, &cluster);
  Record(ledger, first(), 1010, &cluster);
  // a/k and b/a are not attributed (their exporter did not answer); c/z comes without power.
  const Recorded v = Record(
      ledger,
      Attr({MakePod("a", "x", 300, true), MakePod("a", "y", std::nullopt),
            MakePod("b", "x", 10, std::nullopt, "n2"), MakePod("c", "z", std::nullopt, true)}),
      1020, &cluster);
  EXPECT_EQ(v.view.attributed_pods.size(), 4u);
  EXPECT_EQ(v.view.other_pods.size(), 2u);
  const std::vector<std::string> want = {
      "a/k n1 - - 200.000000",              // 20 W over 10 s, then not attributed
      "a/x n1 idle 20.000000 3000.000000",  // 1000 J, then (100 + 300) / 2 × 10
      "a/y n1 busy 0.000000 500.000000",    // its power unknown since: kept
      "b/a n3 - - 400.000000",
      "b/x n2 - - 200.000000",   // idleness unknown
      "c/z n1 idle 0.000000 -",  // no power ever: no counter
  };
  EXPECT_EQ(Texts(Rows(v)), want);

  // Indices past the attribution, among the rows and at the end: skipped.
  LedgerView stray = v.view;
  stray.attributed_pods.insert(stray.attributed_pods.begin() + 1, {99, true, true, true, 1, 1});
  stray.attributed_pods.push_back(
      {static_cast<uint32_t>(v.attribution.pods.size()), false, false, true, 0, 7});
  EXPECT_EQ(Texts(Rows(stray, v.attribution.pods)), want);
  // Read with a shorter attribution (b/x and c/z are its indices 2 and 3): those rows go.
  const std::vector<Pod> two(v.attribution.pods.begin(), v.attribution.pods.begin() + 2);
  EXPECT_EQ(Texts(Rows(v.view, two)),
            (std::vector<std::string>{want[0], want[1], want[2], want[3]}));
}

// An attribution not sorted by id (as a caller may build one): the rows still come by id.
TEST(LedgerView, RowsComeByIdWhateverTheAttributionsOrder) {
  Ledger ledger;
  Attribution a;
  a.cluster = "c";
  a.pods = {MakePod("b", "z", 1), MakePod("a", "x", 1), MakePod("a", "w", 1, true, "n2")};
  const Recorded v = Record(ledger, a, 1000);
  EXPECT_EQ(Texts(Rows(v)), (std::vector<std::string>{"a/w n2 idle 0.000000 0.000000",
                                                      "a/x n1 busy 0.000000 0.000000",
                                                      "b/z n1 busy 0.000000 0.000000"}));
}

// --- energy over the last 24 h -------------------------------------------------------------------

const NamespaceLedger* FindNamespace(const Recorded& r, const std::string& ns) {
  for (const NamespaceLedger& n : r.view.namespaces)
    if (n.name == ns) return &n;
  return nullptr;
}

TEST(LedgerEnergy24h, ShorterHistoryCountsEverythingSinceTheFirstCycle) {
  Ledger ledger;
  Recorded v = Record(ledger, Attr({MakePod("a", "x", 100)}), 1000);
  ASSERT_NE(FindNamespace(v, "a"), nullptr);
  EXPECT_DOUBLE_EQ(FindNamespace(v, "a")->energy_24h_joules, 0);
  EXPECT_DOUBLE_EQ(FindNamespace(v, "a")->energy_window_seconds, 0);
  for (double t = 1060; t <= 1000 + 3 * 3600; t += 60)
    v = Record(ledger, Attr({MakePod("a", "x", 100)}), t);
  // 3 h at 100 W: the window is the ledger's age, the energy all of the counter.
  const NamespaceLedger* n = FindNamespace(v, "a");
  EXPECT_DOUBLE_EQ(n->energy_window_seconds, 3 * 3600);
  EXPECT_NEAR(n->energy_24h_joules, 100.0 * 3 * 3600, 1e-6);
  EXPECT_DOUBLE_EQ(n->energy_24h_joules, n->energy_joules);
  // One mark per hour so far: 0 h, 1 h, 2 h, 3 h.
  EXPECT_EQ(ledger.state().namespaces.at("a").marks.size(), 4u);
}

TEST(LedgerEnergy24h, AfterADayOnlyTheLast24HoursCount) {
  Ledger ledger;
  Recorded v;
  // 200 W for the first 6 h, then 50 W: after 30 h, the last 24 h (6 h .. 30 h) are all at 50 W.
  double t = 0;
  for (; t <= 30 * 3600; t += 60) {
    const double watts = t < 6 * 3600 ? 200 : 50;
    v = Record(ledger, Attr({MakePod("a", "x", watts)}), 1'000'000 + t);
  }
  const NamespaceLedger* n = FindNamespace(v, "a");
  ASSERT_NE(n, nullptr);
  EXPECT_DOUBLE_EQ(n->energy_window_seconds, 86400);
  // The boundary falls between hourly marks in general and is interpolated; here it is a mark.
  EXPECT_NEAR(n->energy_24h_joules, 50.0 * 86400, 1.0);
  EXPECT_GT(n->energy_joules, n->energy_24h_joules + 200.0 * 5 * 3600);
  // The marks reach just past 24 h back: at most 26 of them.
  const auto& marks = ledger.state().namespaces.at("a").marks;
  EXPECT_LE(marks.size(), 26u);
  EXPECT_LE(marks.front().unix, 1'000'000 + 30 * 3600 - 86400.0);
  EXPECT_GT(marks[1].unix, 1'000'000 + 30 * 3600 - 86400.0);
}

TEST(LedgerEnergy24h, AClockThatWentBackwardsDropsMarksFromTheFuture) {
  Ledger ledger;
  for (double t = 0; t <= 3 * 3600; t += 60) ledger.Record(Attr({MakePod("a", "x", 10)}), 5000 + t);
  Recorded v = Record(ledger, Attr({MakePod("a", "x", 10)}), 5000 + 1800);
  for (const EnergyMark& m : ledger.state().namespaces.at("a").marks)
    EXPECT_LE(m.unix, 5000 + 1800);
  EXPECT_GE(FindNamespace(v, "a")->energy_24h_joules, 0);
  EXPECT_LE(FindNamespace(v, "a")->energy_window_seconds, 1800);
}

TEST(LedgerEnergy24h, MarksSurviveARestartThroughTheState) {
  Ledger first;
  for (double t = 0; t <= 2 * 3600; t += 60) first.Record(Attr({MakePod("a", "x", 100)}), t);
  Ledger second(LedgerParams{}, first.state());
  Recorded v = Record(second, Attr({MakePod("a", "x", 100)}), 2 * 3600 + 60);
  EXPECT_DOUBLE_EQ(FindNamespace(v, "a")->energy_window_seconds, 2 * 3600 + 60);
  EXPECT_NEAR(FindNamespace(v, "a")->energy_24h_joules, 100.0 * (2 * 3600 + 60), 1e-6);
}

}  // namespace
}  // namespace gpuattr::ledger
