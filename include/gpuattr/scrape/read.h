// Reading what discovery decided to read (discovery/discovery.h, discovery/query_api.h): the GETs
// through the apiserver (fetch.h), each body read as its exporter's kind (sources/), and what
// discovery needs back to decide further (verdicts, who answered). A body is dropped once read:
// only its readings are kept.
#pragma once

#include <cstddef>
#include <vector>

#include "gpuattr/discovery/discovery.h"
#include "gpuattr/discovery/query_api.h"
#include "gpuattr/kube/objects.h"
#include "gpuattr/scrape/fetch.h"
#include "gpuattr/sources/limits.h"
#include "gpuattr/sources/readings.h"
#include "gpuattr/util/clock.h"

namespace gpuattr::scrape {

// What a cycle's pod reads found.
struct PodReadings {
  std::vector<discovery::PodReadOutcome> outcomes;  // outcomes[i]: what reads[i] found
  // Every target that answered with a usable body, in the order of the reads.
  std::vector<sources::ExporterReadings> readings;
};

// Makes `reads` on at most `concurrency` threads: pins and exporters first, then inference
// servers (each group in the reads' order), so that a cycle's exporters are never queued behind
// inference probes. A probe's body is judged first (discovery::JudgeProbe) and read only when
// accepted; a body over limits.body_bytes is an error naming the limit (docs/design.md#limits).
// Reads not started when `stop` fires stay undone.
PodReadings ReadPods(const std::vector<discovery::PodRead>& reads, Fetcher& fetcher,
                     size_t concurrency, const sources::BodyLimits& limits,
                     const StopSignal* stop = nullptr);

// What a query API's read found.
struct QueryApiReading {
  discovery::QueryApiReadOutcome outcome;
  std::vector<sources::ExporterReadings> readings;  // per node and kind, from the queried API
};

// One at a time: probes `read.probes` in order until one has the GPU series
// (discovery::JudgeQueryApiProbe), then makes the one query of that API (or of `read.chosen`)
// and reads the answer (sources/promapi.h), repairing its labels against `objects`. Stops
// before the next GET when `stop` fires.
QueryApiReading ReadQueryApi(const discovery::QueryApiRead& read, Fetcher& fetcher,
                             const kube::ClusterObjects& objects, const StopSignal* stop = nullptr);

}  // namespace gpuattr::scrape
