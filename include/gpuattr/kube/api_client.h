// ApiClient: one cluster's apiserver behind a Transport. Every request is a GET; this layer maps
// HTTP statuses to errors with messages a user can act on, counts every request by verb, resource
// and code (gpuattr_apiserver_requests_total), honours Retry-After on 429 and backs off with
// jitter.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "gpuattr/kube/transport.h"
#include "gpuattr/util/clock.h"
#include "gpuattr/util/status.h"

namespace gpuattr::kube {

// What a request path asks for, in RBAC terms.
struct RequestKind {
  std::string verb;        // "list", "watch", "get"
  std::string resource;    // "pods", "pods/proxy", "resourceslices", "discovery", ...
  std::string api_group;   // "" for the core group, "resource.k8s.io", ...
  std::string namespace_;  // empty at the cluster scope
};

// Pure: "/api/v1/pods?limit=500" → list pods; "...?watch=1..." → watch;
// "/api/v1/namespaces/ns/pods/p:9400/proxy/metrics" → get pods/proxy in ns; "/apis" → get
// discovery.
RequestKind ClassifyPath(std::string_view path);

// Pure: the error for a non-2xx status, naming the cluster, the verb and resource, and for 403 the
// RBAC grant that fixes it. The apiserver's own Status message is appended when present. The
// status itself is in Error::http_status.
Error ErrorForStatus(int status, const Response& resp, const RequestKind& kind,
                     std::string_view cluster);

// Exponential backoff, capped, with jitter: attempt n waits base_n × (1 − jitter × u), where
// base_n = min(max, initial × factor^n) and u is uniform in [0, 1).
struct BackoffPolicy {
  std::chrono::milliseconds initial{500};
  std::chrono::milliseconds max{30000};
  double factor = 2.0;
  double jitter = 0.5;
};

// Uniform in [0, 1); injectable so tests get deterministic jitter.
using RandomSource = std::function<double()>;
RandomSource DefaultRandomSource();

class Backoff {
 public:
  explicit Backoff(BackoffPolicy policy = {}, RandomSource rng = DefaultRandomSource());
  std::chrono::milliseconds Next();
  void Reset() { attempt_ = 0; }
  int attempt() const { return attempt_; }

 private:
  BackoffPolicy policy_;
  RandomSource rng_;
  int attempt_ = 0;
};

// "Retry-After: 3" → 3 s; HTTP dates and junk → nullopt-like 0 (caller falls back to backoff).
std::chrono::milliseconds ParseRetryAfter(std::string_view value);

struct RequestCount {
  std::string verb;
  std::string resource;
  std::string code;  // "200", "403", ..., or "error" when no response arrived
  uint64_t count = 0;
};

// Thread-safe counters behind gpuattr_apiserver_requests_total.
class RequestCounters {
 public:
  void Add(std::string_view verb, std::string_view resource, std::string_view code);
  std::vector<RequestCount> Snapshot() const;  // sorted by verb, resource, code
  uint64_t Get(std::string_view verb, std::string_view resource, std::string_view code) const;
  uint64_t Total(std::string_view verb, std::string_view resource) const;  // all codes

 private:
  mutable std::mutex mu_;
  std::map<std::tuple<std::string, std::string, std::string>, uint64_t> counts_;
};

struct ApiClientOptions {
  BackoffPolicy backoff;
  int max_attempts = 3;  // per Get, for transport errors, 429 and 5xx; 1 disables retries
  std::chrono::milliseconds max_retry_after{60000};  // a longer Retry-After is capped to this
  Clock* clock = nullptr;                            // SystemClock() when null
  RandomSource random;                               // DefaultRandomSource() when empty
};

struct GetOptions {
  std::chrono::milliseconds timeout{15000};
  size_t max_body_bytes = 64u << 20;
  int max_attempts = 0;              // 0: the client's default
  const StopSignal* stop = nullptr;  // ends retry waits early
  std::map<std::string, std::string> headers;
};

class ApiClient {
 public:
  explicit ApiClient(std::shared_ptr<Transport> transport, ApiClientOptions options = {});

  // GET with retries (transport errors, 429 honouring Retry-After, 5xx). A 2xx is a Response; any
  // other status is an Error (401 kUnauthenticated, 403 kPermissionDenied, 404 kNotFound, 410
  // kGone, 429 kResourceExhausted, 5xx kUnavailable) with a message naming the cluster.
  Result<Response> Get(const std::string& path, const GetOptions& options = {});

  // One streaming GET (WATCH), no retries: the stream's end with a 2xx is a Response; a non-2xx is
  // the mapped Error. The sink sees the raw chunks.
  Result<Response> Stream(const std::string& path, const ChunkSink& sink,
                          const GetOptions& options = {});

  std::string ClusterName() const { return transport_->ClusterName(); }
  const RequestCounters& counters() const { return counters_; }
  std::vector<RequestCount> RequestCounts() const { return counters_.Snapshot(); }
  Clock& clock() const { return *clock_; }
  const ApiClientOptions& options() const { return options_; }

 private:
  Request MakeRequest(const std::string& path, const GetOptions& options) const;
  void Count(const RequestKind& kind, const Result<Response>& r);

  std::shared_ptr<Transport> transport_;
  ApiClientOptions options_;
  Clock* clock_;
  RequestCounters counters_;
};

}  // namespace gpuattr::kube
