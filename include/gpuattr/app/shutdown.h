// SIGINT/SIGTERM → a flag and a self-pipe, so the cycle loop's waits end at once. The handler
// only stores a flag and writes one byte (async-signal-safe); a second signal exits immediately.
#pragma once

#include <chrono>

#include "gpuattr/util/status.h"

namespace gpuattr::app {

class Shutdown {
 public:
  static Shutdown& Instance();

  // Installs the SIGINT/SIGTERM handlers (remembering the previous ones) and ignores SIGPIPE.
  Status Install();
  // Restores the handlers that Install replaced.
  void Uninstall();

  bool Requested() const;
  void Request();  // what the handler does, callable from any thread
  // Waits up to `timeout`; returns true as soon as shutdown was requested.
  bool WaitFor(std::chrono::milliseconds timeout) const;
  // Clears a previous request (tests run several loops in one process).
  void Reset();

 private:
  Shutdown() = default;
  bool installed_ = false;
};

}  // namespace gpuattr::app
