// SIGINT/SIGTERM → a flag and a wake-up descriptor (platform::Waker: an eventfd, or a self-pipe
// off Linux), so the cycle loop's waits end at once. The handler only stores a flag and makes one
// write (async-signal-safe); a second signal exits immediately.
// SIGHUP (the daemon only) → a reload flag and the same wake-up: the daemon reloads its
// configuration (docs/app.md#reloading-the-configuration).
#pragma once

#include <chrono>

#include "gpuattr/util/status.h"

namespace gpuattr::app {

class Shutdown {
 public:
  static Shutdown& Instance();

  // Installs the SIGINT/SIGTERM handlers (remembering the previous ones) and ignores SIGPIPE.
  Status Install();
  // Installs the SIGHUP handler (the daemon; --once keeps the default: a hangup ends it).
  Status InstallReload();
  // Restores the handlers that Install and InstallReload replaced.
  void Uninstall();

  bool Requested() const;
  void Request();  // what the handler does, callable from any thread
  // Waits up to `timeout`; returns true as soon as shutdown was requested, false at the timeout
  // or as soon as a reload is requested.
  bool WaitFor(std::chrono::milliseconds timeout) const;

  bool ReloadRequested() const;
  void RequestReload();  // what the SIGHUP handler does, callable from any thread
  // Clears a reload request; true when there was one.
  bool TakeReload();
  // Clears a previous request (tests run several loops in one process).
  void Reset();

 private:
  Shutdown() = default;
  bool installed_ = false;
};

}  // namespace gpuattr::app
