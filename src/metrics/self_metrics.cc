// Self-metrics: what gpuattr itself did per cluster (build, reachability, cycle timing, requests).
#include "gpuattr/build_info.h"
#include "gpuattr/metrics/families.h"

namespace gpuattr::metrics {
namespace {

constexpr FamilySpec kBuildInfo{"gpuattr_build_info", MetricType::kGauge,
                                "Always 1; labels carry the gpuattr version and git revision."};
constexpr FamilySpec kClusterUp{
    "gpuattr_cluster_up", MetricType::kGauge,
    "1 when, in the latest cycle, the object cache was in sync (every kind listed, its watch "
    "connected within the last 2 intervals) and the apiserver answered the cycle's requests; "
    "else 0."};
constexpr FamilySpec kLastCycle{
    "gpuattr_last_cycle_timestamp_seconds", MetricType::kGauge,
    "Unix time at which the latest successful cycle for the cluster ended; only successful cycles "
    "move it. The published data is as old as this (kept up to stale_after, then dropped)."};
constexpr FamilySpec kCycleDuration{"gpuattr_cycle_duration_seconds", MetricType::kGauge,
                                    "Wall-clock seconds the latest cycle for the cluster took."};
constexpr FamilySpec kCycleInterval{
    "gpuattr_cycle_interval_seconds", MetricType::kGauge,
    "The configured interval between the cluster's cycles (--interval); staleness alerts compare "
    "the age of the data with it."};
constexpr FamilySpec kApiRequests{
    "gpuattr_apiserver_requests_total", MetricType::kCounter,
    "Requests gpuattr sent to the cluster's kube-apiserver since it started, by verb, resource and "
    "HTTP status code (\"error\" when no response arrived)."};

constexpr FamilySpec kReloadSuccessful{
    "gpuattr_config_last_reload_successful", MetricType::kGauge,
    "1 when the latest configuration reload (SIGHUP) succeeded or none was asked for; 0 when it "
    "failed and the previous configuration is still running (the log says why)."};
constexpr FamilySpec kReloadTime{
    "gpuattr_config_last_reload_success_timestamp_seconds", MetricType::kGauge,
    "Unix time of the latest successful configuration reload, or of the start."};

constexpr FamilySpec kHttpRefused{
    "gpuattr_http_refused_total", MetricType::kCounter,
    "Connections and requests gpuattr's HTTP server turned away or cut off since it started, by "
    "reason (bad_request, head_timeout, tls_handshake, unauthorized, login_queue_full, "
    "health_slot_only, evicted, per_peer_limit, slow_reader); as of the latest publication."};

constexpr FamilySpec kFamilies[] = {kBuildInfo,        kClusterUp,     kLastCycle,
                                    kCycleDuration,    kCycleInterval, kApiRequests,
                                    kReloadSuccessful, kReloadTime,    kHttpRefused};

// In table order (kFamilies), as the exposition is: with one cluster every family is one run
// and the writer can hand it over as soon as the next begins (text_writer.h, StreamTo).
void Build(const model::Snapshot& s, FamilyWriter& w) {
  for (const model::ClusterSnapshot& c : s.clusters) {
    w.Add(kBuildInfo,
          {{"cluster", c.cluster}, {"version", build::kVersion}, {"revision", build::kRevision}},
          1);
    w.Add(kClusterUp, {{"cluster", c.cluster}}, c.latest.up ? 1 : 0);
    if (c.last_success_unix_seconds)
      w.Add(kLastCycle, {{"cluster", c.cluster}}, *c.last_success_unix_seconds);
    if (c.cycles > 0) w.Add(kCycleDuration, {{"cluster", c.cluster}}, c.cycle_duration_seconds);
    if (c.interval_seconds > 0) w.Add(kCycleInterval, {{"cluster", c.cluster}}, c.interval_seconds);
    for (const auto& [key, count] : c.latest.apiserver_requests)
      w.Add(kApiRequests,
            {{"cluster", c.cluster},
             {"verb", key.verb},
             {"resource", key.resource},
             {"code", key.code}},
            static_cast<double>(count));
  }
  if (s.config_reload) {
    w.Add(kReloadSuccessful, {}, s.config_reload->last_successful ? 1 : 0);
    w.Add(kReloadTime, {}, s.config_reload->last_success_unix_seconds);
  }
  for (const auto& [reason, count] : s.http_refusals)
    w.Add(kHttpRefused, {{"reason", reason}}, static_cast<double>(count));
}

}  // namespace

constinit const FamilyGroup kSelfMetricsGroup{"self", kFamilies, &Build};

}  // namespace gpuattr::metrics
