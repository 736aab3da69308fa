// Time as an injectable seam (leveldb `Env` style): code that waits or reads the time takes a
// Clock, so tests use a fake one (tests/support/fake_clock.h) and never sleep. StopSignal makes
// every wait interruptible for prompt Stop().
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace gpuattr {

// A one-way "please stop" flag that sleepers can wait on.
class StopSignal {
 public:
  void Stop();
  bool stopped() const;
  // Waits up to `d`; returns true when stopped (now or during the wait).
  bool WaitFor(std::chrono::milliseconds d) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool stopped_ = false;
};

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time for durations and deadlines.
  virtual std::chrono::steady_clock::time_point Now() const = 0;
  // Wall-clock time for timestamps shown to users.
  virtual std::chrono::system_clock::time_point WallNow() const = 0;
  // Sleeps for `d`, ending early when `stop` is stopped. Returns false when stopped.
  virtual bool SleepFor(std::chrono::milliseconds d, const StopSignal* stop = nullptr) = 0;
};

class RealClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() const override;
  std::chrono::system_clock::time_point WallNow() const override;
  bool SleepFor(std::chrono::milliseconds d, const StopSignal* stop = nullptr) override;
};

// The process-wide real clock (stateless; safe to share).
Clock& SystemClock();

// Seconds since the Unix epoch, as published in timestamps and kept in the state file.
inline double UnixSeconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

}  // namespace gpuattr
