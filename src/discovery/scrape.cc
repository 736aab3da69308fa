#include "gpuattr/discovery/scrape.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "gpuattr/expo/parser.h"
#include "gpuattr/sources/dcgm.h"
#include "gpuattr/sources/inference.h"
#include "gpuattr/sources/process.h"

namespace gpuattr::discovery {

ScrapeResult ReadScrape(const ScrapeTarget& target, const Fetch& fetch) {
  ScrapeResult r;
  r.target = target;
  r.kind = target.kind;
  r.http_status = fetch.http_status;
  r.duration_seconds = fetch.duration_seconds;
  r.bytes = fetch.bytes;
  if (!fetch.ok) {
    r.reason = fetch.error.empty() ? "no response" : fetch.error;
    return r;
  }
  expo::Exposition ex;
  expo::Limits limits;
  limits.max_body_bytes = std::max(limits.max_body_bytes, fetch.body.size());
  expo::Parse(fetch.body, ex, limits);
  r.parse_errors = ex.error_count;
  const std::string first_error = ex.errors.empty() ? "" : ex.errors.front().Describe();
  if (ex.samples.empty()) {
    r.reason = fetch.body.empty()   ? "empty body"
               : ex.error_count > 0 ? "no valid sample: " + std::to_string(ex.error_count) +
                                          " malformed line(s), " + first_error
                                    : "no sample in the body";
    return r;
  }
  switch (target.kind) {
    case sources::BodyKind::kDcgm:
      r.readings = sources::ReadDcgm(ex);
      break;
    case sources::BodyKind::kProcess:
      r.readings = sources::ReadProcess(ex);
      break;
    case sources::BodyKind::kVllm:
    case sources::BodyKind::kSglang:
      r.readings = sources::ReadInference(ex);
      break;
    case sources::BodyKind::kUnrecognised:
      r.reason = "target has no known kind";
      return r;
  }
  r.ok = true;
  if (ex.error_count > 0)
    r.reason = std::to_string(ex.error_count) + " malformed line(s), " + first_error;
  return r;
}

void RunBounded(size_t n, size_t concurrency, const std::function<void(size_t)>& work,
                const StopSignal* stop) {
  if (n == 0) return;
  const size_t threads = std::min(n, std::max<size_t>(1, concurrency));
  std::atomic<size_t> next{0};
  auto loop = [&] {
    for (;;) {
      if (stop && stop->stopped()) return;
      size_t i = next.fetch_add(1);
      if (i >= n) return;
      work(i);
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(loop);
  loop();
  for (auto& t : pool) t.join();
}

std::vector<ScrapeResult> ScrapeAll(kube::ApiClient& client,
                                    const std::vector<ScrapeTarget>& targets,
                                    const ScrapeOptions& options, const StopSignal* stop) {
  std::vector<ScrapeResult> out(targets.size());
  FetchOptions fo{options.timeout, options.max_body_bytes};
  RunBounded(
      targets.size(), options.concurrency,
      [&](size_t i) {
        const ScrapeTarget& t = targets[i];
        Fetch f = FetchPath(client, ProxyMetricsPath(t.namespace_, t.pod, t.port), fo);
        out[i] = ReadScrape(t, f);
      },
      stop);
  for (size_t i = 0; i < targets.size(); ++i) {
    if (out[i].target.pod.empty()) {  // skipped by stop
      out[i].target = targets[i];
      out[i].kind = targets[i].kind;
      out[i].reason = "cancelled";
    }
  }
  return out;
}

}  // namespace gpuattr::discovery
