#include "gpuattr/app/shutdown.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <utility>

#include "gpuattr/util/platform.h"

namespace gpuattr::app {
namespace {

std::atomic<bool> g_requested{false};
std::atomic<bool> g_reload{false};
std::atomic<int> g_signals{0};
platform::Waker g_waker;  // eventfd or self-pipe: Wake() is async-signal-safe
struct sigaction g_old_int, g_old_term, g_old_hup;
bool g_hup_installed = false;

void WakeUp() {
  if (g_waker.fd() >= 0) g_waker.Wake();
}

extern "C" void OnSignal(int sig) {
  int saved = errno;
  if (g_signals.fetch_add(1) >= 1) _exit(128 + sig);  // second Ctrl-C: stop waiting for cleanup
  g_requested.store(true);
  WakeUp();
  errno = saved;
}

extern "C" void OnHangup(int) {
  int saved = errno;
  g_reload.store(true);
  WakeUp();
  errno = saved;
}

// Empties the waker (a reload's wake-up), unless a shutdown's must stay in it.
void DrainPipe() {
  if (g_waker.fd() < 0 || g_requested.load()) return;
  g_waker.Drain();
}

Status EnsurePipe() {
  if (g_waker.fd() >= 0) return Status::Ok();
  auto waker = platform::Waker::Open();
  if (!waker.ok())
    return MakeError(ErrorCode::kInternal,
                     "cannot create the shutdown pipe: " + waker.error().message);
  g_waker = std::move(*waker);
  return Status::Ok();
}

}  // namespace

Shutdown& Shutdown::Instance() {
  static Shutdown s;
  return s;
}

Status Shutdown::Install() {
  GPUATTR_RETURN_IF_ERROR(EnsurePipe());
  std::signal(SIGPIPE, SIG_IGN);  // a client hanging up mid-write must not kill the daemon
  if (installed_) return Status::Ok();
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  if (sigaction(SIGINT, &sa, &g_old_int) != 0 || sigaction(SIGTERM, &sa, &g_old_term) != 0)
    return MakeError(ErrorCode::kInternal,
                     std::string("cannot install signal handlers: ") + std::strerror(errno));
  installed_ = true;
  return Status::Ok();
}

Status Shutdown::InstallReload() {
  GPUATTR_RETURN_IF_ERROR(EnsurePipe());
  if (g_hup_installed) return Status::Ok();
  struct sigaction sa {};
  sa.sa_handler = OnHangup;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  if (sigaction(SIGHUP, &sa, &g_old_hup) != 0)
    return MakeError(ErrorCode::kInternal,
                     std::string("cannot install the SIGHUP handler: ") + std::strerror(errno));
  g_hup_installed = true;
  return Status::Ok();
}

void Shutdown::Uninstall() {
  if (g_hup_installed) sigaction(SIGHUP, &g_old_hup, nullptr);
  g_hup_installed = false;
  if (!installed_) return;
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  installed_ = false;
}

bool Shutdown::ReloadRequested() const { return g_reload.load(); }

void Shutdown::RequestReload() {
  g_reload.store(true);
  WakeUp();
}

bool Shutdown::TakeReload() {
  if (!g_reload.exchange(false)) return false;
  DrainPipe();
  return true;
}

bool Shutdown::Requested() const { return g_requested.load(); }

void Shutdown::Request() {
  g_requested.store(true);
  WakeUp();
}

bool Shutdown::WaitFor(std::chrono::milliseconds timeout) const {
  if (Requested()) return true;
  if (g_waker.fd() < 0) {  // not installed: plain sleep in short slices
    auto end = std::chrono::steady_clock::now() + timeout;
    while (!Requested() && !ReloadRequested() && std::chrono::steady_clock::now() < end)
      usleep(10'000);
    return Requested();
  }
  // The wake-up stays until drained, so every later wait also returns at once. Loop over EINTR from
  // unrelated signals so that a wait is never cut short without a request.
  auto end = std::chrono::steady_clock::now() + timeout;
  while (!Requested() && !ReloadRequested()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    end - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) break;
    struct pollfd p {
      g_waker.fd(), POLLIN, 0
    };
    poll(&p, 1, static_cast<int>(std::min<long long>(left, 1'000'000)));
  }
  return Requested();
}

void Shutdown::Reset() {
  g_requested.store(false);
  g_reload.store(false);
  g_signals.store(0);
  if (g_waker.fd() >= 0) g_waker.Drain();
}

}  // namespace gpuattr::app
