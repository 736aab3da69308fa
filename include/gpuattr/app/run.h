// The gpuattr application: the cycle loop that runs every cluster's session each interval and
// publishes a fresh Snapshot, the HTTP server, --once, and clean shutdown.
#pragma once

#include <iosfwd>
#include <memory>
#include <vector>

#include "gpuattr/app/config.h"
#include "gpuattr/app/session.h"
#include "gpuattr/publish/server.h"
#include "gpuattr/util/clock.h"

namespace gpuattr::app {

class CycleLoop {
 public:
  // `clock` times the cycles and stamps the snapshots.
  CycleLoop(SessionList sessions, std::shared_ptr<publish::SnapshotStore> store,
            Clock& clock = SystemClock());

  // Runs every session's cycle in parallel, then builds and publishes one complete Snapshot.
  // On a shutdown request mid-cycle it cancels the sessions and still returns their results.
  std::shared_ptr<const publish::Snapshot> RunOnce();
  // RunOnce every `interval` until Shutdown::Instance() is requested.
  void RunUntilShutdown(std::chrono::milliseconds interval);

 private:
  SessionList sessions_;
  std::shared_ptr<publish::SnapshotStore> store_;
  Clock& clock_;
  std::vector<publish::ClusterSnapshot> state_;  // one per session, carried across cycles
};

// Reads every basic-auth password file (a trailing newline is dropped). Errors name the file.
Result<std::vector<publish::Credential>> ReadCredentials(const std::vector<BasicAuthUser>& users);

// Runs gpuattr with a validated Config: --once prints the exposition on `out`; otherwise serves
// until SIGINT/SIGTERM. Returns the process exit code (see options.h); messages go to `err`.
int Run(const Config& config, const SessionFactory& factory, std::ostream& out, std::ostream& err);

}  // namespace gpuattr::app
