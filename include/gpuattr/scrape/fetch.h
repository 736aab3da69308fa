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

// Where one GET goes. Through the apiserver: `proxy_path`, a pod or service proxy path. Directly
// (docs/deploy.md#direct-scraping): scheme://host:port and the part of proxy_path after "/proxy",
// the host being the pod's IP or the Service's ClusterIP from the watched object, never from a
// body.
struct FetchTarget {
  std::string proxy_path;  // "/api/v1/namespaces/NS/pods/NAME:PORT/proxy/metrics"
  std::string scheme = "http";
  std::string host;  // IPv4 or IPv6 (unbracketed); "" when the object has none
  int32_t port = 0;
  // Why there is no host ("pod ns/p has no IP yet"): a direct read is then skipped with it.
  std::string no_host_reason;
  std::string what;  // "pod ns/name", "service ns/name": who the messages name
};

// "http://10.0.0.7:9400", "https://[fd00::7]:9400" (IPv6 bracketed).
std::string DirectBaseUrl(std::string_view scheme, std::string_view host, int32_t port);
// The path the proxy forwards: "/metrics" of ".../pods/p:9400/proxy/metrics", with its query.
std::string ForwardedPath(std::string_view proxy_path);

struct FetchOptions {
  std::chrono::milliseconds timeout{15000};
  size_t max_body_bytes = 16u << 20;
  std::string accept = "text/plain;version=0.0.4;q=1,*/*;q=0.1";  // query APIs: JSON
};

class Fetcher {
 public:
  virtual ~Fetcher() = default;
  // One GET of `target`, through the apiserver or directly, as the fetcher does. Never throws.
  virtual Fetch Get(const FetchTarget& target, const FetchOptions& options) = 0;
  // Shutdown: aborts the GETs in flight and fails later ones at once. Callable from any thread.
  virtual void Cancel() {}
};

// GETs target.proxy_path through `client`, one attempt each (a scrape is one GET per interval).
std::unique_ptr<Fetcher> MakeApiFetcher(std::shared_ptr<kube::ApiClient> client);

// How direct GETs are made (docs/deploy.md#direct-scraping): no credentials, no proxy; https
// targets are verified against `ca_pem` (system CAs when empty) and `server_name` (the target's
// IP when empty), unless insecure_skip_verify.
struct DirectOptions {
  std::string ca_pem;
  std::string ca_file;  // where ca_pem came from, for messages
  std::string server_name;
  bool insecure_skip_verify = false;
  // Idle keep-alive connections kept over all targets (one per target at most; never more than
  // half the process's open-file limit): a 1,000-node cluster keeps one per exporter between
  // cycles, as Prometheus does.
  size_t max_idle_connections = 1024;
};

// GETs scheme://host:port/path directly, one keep-alive connection per target, with the same
// timeouts and body caps as the proxy fetcher. A target without a host is not fetched: its
// Fetch carries no_host_reason. Connection refused and connect timeouts name the NetworkPolicy
// that likely causes them.
std::unique_ptr<Fetcher> MakeDirectFetcher(DirectOptions options);

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
