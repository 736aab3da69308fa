// The daemon's life: the HTTP server and the cycle loop until SIGINT/SIGTERM, and a configuration
// reload on SIGHUP (docs/app.md#reloading-the-configuration).
#include <chrono>
#include <optional>
#include <ostream>

#include "gpuattr/app/run.h"
#include "gpuattr/app/shutdown.h"
#include "gpuattr/metrics/family_filter.h"
#include "gpuattr/metrics/store.h"
#include "gpuattr/util/log.h"
#include "gpuattr/util/strings.h"

namespace gpuattr::app {
namespace {

double NowUnix() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The server's options from a configuration: its address and web config file are read and
// checked here, so that a reload learns of a bad one before anything stops.
Result<http::ServerOptions> ServerOptionsFor(const Config& config) {
  auto addr = ParseListenAddress(config.web.listen_address);
  if (!addr.ok())
    return MakeError(ErrorCode::kInvalidArgument, "web.listen_address: " + addr.error().message);
  auto security = LoadWebSecurity(config.web);
  if (!security.ok()) return security.error();
  http::ServerOptions so;
  so.host = addr->host;
  so.port = addr->port;
  so.tls = std::move(security->tls);
  so.users = std::move(security->users);
  so.page_refresh_seconds = std::chrono::duration<double>(config.interval).count();
  so.metrics_path = config.web.telemetry_path;
  return so;
}

LoopOptions LoopOptionsFor(const Config& config, model::ConfigReload reload, bool first,
                           std::shared_ptr<const http::RefusalCounters> refusals) {
  LoopOptions o;
  o.refusals = std::move(refusals);
  o.stale_after = config.stale_after;
  o.interval = config.interval;
  o.config_reload = reload;
  o.publish_at_start = first;
  return o;
}

void WarnDeprecated(const Config& config) {
  if (UsesDeprecatedWebKeys(config.web))
    log::Warn(
        "web.tls and web.basic_auth (plain password files) are deprecated and will be removed in "
        "the next release: move them to a web config file (--web.config.file, docs/app.md)");
}

// A configuration the daemon can switch to, read and checked while the old one still runs.
struct NextConfig {
  Config config;
  http::ServerOptions server;
  metrics::FamilyFilter filter;
};

Result<NextConfig> LoadNext(const ConfigLoader& load) {
  if (!load) return MakeError(ErrorCode::kInvalidArgument, "this process cannot reload");
  auto config = load();
  if (!config.ok()) return config.error();
  if (config->once) return MakeError(ErrorCode::kInvalidArgument, "--once cannot be reloaded");
  auto server = ServerOptionsFor(*config);
  if (!server.ok()) return server.error();
  auto filter = metrics::FamilyFilter::Make(config->metric_allowlist, config->metric_denylist);
  if (!filter.ok()) return filter.error();
  return NextConfig{std::move(*config), std::move(*server), std::move(*filter)};
}

}  // namespace

int Serve(Config config, SessionList sessions, const SessionFactory& factory,
          const ConfigLoader& reload, std::ostream& err) {
  auto server_options = ServerOptionsFor(config);
  if (!server_options.ok()) {
    err << "gpuattr: " << server_options.error().message << "\n";
    return kExitUsage;
  }
  WarnDeprecated(config);
  if (Status s = Shutdown::Instance().InstallReload(); !s)
    log::Warn("configuration reloads are off", {{"err", s.message()}});
  auto filter = metrics::FamilyFilter::Make(config.metric_allowlist, config.metric_denylist);
  if (!filter.ok()) {  // LoadConfig checked both lists: not expected
    err << "gpuattr: " << filter.error().message << "\n";
    return kExitUsage;
  }
  auto store = std::make_shared<metrics::SnapshotStore>();
  store->SetFamilyFilter(std::move(*filter));
  // One set of refusal counters for the process: a reload's new listener keeps counting in it.
  auto refusals = std::make_shared<http::RefusalCounters>();
  server_options->refusals = refusals;
  auto server = http::MetricsServer::Start(*server_options, store);
  if (!server.ok()) {
    err << "gpuattr: " << server.error().message << "\n";
    return kExitCannotServe;
  }
  log::Info("started", {{"clusters", EffectiveClusters(config).size()},
                        {"interval", FormatDuration(config.interval)}});
  model::ConfigReload reloads{true, NowUnix()};
  for (bool first = true;; first = false) {
    std::optional<NextConfig> next;
    {
      CycleLoop loop(std::move(sessions), store, SystemClock(),
                     LoopOptionsFor(config, reloads, first, refusals));
      const LoopEnd end = loop.RunUntilShutdown(config.interval, [&] {
        log::Info("reloading the configuration (SIGHUP)");
        auto loaded = LoadNext(reload);
        if (loaded.ok()) {
          next = std::move(*loaded);
          return true;
        }
        log::Error("configuration reload failed; the running configuration stays",
                   {{"err", loaded.error().message}});
        reloads.last_successful = false;
        loop.SetConfigReload(reloads);
        return false;
      });
      if (end == LoopEnd::kShutdown) break;
      loop.TakeSessions();  // destroyed here: they hold the state file's lock
    }
    // The new configuration's sessions, or (when its clusters cannot be reached) the old one's.
    auto fresh = factory(next->config);
    if (!fresh.ok()) {
      log::Error("configuration reload failed; the running configuration stays",
                 {{"err", fresh.error().message}});
      reloads.last_successful = false;
      fresh = factory(config);
      if (!fresh.ok()) {
        err << "gpuattr: after a failed reload: " << fresh.error().message << "\n";
        return kExitFailure;
      }
      sessions = std::move(*fresh);
      continue;
    }
    sessions = std::move(*fresh);
    (*server)->Stop();  // the listener and its security may have changed
    next->server.refusals = refusals;
    auto restarted = http::MetricsServer::Start(next->server, store);
    if (!restarted.ok()) {
      err << "gpuattr: after a reload: " << restarted.error().message << "\n";
      return kExitCannotServe;
    }
    server = std::move(restarted);
    store->SetFamilyFilter(std::move(next->filter));  // from the next publication on
    config = std::move(next->config);
    log::SetLevel(config.log_level);
    log::SetLineFormat(config.log_format);
    WarnDeprecated(config);
    reloads = {true, NowUnix()};
    log::Info("configuration reloaded", {{"clusters", EffectiveClusters(config).size()},
                                         {"interval", FormatDuration(config.interval)}});
  }
  log::Info("shutting down");
  (*server)->Stop();
  return kExitOk;
}

}  // namespace gpuattr::app
