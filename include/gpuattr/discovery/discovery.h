// One cluster's discovery, cycle by cycle: it decides what to read and turns what was fetched
// into readings and a report.
//   candidates (keywords, GPU holders, pins) → due probes (the cache decides; inference probes
//   within the per-cycle budget, see PlanReads) and known targets
//   → one bounded pool of pod-proxy GETs (probes 5 s, scrapes 15 s; scrape/fetch.h) → verdicts
//   recorded → bodies read (sources/body.h) → the query-API fallback when no exporter pod
//   answered → readings for the stages, plus the report for the page and the diagnostics
//   families.
// A target probed in this cycle is not fetched twice: the probe's body is its scrape.
#pragma once

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gpuattr/discovery/cache.h"
#include "gpuattr/discovery/pins.h"
#include "gpuattr/discovery/query_api.h"
#include "gpuattr/discovery/report.h"
#include "gpuattr/kube/objects.h"
#include "gpuattr/scrape/fetch.h"
#include "gpuattr/sources/limits.h"
#include "gpuattr/sources/readings.h"
#include "gpuattr/trust/rules.h"
#include "gpuattr/util/clock.h"

namespace gpuattr::discovery {

struct ScrapeOptions {
  size_t concurrency = 16;
  std::chrono::milliseconds timeout{15000};
  // Per body (docs/design.md#limits): the fetch stops at limits.body_bytes, the readers at the
  // rest.
  sources::BodyLimits limits;
};

struct DiscoveryOptions {
  Pins pins;
  CacheTtls ttls;
  std::chrono::milliseconds probe_timeout{5000};
  // Probe budget: at most this many inference-candidate probes per cycle
  // (docs/design.md#caching-and-the-probe-budget). Exporter candidates and pins are always probed
  // when due; the inference probes that do not fit wait for a later cycle (counted as outcome
  // "waiting"), so that a large cluster's first cycle reads its exporters without waiting on
  // thousands of GPU pods. 0: no inference probes at all.
  size_t inference_probes_per_cycle = 50;
  ScrapeOptions scrape;  // concurrency, per-target timeout, body limits (probes use the same pool)
  // Pods trusted as exporters beyond DaemonSets and pins (discovery.trust.exporters).
  std::vector<trust::ExporterRule> trust_rules;
  QueryApiOptions query_api;  // the fallback when no exporter pod answers (docs/fallback.md)
};

// What one cycle found.
struct DiscoveryResult {
  DiscoveryReport report;
  // Every exporter that answered with a usable body, by namespace/pod, then the query API's;
  // vetted (trust/vet.h): lines an exporter may not say are dropped and counted.
  std::vector<sources::ExporterReadings> readings;
  std::vector<std::string> errors;  // e.g. a 403 on pods/proxy, naming the missing permission
};

// Pure: the status-page text for a cluster where no exporter was found.
std::string NothingFoundMessage(size_t pods_listed, size_t candidates_probed, bool gpu_present,
                                const std::string& gpu_presence);

class Discovery {
 public:
  Discovery(std::string cluster, DiscoveryOptions options, Clock& clock);

  // Runs one cycle against `objects` (a snapshot from the ObjectCache, or one shard's share of
  // it, kube/shard.h). `whole_cluster`, when `objects` is a shard's share, is the whole snapshot:
  // the read-path choice counts the cluster's GPU nodes, not the shard's. Never throws.
  DiscoveryResult RunCycle(scrape::Fetcher& fetcher, const kube::ClusterObjects& objects,
                           const StopSignal* stop = nullptr,
                           const kube::ClusterObjects* whole_cluster = nullptr);

  const DiscoveryCache& cache() const { return cache_; }

  struct Read;  // one GET of a cycle: a probe or a scrape (discovery.cc)

 private:
  std::vector<Read> PlanReads(const std::vector<Candidate>& current,
                              std::chrono::steady_clock::time_point now, DiscoveryReport& report);
  std::vector<const Candidate*> ProbeOrder(const std::vector<const Candidate*>& due) const;
  void RecordReads(std::vector<Read>& reads, std::chrono::steady_clock::time_point now,
                   double now_unix, DiscoveryResult& out);
  void BuildReport(const kube::ClusterObjects& objects, const GpuPresence& presence,
                   const PinnedCandidates& pinned, size_t candidates,
                   const QueryApiResult& fallback, DiscoveryResult& out);

  std::string cluster_;
  DiscoveryOptions options_;
  Clock& clock_;
  DiscoveryCache cache_;
  QueryApiFallback query_api_;
  std::set<std::string> due_keys_;  // candidates probed in the running cycle
  std::string last_nothing_found_;  // logged once per change
};

}  // namespace gpuattr::discovery
