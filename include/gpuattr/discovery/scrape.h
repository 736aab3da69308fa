// Scraping the accepted targets (DESIGN section 8): one pod-proxy GET per target per interval,
// at most `concurrency` at once, each bounded by its own timeout and body cap, so a slow or broken
// target never delays the others beyond its own timeout. Reading a body is pure.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "gpuattr/discovery/probe.h"
#include "gpuattr/sources/classify.h"
#include "gpuattr/sources/readings.h"
#include "gpuattr/util/clock.h"

namespace gpuattr::discovery {

struct ScrapeOptions {
  size_t concurrency = 8;
  std::chrono::milliseconds timeout{15000};
  size_t max_body_bytes = 64u << 20;
};

struct ScrapeTarget {
  std::string namespace_;
  std::string pod;
  std::string node;  // the exporter pod's spec.nodeName
  int32_t port = 0;
  sources::BodyKind kind = sources::BodyKind::kUnrecognised;  // as classified by the probe
};

using Readings = std::variant<std::monostate, sources::DcgmReadings, sources::ProcessReadings,
                              sources::InferenceReadings>;

struct ScrapeResult {
  ScrapeTarget target;
  bool ok = false;
  int http_status = 0;
  std::string reason;  // why not ok; for an ok body with malformed lines, the first parse error
  double duration_seconds = 0;
  uint64_t bytes = 0;
  uint64_t parse_errors = 0;
  sources::BodyKind kind = sources::BodyKind::kUnrecognised;
  Readings readings;
};

// Pure: parses a fetched body and reads it as the target's kind. A body with some malformed lines
// is a success (the good lines count, the bad ones in parse_errors); a body with no sample at all
// but malformed lines, or no body, is a failure with a reason.
ScrapeResult ReadScrape(const ScrapeTarget& target, const Fetch& fetch);

// Runs work(0..n-1) on at most `concurrency` threads (the calling thread waits). Items not yet
// started when `stop` fires are skipped. Returns when every started item finished.
void RunBounded(size_t n, size_t concurrency, const std::function<void(size_t)>& work,
                const StopSignal* stop = nullptr);

// Scrapes every target (results in target order).
std::vector<ScrapeResult> ScrapeAll(kube::ApiClient& client,
                                    const std::vector<ScrapeTarget>& targets,
                                    const ScrapeOptions& options, const StopSignal* stop = nullptr);

}  // namespace gpuattr::discovery
