// Invariants of the GPU-hours on every fixture scenario (docs/accounting.md#invariants): per card
// and basis Σ pods + idle = Δt/3600 within 1e-9 relative, nothing negative, and the three bases
// add up to the same total.
#include <gtest/gtest.h>

#include <cmath>

#include "golden/attribution_harness.h"
#include "gpuattr/accounting/accounting.h"

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
  auto c = gpuattr::testing::LoadAttributionCase(GetParam(), /*skip_non_gpu=*/true);
  ASSERT_TRUE(c.ok()) << c.error().message;
  model::CycleOutput out = gpuattr::testing::RunCase(*c);
  const AccountingInput in{out.attribution, out.allocation, c->objects};
  CheckCards(ShareCards(in), 1);
  for (double seconds : {15.0, 60.0, 3600.0}) CheckCards(Account(in, seconds), seconds / 3600);
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
