// Probing a candidate: one GET of /metrics through the apiserver's pod proxy, then a verdict by
// content (sources/classify.h). Fetching is the only I/O here; the verdict is pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpuattr/discovery/candidates.h"
#include "gpuattr/kube/api_client.h"
#include "gpuattr/sources/classify.h"
#include "gpuattr/util/status.h"

namespace gpuattr::discovery {

// "/api/v1/namespaces/NS/pods/NAME:PORT/proxy/metrics"
std::string ProxyMetricsPath(std::string_view ns, std::string_view pod, int32_t port);

// One GET's outcome: a body, or why not.
struct Fetch {
  bool ok = false;      // a 2xx with a body within the cap
  int http_status = 0;  // 0 when no response arrived (timeout, connection, body over cap)
  std::string error;    // when !ok: the reason, naming the permission for a 403
  std::string body;     // when ok
  double duration_seconds = 0;
  uint64_t bytes = 0;  // body bytes received (0 when the transport gave up)
};

struct FetchOptions {
  std::chrono::milliseconds timeout{15000};
  size_t max_body_bytes = 64u << 20;
  std::string accept = "text/plain;version=0.0.4;q=1,*/*;q=0.1";  // query APIs: JSON
};

// One GET through the client, without retries (a scrape is one GET per interval).
Fetch FetchPath(kube::ApiClient& client, const std::string& path, const FetchOptions& options);

// Pure: the HTTP status an ApiClient error stands for ("... (HTTP 503)", forbidden → 403), or 0.
int HttpStatusOfError(const Error& error);

// Outcome labels of gpuattr_discovery_candidates.
enum class Outcome : uint8_t { kAccepted, kUnrecognised, kError, kPinned };
std::string_view OutcomeName(Outcome outcome);  // "accepted", "unrecognised", "error", "pinned"

struct ProbeVerdict {
  Outcome outcome = Outcome::kError;
  sources::BodyKind kind = sources::BodyKind::kUnrecognised;
  std::string
      reason;  // "dcgm (DCGM_FI_DEV_GPU_UTIL)", "unrecognised: first line ...", "HTTP 503: ..."
  int http_status = 0;
};

// Pure: the verdict on a candidate's fetched /metrics. An accepted pinned candidate counts as
// "pinned"; a body of no known kind is "unrecognised"; no body is "error".
ProbeVerdict JudgeProbe(const Candidate& candidate, const Fetch& fetch);

// True for outcomes that make the candidate a scrape target.
inline bool IsAccepted(Outcome o) { return o == Outcome::kAccepted || o == Outcome::kPinned; }

}  // namespace gpuattr::discovery
