// The gpuattr application: the cycle loop that runs every cluster's session on its own schedule
// and publishes a fresh, complete Snapshot whenever a cluster finishes a cycle, the HTTP server,
// --once, and clean shutdown.
#pragma once

#include <atomic>
#include <functional>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <vector>

#include "gpuattr/app/config.h"
#include "gpuattr/app/session.h"
#include "gpuattr/app/web_config.h"
#include "gpuattr/http/server.h"
#include "gpuattr/util/clock.h"

namespace gpuattr::app {

struct LoopOptions {
  // A cluster whose cycles fail keeps its last good output published for this long after its
  // last successful cycle; then the output is dropped (docs/design.md#honest-status).
  std::chrono::milliseconds stale_after{std::chrono::minutes(5)};
  // The configured interval (--interval), published as gpuattr_cycle_interval_seconds; 0 leaves
  // it out.
  std::chrono::milliseconds interval{0};
  // The daemon publishes its reloads' outcome (--once has none).
  std::optional<model::ConfigReload> config_reload;
  // False after a reload: the previous loop's snapshot stays served until this loop's first
  // cycle, instead of one that knows only the clusters' names.
  bool publish_at_start = true;
  // The daemon's server refusals, published with every snapshot (null: none, as for --once).
  std::shared_ptr<const http::RefusalCounters> refusals;
};

// What the loop keeps per cluster and how a cycle's result lands in it (pure; exposed for tests):
// a failed cycle keeps the last good output and discovery report (unless it brought a fresh
// report), and the last success time only moves on a successful cycle.
void RecordCycle(model::ClusterSnapshot& c, model::CycleResult r, double seconds, double now_unix);
// Drops the output of a cluster whose last success is more than `stale_after` seconds before
// `now_unix` (and marks it down). True when it dropped something.
bool DropStale(model::ClusterSnapshot& c, double now_unix, double stale_after_seconds);

// Why RunUntilShutdown returned.
enum class LoopEnd { kShutdown, kReload };

class CycleLoop {
 public:
  // `clock` times the cycles and stamps the snapshots.
  CycleLoop(SessionList sessions, std::shared_ptr<metrics::SnapshotStore> store,
            Clock& clock = SystemClock(), LoopOptions options = {});
  ~CycleLoop();

  // --once (and tests): runs every session's cycle in parallel, then publishes one complete
  // Snapshot. On a shutdown request mid-cycle it cancels the sessions and still returns their
  // results.
  std::shared_ptr<const model::Snapshot> RunOnce();
  // The daemon: every cluster on its own thread, one cycle every `interval` (a cycle that took
  // longer is followed at once by the next), so that a slow or dead cluster never delays another
  // one's data. Each finished cycle publishes a complete Snapshot (every cluster's latest state).
  // Stale output is dropped on time even while a cluster's cycle hangs. Returns once
  // Shutdown::Instance() is requested and every session's cycle ended (they are cancelled).
  //
  // A reload request (SIGHUP) calls `on_reload` on this thread while the clusters keep their
  // schedule: false (the new configuration is unusable) goes on as before; true cancels the
  // sessions as a shutdown does and returns kReload.
  LoopEnd RunUntilShutdown(std::chrono::milliseconds interval,
                           const std::function<bool()>& on_reload = {});
  // The sessions, after RunUntilShutdown returned: the caller destroys them (releasing the state
  // file) before making new ones.
  SessionList TakeSessions();
  // Published with every snapshot from now on (and at once).
  void SetConfigReload(model::ConfigReload reload);

 private:
  std::shared_ptr<const model::Snapshot> PublishLocked(double now);
  void ClusterLoop(size_t i, std::chrono::milliseconds interval);
  void WaitUntil(std::chrono::steady_clock::time_point next);
  void LogCycle(const model::ClusterSnapshot& c) const;

  SessionList sessions_;
  std::shared_ptr<metrics::SnapshotStore> store_;
  Clock& clock_;
  LoopOptions options_;
  std::mutex mu_;                              // guards state_ and publishing
  std::vector<model::ClusterSnapshot> state_;  // one per session, carried across cycles
  std::optional<model::ConfigReload> config_reload_;
  std::atomic<bool> stop_{false};  // a reload ends the cluster threads
};

// Reads the configuration anew (flags and config file), for a reload.
using ConfigLoader = std::function<Result<Config>()>;

// Runs gpuattr with a validated Config: --once prints the exposition on `out`; otherwise serves
// until SIGINT/SIGTERM, reloading with `reload` on SIGHUP. Returns the process exit code (see
// options.h); messages go to `err`.
int Run(const Config& config, const SessionFactory& factory, std::ostream& out, std::ostream& err,
        const ConfigLoader& reload = {});

// The daemon (serve.cc): the HTTP server and the cycle loop over `sessions` until SIGINT/SIGTERM.
// On SIGHUP it reads the configuration with `reload` and checks it (flags, config file, listen
// address, web config file) while the old one runs; an unusable one is logged and counted
// (gpuattr_config_last_reload_successful 0). A usable one replaces the sessions (the old ones
// are destroyed first: they hold the state file's lock; if the new clusters cannot be reached
// the old configuration's sessions are made again) and restarts the server.
int Serve(Config config, SessionList sessions, const SessionFactory& factory,
          const ConfigLoader& reload, std::ostream& err);

}  // namespace gpuattr::app
