// Fetching bodies through the apiserver (docs/design.md#kubernetes-access): one GET per target and
// interval, no retries, each bounded by its own timeout and body cap, at most `concurrency` at
// once, so one slow or broken target never delays the others beyond its own timeout. This is the
// only I/O of scraping (discovery makes none: it decides what read.h reads); Fetcher is its seam
// (kube::ApiClient behind it in the daemon, an in-memory fake in tests).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "gpuattr/util/clock.h"
#include "gpuattr/util/status.h"

namespace gpuattr::kube {
class ApiClient;
}  // namespace gpuattr::kube

namespace gpuattr::scrape {

// One GET's outcome: a body, or why not.
struct Fetch {
  bool ok = false;        // a 2xx with a body within the cap
  bool over_cap = false;  // no body: it was larger than FetchOptions::max_body_bytes
  int http_status = 0;    // 0 when no response arrived (timeout, connection, body over cap)
  std::string error;      // when !ok: the reason, naming the permission for a 403
  std::string body;       // when ok
  double duration_seconds = 0;
  uint64_t bytes = 0;  // body bytes received (0 when the transport gave up)
};

struct FetchOptions {
  std::chrono::milliseconds timeout{15000};
  size_t max_body_bytes = 16u << 20;
  std::string accept = "text/plain;version=0.0.4;q=1,*/*;q=0.1";  // query APIs: JSON
};

class Fetcher {
 public:
  virtual ~Fetcher() = default;
  // One GET of an apiserver path (a pod or service proxy path). Never throws.
  virtual Fetch Get(const std::string& path, const FetchOptions& options) = 0;
};

// GETs through `client`, one attempt each (a scrape is one GET per interval).
std::unique_ptr<Fetcher> MakeApiFetcher(std::shared_ptr<kube::ApiClient> client);

// "/api/v1/namespaces/NS/pods/NAME:PORT/proxy/metrics"
std::string ProxyMetricsPath(std::string_view ns, std::string_view pod, int32_t port);

// Pure: the HTTP status an ApiClient error stands for: Error::http_status, else 401/403 for a
// credential failure before any request (kUnauthenticated, kPermissionDenied), else 0.
int HttpStatusOfError(const Error& error);

// Runs work(0..n-1) on at most `concurrency` threads (the calling thread waits). Items not yet
// started when `stop` fires are skipped. Returns when every started item finished.
void RunBounded(size_t n, size_t concurrency, const std::function<void(size_t)>& work,
                const StopSignal* stop = nullptr);

}  // namespace gpuattr::scrape
