#include "gpuattr/discovery/probe.h"

#include <cctype>

namespace gpuattr::discovery {

std::string ProxyMetricsPath(std::string_view ns, std::string_view pod, int32_t port) {
  std::string path = "/api/v1/namespaces/";
  path.append(ns).append("/pods/").append(pod).append(":").append(std::to_string(port));
  path.append("/proxy/metrics");
  return path;
}

int HttpStatusOfError(const Error& error) {
  switch (error.code) {
    case ErrorCode::kUnauthenticated:
      return 401;
    case ErrorCode::kPermissionDenied:
      return 403;
    default:
      break;
  }
  const std::string& m = error.message;
  for (size_t at = m.find("HTTP "); at != std::string::npos; at = m.find("HTTP ", at + 1)) {
    size_t i = at + 5;
    int v = 0;
    size_t digits = 0;
    while (i < m.size() && std::isdigit(static_cast<unsigned char>(m[i])) && digits < 3) {
      v = v * 10 + (m[i] - '0');
      ++i;
      ++digits;
    }
    if (digits == 3 && v >= 100) return v;
  }
  return 0;
}

Fetch FetchPath(kube::ApiClient& client, const std::string& path, const FetchOptions& options) {
  Fetch f;
  kube::GetOptions get;
  get.timeout = options.timeout;
  get.max_body_bytes = options.max_body_bytes;
  get.max_attempts = 1;
  get.headers["Accept"] = options.accept;
  // Durations are real time whatever clock drives the cycle: they measure the exporter.
  const auto start = std::chrono::steady_clock::now();
  Result<kube::Response> r = client.Get(path, get);
  f.duration_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!r.ok()) {
    f.error = r.error().message;
    f.http_status = HttpStatusOfError(r.error());
    return f;
  }
  f.ok = true;
  f.http_status = r->status;
  f.body = std::move(r->body);
  f.bytes = f.body.size();
  return f;
}

std::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kAccepted:
      return "accepted";
    case Outcome::kUnrecognised:
      return "unrecognised";
    case Outcome::kError:
      return "error";
    case Outcome::kPinned:
      return "pinned";
  }
  return "error";
}

ProbeVerdict JudgeProbe(const Candidate& candidate, const Fetch& fetch) {
  ProbeVerdict v;
  v.http_status = fetch.http_status;
  if (!fetch.ok) {
    v.outcome = Outcome::kError;
    v.reason = fetch.error.empty() ? "no response" : fetch.error;
    return v;
  }
  sources::Classification c = sources::ClassifyBody(fetch.body);
  v.kind = c.kind;
  if (c.kind == sources::BodyKind::kUnrecognised) {
    v.outcome = Outcome::kUnrecognised;
    v.reason = fetch.body.empty() ? "unrecognised: empty body"
                                  : "unrecognised: first line \"" + c.reason + "\"";
    return v;
  }
  v.outcome = candidate.pinned ? Outcome::kPinned : Outcome::kAccepted;
  v.reason = std::string(sources::BodyKindName(c.kind)) + " (" + c.reason + ")";
  return v;
}

}  // namespace gpuattr::discovery
