// Invariants of the GPU-hours on every fixture scenario (docs/accounting.md#invariants): per card
// and basis Σ pods + idle = Δt/3600 within 1e-9 relative, nothing negative, and the three bases
// add up to the same total.
#include <gtest/gtest.h>

#include <cmath>

#include "golden/accounting_harness.h"
#include "gpuattr/accounting/accounting.h"
#include "gpuattr/accounting/prices.h"
#include "gpuattr/ledger/state_codec.h"
#include "test_paths.h"

namespace gpuattr::accounting {
namespace {

namespace fs = std::filesystem;

bool Near(double a, double b, double rel = 1e-9) {
  return std::fabs(a - b) <= rel * std::max({std::fabs(a), std::fabs(b)}) + 1e-15;
}

void CheckCards(const std::vector<CardAccount>& cards, double hours) {
  PerBasis fleet{};
  for (const CardAccount& c : cards) {
    const std::string card = c.node + "/" + c.gpu;
    EXPECT_DOUBLE_EQ(c.total, hours) << card;
    for (Basis b : kAllBases) {
      double sum = At(c.idle, b);
      EXPECT_GE(At(c.idle, b), 0) << card << " " << BasisName(b);
      for (const PodAccount& p : c.pods) {
        EXPECT_GE(At(p.value, b), 0) << card << " " << p.pod.Text();
        sum += At(p.value, b);
      }
      EXPECT_TRUE(Near(sum, hours))
          << card << " " << BasisName(b) << ": " << sum << " != " << hours;
      At(fleet, b) += sum;
    }
  }
  EXPECT_TRUE(Near(fleet[0], fleet[1]));
  EXPECT_TRUE(Near(fleet[0], fleet[2]));
  EXPECT_TRUE(Near(fleet[0], hours * static_cast<double>(cards.size())));
}

class AccountingInvariants : public ::testing::TestWithParam<fs::path> {};

TEST_P(AccountingInvariants, CardsAddUp) {
  auto c = gpuattr::testing::LoadAccountingCase(GetParam());
  ASSERT_TRUE(c.ok()) << c.error().message;
  model::CycleOutput out = gpuattr::testing::RunCase(*c);
  const AccountingInput in{out.attribution, out.allocation, c->objects};
  CheckCards(ShareCards(in), 1);
  for (double seconds : {15.0, 60.0, 3600.0}) CheckCards(Account(in, seconds), seconds / 3600);
}

// One cycle of the case at `now` through the daemon's stages, with `state` carried over.
model::CycleOutput Cycle(const gpuattr::testing::AttributionCase& c, app::StageState& state,
                         double now, const app::StageParams& params = {}) {
  app::CycleInput in;
  in.cluster = "test";
  in.objects = std::make_shared<const kube::ClusterObjects>(c.objects);
  in.readings = c.exporters;
  in.now_unix = now;
  return app::RunStages(in, state, params);
}

// With one price for every card (2.5 EUR per GPU-hour), every cost is its hours × 2.5 and every
// card has its price series.
void CheckCosts(const gpuattr::testing::AttributionCase& c) {
  app::StageParams params;
  params.currency = "EUR";
  params.prices = std::make_shared<const PriceList>(*PriceList::Make({{{}, "", 2.5}}));
  app::StageState state;
  Cycle(c, state, 1000, params);
  const model::CycleOutput out = Cycle(c, state, 1060, params);
  EXPECT_EQ(out.ledger.currency, "EUR");
  EXPECT_EQ(out.ledger.card_prices.size(), out.attribution.cards.size());
  for (const auto* rows : {&out.ledger.namespace_gpu_hours, &out.ledger.node_idle_gpu_hours})
    for (const ledger::GpuHoursView& r : *rows) {
      ASSERT_TRUE(r.cost) << r.name;
      for (Basis b : kAllBases) EXPECT_TRUE(Near(At(*r.cost, b), 2.5 * At(r.hours, b))) << r.name;
    }
  size_t pods = 0;
  ledger::ForEachPodHours(out.ledger, out.attribution.pods, [&](const ledger::PodHoursRef& r) {
    ++pods;
    ASSERT_TRUE(r.cost) << r.node << " " << r.pod.Text();
    for (Basis b : kAllBases)
      EXPECT_TRUE(Near(At(*r.cost, b), 2.5 * At(r.hours, b))) << r.node << " " << r.pod.Text();
  });
  EXPECT_EQ(pods, out.ledger.pod_hours.size() + out.ledger.other_pod_hours.size());
}

// The counters after cycles at t and t + 60 s: per basis Σ pods + Σ nodes' idle = the cards ×
// 60/3600 (over the cluster: a pod's counter carries one node, and in these unvetted scenarios
// an exporter may name a pod of another node); Σ pods of a namespace = its counter. Then a
// restart through the state file and a cycle 60 s later: every counter continues (doubles, as
// the shares did not change).
void CheckCounters(const gpuattr::testing::AttributionCase& c) {
  const double t = 1764460800, hours = 60.0 / 3600;
  app::StageState state;
  const model::CycleOutput first = Cycle(c, state, t);
  const model::CycleOutput out = Cycle(c, state, t + 60);
  const double cards = hours * static_cast<double>(out.attribution.cards.size());
  for (Basis b : kAllBases) {
    double total = 0;
    std::map<std::string, double> by_namespace;
    ledger::ForEachPodHours(out.ledger, out.attribution.pods, [&](const ledger::PodHoursRef& p) {
      total += At(p.hours, b);
      by_namespace[p.pod.namespace_] += At(p.hours, b);
    });
    for (const ledger::GpuHoursView& n : out.ledger.node_idle_gpu_hours) total += At(n.hours, b);
    EXPECT_TRUE(Near(total, cards)) << BasisName(b) << ": " << total << " != " << cards;
    for (const ledger::GpuHoursView& n : out.ledger.namespace_gpu_hours)
      EXPECT_TRUE(Near(by_namespace[n.name], At(n.hours, b))) << n.name << " " << BasisName(b);
  }
  auto saved = ledger::DecodeStateFile(ledger::EncodeStateFile({{"test", state.ledger.state()}}));
  ASSERT_TRUE(saved.ok()) << saved.error().message;
  app::StageState restarted{ledger::Ledger({}, saved->at("test")), {}, rightsizing::Tracker()};
  const model::CycleOutput again = Cycle(c, restarted, t + 120);
  ASSERT_EQ(again.ledger.namespace_gpu_hours.size(), out.ledger.namespace_gpu_hours.size());
  for (size_t i = 0; i < out.ledger.namespace_gpu_hours.size(); ++i)
    for (Basis b : kAllBases)
      EXPECT_TRUE(Near(At(again.ledger.namespace_gpu_hours[i].hours, b),
                       2 * At(out.ledger.namespace_gpu_hours[i].hours, b)))
          << out.ledger.namespace_gpu_hours[i].name;
  ledger::ForEachPodHours(first.ledger, first.attribution.pods, [](const ledger::PodHoursRef& p) {
    EXPECT_EQ(p.hours, (PerBasis{0, 0, 0})) << p.pod.Text();
  });
}

TEST_P(AccountingInvariants, CountersAddUpAndSurviveARestart) {
  auto c = gpuattr::testing::LoadAccountingCase(GetParam());
  ASSERT_TRUE(c.ok()) << c.error().message;
  CheckCounters(*c);
  CheckCosts(*c);
}

std::string Name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string n = info.param.filename().string();
  for (char& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

// Every scenario of fixtures/scenarios, not only the attribution ones (DRA, the demo, forgeries).
std::vector<fs::path> EveryScenario() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(GPUATTR_SOURCE_DIR) / "fixtures/scenarios"))
    if (e.is_directory()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, AccountingInvariants, ::testing::ValuesIn(EveryScenario()),
                         Name);

// The walk above found the scenarios, and they have cards to account.
TEST(AccountingInvariantsWalk, CoversTheAttributionScenarios) {
  EXPECT_GE(EveryScenario().size(), gpuattr::testing::AttributionScenarioDirs().size());
  EXPECT_GE(gpuattr::testing::AttributionScenarioDirs().size(), 12u);
}

}  // namespace
}  // namespace gpuattr::accounting
