#include "support/fake_clock.h"

#include <thread>

namespace gpuattr {

FakeClock::FakeClock()
    : now_(std::chrono::steady_clock::time_point{} + std::chrono::hours(24)),
      wall_(std::chrono::system_clock::time_point{} + std::chrono::seconds(1'750'000'000)) {}

std::chrono::steady_clock::time_point FakeClock::Now() const {
  std::lock_guard<std::mutex> lock(mu_);
  return now_;
}

std::chrono::system_clock::time_point FakeClock::WallNow() const {
  std::lock_guard<std::mutex> lock(mu_);
  return wall_;
}

bool FakeClock::SleepFor(std::chrono::milliseconds d, const StopSignal* stop) {
  std::unique_lock<std::mutex> lock(mu_);
  if (sleeps_.size() >= 10'000) sleeps_.erase(sleeps_.begin());
  sleeps_.push_back(d);
  if (!blocking_) {
    now_ += d;
    wall_ += d;
    lock.unlock();
    // Let other threads run: a retry loop on a fake clock must not starve the test thread.
    std::this_thread::yield();
    return stop == nullptr || !stop->stopped();
  }
  const auto deadline = now_ + d;
  ++blocked_;
  // Polls the stop signal (it has its own condition variable); bounded by one hour of polls.
  for (int i = 0; i < 3'600'000 && now_ < deadline; ++i) {
    if (stop != nullptr && stop->stopped()) break;
    advanced_.wait_for(lock, std::chrono::milliseconds(1));
  }
  --blocked_;
  return stop == nullptr || !stop->stopped();
}

void FakeClock::Advance(std::chrono::milliseconds d) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    now_ += d;
    wall_ += d;
  }
  advanced_.notify_all();
}

void FakeClock::SetBlockingSleeps(bool blocking) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    blocking_ = blocking;
  }
  advanced_.notify_all();
}

int FakeClock::BlockedSleepers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return blocked_;
}

std::vector<std::chrono::milliseconds> FakeClock::Sleeps() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sleeps_;
}

void FakeClock::ClearSleeps() {
  std::lock_guard<std::mutex> lock(mu_);
  sleeps_.clear();
}

}  // namespace gpuattr
