// GPU-hours through a real session (docs/accounting.md#counters): the fake apiserver serves the
// basic scenario, the session runs on a fake clock 20 s a cycle, and the apiserver goes away for
// one cycle. The counters accrue over the intervals between two successful cycles only: never
// over the failed one, nor over the interval from the last good cycle before it to the first
// good one after it.
#include <gtest/gtest.h>

#include <chrono>
#include <numeric>

#include "gpuattr/accounting/accounting.h"
#include "support/fake_apiserver.h"
#include "support/session_harness.h"

namespace gpuattr {
namespace {

using std::chrono::seconds;

// The cards' hours on the allocation basis as the ledger counts them: every namespace's counter
// plus every node's idle (the two add up to the cards' hours, docs/accounting.md#invariants).
double CardHours(const model::CycleOutput& out) {
  double sum = 0;
  for (const auto& v : out.ledger.namespace_gpu_hours)
    sum += accounting::At(v.hours, accounting::Basis::kAllocation);
  for (const auto& v : out.ledger.node_idle_gpu_hours)
    sum += accounting::At(v.hours, accounting::Basis::kAllocation);
  return sum;
}

TEST(AccountingSession, AFailedCycleAddsNoGpuHoursAndBreaksTheInterval) {
  testing::SessionHarness h;
  ASSERT_TRUE(h.Start("basic"));
  auto c1 = h.Cycle();
  ASSERT_TRUE(c1->up) << (c1->errors.empty() ? "" : c1->errors[0]);
  const size_t cards = c1->result.output->attribution.cards.size();
  ASSERT_GT(cards, 0u);
  EXPECT_EQ(CardHours(*c1->result.output), 0) << "the first cycle has no interval before it";

  // A good interval: every card's 20 s.
  ASSERT_TRUE(h.WaitForWatches());
  h.clock.Advance(seconds(20));
  auto c2 = h.Cycle();
  ASSERT_TRUE(c2->up);
  const double after_good = CardHours(*c2->result.output);
  EXPECT_NEAR(after_good, cards * 20.0 / 3600, 1e-12);

  // The apiserver answers nothing but 503: the cycle fails and publishes nothing.
  testing::FaultRule down;
  down.status = 503;
  h.server->AddFault(down);
  h.clock.Advance(seconds(20));
  auto c3 = h.Cycle();
  EXPECT_FALSE(c3->up);
  EXPECT_EQ(c3->result.output, nullptr);

  // Back: the first good cycle after the failure starts a new interval and adds nothing.
  h.server->ClearFaults();
  ASSERT_TRUE(h.WaitForWatches());
  h.clock.Advance(seconds(20));
  auto c4 = h.Cycle();
  ASSERT_TRUE(c4->up) << (c4->errors.empty() ? "" : c4->errors[0]);
  EXPECT_NEAR(CardHours(*c4->result.output), after_good, 1e-12)
      << "GPU-hours accrued over an interval with a failed cycle in it";

  // The next interval accrues again, 20 s of every card.
  ASSERT_TRUE(h.WaitForWatches());
  h.clock.Advance(seconds(20));
  auto c5 = h.Cycle();
  ASSERT_TRUE(c5->up);
  EXPECT_NEAR(CardHours(*c5->result.output), after_good + cards * 20.0 / 3600, 1e-12);
}

}  // namespace
}  // namespace gpuattr
