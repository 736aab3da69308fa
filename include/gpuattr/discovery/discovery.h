// One cluster's discovery and scraping, cycle by cycle:
//   candidates (keywords, GPU holders, pins) → due probes (the cache decides) → one bounded pool
//   of pod-proxy GETs (probes 5 s, scrapes 15 s) → verdicts recorded → accepted targets read →
//   one immutable CycleInput plus the report for the page and the diagnostics families.
// A target probed in this cycle is not fetched twice: the probe's body is its scrape.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "gpuattr/discovery/cache.h"
#include "gpuattr/discovery/pins.h"
#include "gpuattr/discovery/query_api.h"
#include "gpuattr/discovery/report.h"
#include "gpuattr/discovery/scrape.h"
#include "gpuattr/kube/api_client.h"
#include "gpuattr/util/clock.h"

namespace gpuattr::discovery {

struct DiscoveryOptions {
  Pins pins;
  CacheTtls ttls;
  std::chrono::milliseconds probe_timeout{5000};
  ScrapeOptions scrape;  // concurrency, per-target timeout, body cap (probes use the same pool)
  QueryApiOptions query_api;  // the fallback when no exporter pod answers (docs/fallback.md)
};

struct DiscoveryCycle {
  DiscoveryReport report;
  std::vector<ScrapeResult> scrapes;  // every target fetched for data this cycle, by key
  CycleInput input;
  std::vector<std::string> errors;  // e.g. a 403 on pods/proxy, naming the missing permission
};

// Pure: the status-page text for a cluster where no exporter was found.
std::string NothingFoundMessage(size_t pods_listed, size_t candidates_probed, bool gpu_present,
                                const std::string& gpu_presence);

class Discovery {
 public:
  Discovery(std::string cluster, DiscoveryOptions options, Clock& clock);

  // Runs one cycle against `objects` (a snapshot from the ObjectCache). Never throws.
  DiscoveryCycle RunCycle(kube::ApiClient& client,
                          std::shared_ptr<const kube::ClusterObjects> objects,
                          const StopSignal* stop = nullptr);

  const DiscoveryCache& cache() const { return cache_; }
  const QueryApiFallback& query_api() const { return query_api_; }
  const DiscoveryOptions& options() const { return options_; }

 private:
  std::string cluster_;
  DiscoveryOptions options_;
  Clock& clock_;
  DiscoveryCache cache_;
  QueryApiFallback query_api_;
  std::string last_nothing_found_;  // logged once per change
};

}  // namespace gpuattr::discovery
