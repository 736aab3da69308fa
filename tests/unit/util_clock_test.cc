#include "gpuattr/util/clock.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "support/fake_clock.h"

namespace gpuattr {
namespace {

using namespace std::chrono_literals;

TEST(FakeClock, SleepsAreRecordedAndMoveTime) {
  FakeClock clock;
  auto t0 = clock.Now();
  auto w0 = clock.WallNow();
  EXPECT_TRUE(clock.SleepFor(3s));
  EXPECT_TRUE(clock.SleepFor(250ms));
  EXPECT_EQ(clock.Now() - t0, 3250ms);
  EXPECT_EQ(clock.WallNow() - w0, 3250ms);
  EXPECT_EQ(clock.Sleeps(), (std::vector<std::chrono::milliseconds>{3000ms, 250ms}));
  clock.Advance(1s);
  EXPECT_EQ(clock.Now() - t0, 4250ms);
  clock.ClearSleeps();
  EXPECT_TRUE(clock.Sleeps().empty());
}

TEST(FakeClock, SleepReportsAStop) {
  FakeClock clock;
  StopSignal stop;
  EXPECT_TRUE(clock.SleepFor(1s, &stop));
  stop.Stop();
  EXPECT_FALSE(clock.SleepFor(1s, &stop));
}

TEST(FakeClock, BlockingSleepsWaitForAdvance) {
  FakeClock clock;
  clock.SetBlockingSleeps(true);
  auto done = std::async(std::launch::async, [&] { return clock.SleepFor(10s); });
  for (int i = 0; i < 10000 && clock.BlockedSleepers() == 0; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(clock.BlockedSleepers(), 1);
  clock.Advance(5s);
  EXPECT_EQ(clock.BlockedSleepers(), 1);  // not yet past its deadline
  clock.Advance(5s);
  ASSERT_EQ(done.wait_for(30s), std::future_status::ready);
  EXPECT_TRUE(done.get());
}

TEST(FakeClock, BlockingSleepEndsOnStop) {
  FakeClock clock;
  clock.SetBlockingSleeps(true);
  StopSignal stop;
  auto done = std::async(std::launch::async, [&] { return clock.SleepFor(10s, &stop); });
  stop.Stop();
  ASSERT_EQ(done.wait_for(30s), std::future_status::ready);
  EXPECT_FALSE(done.get());
}

TEST(RealClock, SleepEndsEarlyOnStop) {
  StopSignal stop;
  std::thread stopper([&] { stop.Stop(); });
  // An hour-long sleep that must end because of the stop (the test would hang otherwise).
  EXPECT_FALSE(SystemClock().SleepFor(std::chrono::hours(1), &stop));
  stopper.join();
  EXPECT_TRUE(stop.stopped());
  EXPECT_TRUE(stop.WaitFor(1h));
  EXPECT_TRUE(SystemClock().SleepFor(0ms));
}

TEST(StopSignal, WaitForTimesOutWhenNotStopped) {
  StopSignal stop;
  EXPECT_FALSE(stop.WaitFor(1ms));
  EXPECT_FALSE(stop.stopped());
}

}  // namespace
}  // namespace gpuattr
