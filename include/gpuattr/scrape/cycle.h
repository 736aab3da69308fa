// One cycle of discovery and scraping: discovery decides what to read, this reads it, step by
// step (discovery::Discovery: the preferred query API, the pod reads, the fallback query API),
// then vets what the exporters said (trust/vet.h) before anything else sees it.
#pragma once

#include <string>
#include <vector>

#include "gpuattr/discovery/discovery.h"
#include "gpuattr/discovery/report.h"
#include "gpuattr/kube/objects.h"
#include "gpuattr/scrape/fetch.h"
#include "gpuattr/sources/readings.h"
#include "gpuattr/util/clock.h"

namespace gpuattr::scrape {

// What one cycle found.
struct ScrapeResult {
  discovery::DiscoveryReport report;
  // Every exporter that answered with a usable body, by namespace/pod, then the query API's;
  // vetted (trust/vet.h): lines an exporter may not say are dropped and counted.
  std::vector<sources::ExporterReadings> readings;
  std::vector<std::string> errors;  // e.g. a 403 on pods/proxy, naming the missing permission
};

// Runs one cycle of `discovery` on `objects` (a snapshot, or one shard's share of it;
// `whole` is then the whole snapshot: the read-path choice counts the cluster's GPU nodes, and
// the readings are vetted against every node and pod). Never throws.
ScrapeResult ReadCycle(discovery::Discovery& discovery, Fetcher& fetcher,
                       const kube::ClusterObjects& objects, const StopSignal* stop = nullptr,
                       const kube::ClusterObjects* whole = nullptr);

// Pure: the vetting's counts onto the exporters' rows: every reason (0 included) for an exporter
// that was read, summed over a query API's per-node readings; a summary in the reason when any.
void AttachRejections(const std::vector<sources::ExporterReadings>& readings,
                      std::vector<discovery::ExporterStatus>& exporters);

}  // namespace gpuattr::scrape
