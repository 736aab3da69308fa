#include "gpuattr/util/clock.h"

#include <thread>

namespace gpuattr {

void StopSignal::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
  }
  cv_.notify_all();
}

bool StopSignal::stopped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopped_;
}

bool StopSignal::WaitFor(std::chrono::milliseconds d) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, d, [this] { return stopped_; });
}

std::chrono::steady_clock::time_point RealClock::Now() const {
  return std::chrono::steady_clock::now();
}

std::chrono::system_clock::time_point RealClock::WallNow() const {
  return std::chrono::system_clock::now();
}

bool RealClock::SleepFor(std::chrono::milliseconds d, const StopSignal* stop) {
  if (stop != nullptr) return !stop->WaitFor(d);
  std::this_thread::sleep_for(d);
  return true;
}

Clock& SystemClock() {
  static RealClock clock;
  return clock;
}

}  // namespace gpuattr
