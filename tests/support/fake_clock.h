// A Clock for tests (util/clock.h): time moves only when the test says so.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "gpuattr/util/clock.h"

namespace gpuattr {

// Time moves only when told to (Advance) or when someone sleeps. By default SleepFor records the
// requested duration, advances both clocks by it and returns at once. With SetBlockingSleeps(true)
// a sleeper instead waits (really) until Advance() moves time past its deadline or it is stopped,
// so a test can hold a background retry loop still and inspect it. Thread-safe.
class FakeClock final : public Clock {
 public:
  FakeClock();
  std::chrono::steady_clock::time_point Now() const override;
  std::chrono::system_clock::time_point WallNow() const override;
  bool SleepFor(std::chrono::milliseconds d, const StopSignal* stop = nullptr) override;

  void Advance(std::chrono::milliseconds d);
  void SetBlockingSleeps(bool blocking);
  // Sleepers currently blocked (blocking mode only).
  int BlockedSleepers() const;
  // Every SleepFor duration so far, in call order (the most recent 10,000 are kept).
  std::vector<std::chrono::milliseconds> Sleeps() const;
  void ClearSleeps();

 private:
  mutable std::mutex mu_;
  std::condition_variable advanced_;
  bool blocking_ = false;
  int blocked_ = 0;
  std::chrono::steady_clock::time_point now_;
  std::chrono::system_clock::time_point wall_;
  std::vector<std::chrono::milliseconds> sleeps_;
};

}  // namespace gpuattr
