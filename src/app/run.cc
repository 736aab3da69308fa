#include "gpuattr/app/run.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <ostream>
#include <thread>

#include "gpuattr/app/shutdown.h"
#include "gpuattr/metrics/families.h"
#include "gpuattr/report/namespace_filter.h"
#include "gpuattr/report/outputs.h"
#include "gpuattr/util/log.h"
#include "gpuattr/util/platform.h"
#include "gpuattr/util/strings.h"

namespace gpuattr::app {
namespace {

double Seconds(std::chrono::milliseconds d) { return std::chrono::duration<double>(d).count(); }

int ExitCodeFor(const Error& e) {
  return e.code == ErrorCode::kInvalidArgument || e.code == ErrorCode::kNotFound ? kExitUsage
                                                                                 : kExitFailure;
}

// The terminal behind `out`, for --output table: COLUMNS wins (as for ls), then the width of
// stdout when `out` is it and it is a terminal; no limit otherwise. Colour only on a terminal,
// never with NO_COLOR set (no-color.org) or TERM=dumb.
report::TableOptions TerminalFor(const std::ostream& out) {
  report::TableOptions o;
  const bool tty = &out == &std::cout && isatty(STDOUT_FILENO) == 1;
  if (const char* cols = std::getenv("COLUMNS"); cols && *cols) {
    char* end = nullptr;
    long n = std::strtol(cols, &end, 10);
    if (end && *end == '\0' && n > 0 && n < 10000) o.width = static_cast<size_t>(n);
  }
  if (o.width == 0 && tty) {
    winsize ws{};
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) o.width = ws.ws_col;
  }
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  o.color = tty && !(no_color && *no_color) && !(term && std::string_view(term) == "dumb");
  return o;
}

// What --once prints.
std::string RenderOnce(const Config& config, const model::Snapshot& snap, std::ostream& out) {
  if (config.output == OutputFormat::kPrometheus) return metrics::RenderText(snap);
  report::StatusView view = report::BuildStatusView(snap, snap.generated_unix_seconds, {});
  if (!config.once_namespace.empty()) report::KeepNamespace(view, config.once_namespace);
  switch (config.output) {
    case OutputFormat::kTable:
      return report::RenderTable(view, TerminalFor(out));
    case OutputFormat::kJson:
      return report::RenderSnapshotJson(view);
    case OutputFormat::kMarkdown:
      return report::RenderMarkdown(view);
    case OutputFormat::kPrometheus:
      break;
  }
  return metrics::RenderText(snap);
}

}  // namespace

void RecordCycle(model::ClusterSnapshot& c, model::CycleResult r, double seconds, double now_unix) {
  c.cycles++;
  c.cycle_duration_seconds = seconds;
  c.last_attempt_unix_seconds = now_unix;
  if (r.up) c.last_success_unix_seconds = now_unix;
  // A failed cycle keeps the last good output published (until DropStale), and the last
  // discovery report unless it made a fresh one (whose exporters then say why they failed). A
  // kept report's exporters were not read this cycle: they are published down
  // (docs/design.md#honest-status: stale data is marked by gpuattr_exporter_up 0), the probes as
  // they were.
  if (!r.up) r.output = nullptr;
  if (!r.discovery && !r.up && c.latest.discovery)
    r.discovery = std::make_shared<const discovery::DiscoveryReport>(discovery::MarkNotScraped(
        *c.latest.discovery, "not scraped: the cluster's cycle failed (see its errors)"));
  if (!r.discovery) r.discovery = std::move(c.latest.discovery);
  if (!r.output) r.output = std::move(c.latest.output);
  c.latest = std::move(r);
}

bool DropStale(model::ClusterSnapshot& c, double now_unix, double stale_after_seconds) {
  if (!c.latest.output || !c.last_success_unix_seconds) return false;
  if (now_unix - *c.last_success_unix_seconds <= stale_after_seconds) return false;
  c.latest.output = nullptr;
  c.latest.up = false;
  return true;
}

CycleLoop::CycleLoop(SessionList sessions, std::shared_ptr<metrics::SnapshotStore> store,
                     Clock& clock, LoopOptions options)
    : sessions_(std::move(sessions)),
      store_(std::move(store)),
      clock_(clock),
      options_(options),
      config_reload_(options.config_reload) {
  for (const auto& s : sessions_) {
    model::ClusterSnapshot c;
    c.cluster = s->Cluster();
    c.interval_seconds = Seconds(options_.interval);
    state_.push_back(std::move(c));
  }
  // Before the first cycle: the clusters are known, nothing else (/readyz answers 503). After a
  // reload the store still holds the previous loop's snapshot, served until a cycle replaces it.
  std::lock_guard<std::mutex> lock(mu_);
  if (options_.publish_at_start) PublishLocked(UnixSeconds(clock_.WallNow()));
}

CycleLoop::~CycleLoop() = default;

// Under mu_: one complete Snapshot of every cluster's latest state.
std::shared_ptr<const model::Snapshot> CycleLoop::PublishLocked(double now) {
  auto snap = std::make_shared<model::Snapshot>();
  snap->complete = !state_.empty();
  for (const auto& c : state_) snap->complete = snap->complete && c.cycles > 0;
  snap->generated_unix_seconds = now;
  snap->clusters = state_;
  snap->config_reload = config_reload_;
  if (options_.refusals)
    for (const auto& [reason, count] : options_.refusals->Counts())
      snap->http_refusals.emplace_back(reason, count);
  store_->Publish(snap);
  return snap;
}

void CycleLoop::LogCycle(const model::ClusterSnapshot& c) const {
  log::Info("cycle finished", {{"cluster", c.cluster},
                               {"up", c.latest.up ? "true" : "false"},
                               {"duration_seconds", c.cycle_duration_seconds},
                               {"errors", c.latest.errors.size()}});
  for (const auto& e : c.latest.errors)
    log::Warn("cycle error", {{"cluster", c.cluster}, {"err", e}});
}

namespace {

void LogDropped(const model::ClusterSnapshot& c, std::chrono::milliseconds stale_after) {
  log::Warn(
      "no successful cycle for longer than stale_after: the cluster's last good series are "
      "no longer served",
      {{"cluster", c.cluster}, {"stale_after", FormatDuration(stale_after)}});
}

}  // namespace

std::shared_ptr<const model::Snapshot> CycleLoop::RunOnce() {
  const size_t n = sessions_.size();
  std::vector<model::CycleResult> results(n);
  std::vector<double> seconds(n, 0);
  std::atomic<size_t> done{0};
  std::vector<std::thread> workers;
  workers.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    workers.emplace_back([&, i] {
      auto start = clock_.Now();
      results[i] = sessions_[i]->RunCycle();
      seconds[i] = std::chrono::duration<double>(clock_.Now() - start).count();
      done.fetch_add(1);
    });
  }
  // Watch for Ctrl-C while the cycle runs: cancelled sessions return promptly.
  bool cancelled = false;
  while (done.load() < n) {
    if (!cancelled && Shutdown::Instance().WaitFor(std::chrono::milliseconds(10))) {
      for (auto& s : sessions_) s->Cancel();
      cancelled = true;
    } else if (cancelled) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  for (auto& w : workers) w.join();
  // What the cycles freed (bodies, readings, the stages' work) goes back before the rendering:
  // the peak RSS is reached while rendering, next to the previous exposition.
  platform::ReleaseFreeMemory();

  const double now = UnixSeconds(clock_.WallNow());
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < n; ++i) {
    model::ClusterSnapshot& c = state_[i];
    RecordCycle(c, std::move(results[i]), seconds[i], now);
    LogCycle(c);
    if (DropStale(c, now, Seconds(options_.stale_after))) LogDropped(c, options_.stale_after);
  }
  auto snap = PublishLocked(now);
  results.clear();
  platform::ReleaseFreeMemory();  // the previous output and exposition
  return snap;
}

void CycleLoop::ClusterLoop(size_t i, std::chrono::milliseconds interval) {
  Shutdown& shutdown = Shutdown::Instance();
  while (!shutdown.Requested() && !stop_.load()) {
    const auto start = clock_.Now();
    model::CycleResult r = sessions_[i]->RunCycle();
    const double seconds = std::chrono::duration<double>(clock_.Now() - start).count();
    // A cycle cut short by the shutdown, or by a reload's cancel, is not published.
    if (shutdown.Requested() || stop_.load()) break;
    // A cycle that finished while a reload waits is published: its sessions were not cancelled.
    // What the cycle freed (bodies, readings, the stages' work) goes back before the rendering:
    // the peak RSS is reached while rendering, next to the previous exposition.
    platform::ReleaseFreeMemory();
    {
      std::lock_guard<std::mutex> lock(mu_);
      const double now = UnixSeconds(clock_.WallNow());
      model::ClusterSnapshot& c = state_[i];
      RecordCycle(c, std::move(r), seconds, now);
      LogCycle(c);
      if (DropStale(c, now, Seconds(options_.stale_after))) LogDropped(c, options_.stale_after);
      PublishLocked(now);
    }
    platform::ReleaseFreeMemory();  // the previous output and exposition
    const auto next = start + interval;
    const auto now = clock_.Now();
    if (now >= next) {
      log::Warn("cycle took longer than the interval; starting the next one now",
                {{"cluster", sessions_[i]->Cluster()}, {"interval", FormatDuration(interval)}});
      continue;
    }
    WaitUntil(next);
  }
}

// Sleeps until `next`, a shutdown or a reload that ends the loop (stop_), in slices of at most a
// second so that stop_ is seen even when it is set between a check and a wait. A reload request
// wakes every waiter: this one waits for the decision, then sleeps on if the loop goes on.
void CycleLoop::WaitUntil(std::chrono::steady_clock::time_point next) {
  Shutdown& shutdown = Shutdown::Instance();
  for (;;) {
    if (shutdown.Requested() || stop_.load()) return;
    const auto now = clock_.Now();
    if (now >= next) return;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next - now);
    if (shutdown.WaitFor(std::min<std::chrono::milliseconds>(left, std::chrono::seconds(1))))
      return;
    while (shutdown.ReloadRequested() && !shutdown.Requested() && !stop_.load())
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

LoopEnd CycleLoop::RunUntilShutdown(std::chrono::milliseconds interval,
                                    const std::function<bool()>& on_reload) {
  Shutdown& shutdown = Shutdown::Instance();
  std::vector<std::thread> clusters;
  clusters.reserve(sessions_.size());
  for (size_t i = 0; i < sessions_.size(); ++i)
    clusters.emplace_back([this, i, interval] { ClusterLoop(i, interval); });
  // Meanwhile: drop stale output on time, even while a cluster's cycle hangs.
  stop_.store(false);
  while (!shutdown.WaitFor(std::chrono::seconds(1))) {
    if (shutdown.ReloadRequested()) {
      const bool stop = on_reload && on_reload();
      if (stop) stop_.store(true);  // before the request clears: the waiters must see it
      shutdown.TakeReload();
      if (stop) break;
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    const double now = UnixSeconds(clock_.WallNow());
    bool dropped = false;
    for (model::ClusterSnapshot& c : state_) {
      if (!DropStale(c, now, Seconds(options_.stale_after))) continue;
      LogDropped(c, options_.stale_after);
      dropped = true;
    }
    if (dropped) PublishLocked(now);
  }
  // Cancel every session (aborting requests and watch streams), then wait for their threads.
  std::vector<std::thread> cancels;
  for (auto& s : sessions_) cancels.emplace_back([&s] { s->Cancel(); });
  for (auto& t : cancels) t.join();
  for (auto& t : clusters) t.join();
  return shutdown.Requested() ? LoopEnd::kShutdown : LoopEnd::kReload;
}

SessionList CycleLoop::TakeSessions() { return std::move(sessions_); }

void CycleLoop::SetConfigReload(model::ConfigReload reload) {
  std::lock_guard<std::mutex> lock(mu_);
  config_reload_ = reload;
  // Not before this loop's first cycle: that would replace the previous loop's snapshot, still
  // served after a reload, with one that knows nothing yet. The first cycle publishes it.
  const bool cycled = std::any_of(state_.begin(), state_.end(),
                                  [](const model::ClusterSnapshot& c) { return c.cycles > 0; });
  if (cycled || options_.publish_at_start) PublishLocked(UnixSeconds(clock_.WallNow()));
}

int Run(const Config& config, const SessionFactory& factory, std::ostream& out, std::ostream& err,
        const ConfigLoader& reload) {
  log::SetLevel(config.log_level);
  log::SetLineFormat(config.log_format);
  platform::TuneAllocator();
  Shutdown& shutdown = Shutdown::Instance();
  if (Status s = shutdown.Install(); !s) {
    err << "gpuattr: " << s.message() << "\n";
    return kExitFailure;
  }
  struct Uninstall {
    ~Uninstall() { Shutdown::Instance().Uninstall(); }
  } uninstall;

  auto sessions = factory(config);
  if (!sessions.ok()) {
    err << "gpuattr: " << sessions.error().message << "\n";
    return ExitCodeFor(sessions.error());
  }
  if (!config.once) return Serve(config, std::move(*sessions), factory, reload, err);

  auto store = std::make_shared<metrics::SnapshotStore>();
  auto filter = metrics::FamilyFilter::Make(config.metric_allowlist, config.metric_denylist);
  if (!filter.ok()) {  // LoadConfig checked both lists: not expected
    err << "gpuattr: " << filter.error().message << "\n";
    return kExitUsage;
  }
  store->SetFamilyFilter(std::move(*filter));
  LoopOptions loop_options;
  loop_options.stale_after = config.stale_after;
  loop_options.interval = config.interval;
  CycleLoop loop(std::move(*sessions), store, SystemClock(), loop_options);
  auto snap = loop.RunOnce();
  if (config.output == OutputFormat::kPrometheus) {
    // The bytes /metrics serves: the exposition rendered when the snapshot was published.
    auto exposition = store->GetExposition();
    metrics::TextReader text(*exposition);
    for (std::string_view piece = text.Next(); !piece.empty(); piece = text.Next()) out << piece;
  } else {
    out << RenderOnce(config, *snap, out);
  }
  out.flush();
  bool any_up = false;
  for (const auto& c : snap->clusters) any_up |= c.latest.up;
  if (any_up) return kExitOk;
  err << "gpuattr: no cluster answered";
  for (const auto& c : snap->clusters)
    for (const auto& e : c.latest.errors) err << "\n  " << c.cluster << ": " << e;
  err << "\n";
  return kExitFailure;
}

}  // namespace gpuattr::app
