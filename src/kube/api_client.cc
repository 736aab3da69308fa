#include "gpuattr/kube/api_client.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <random>

#include <nlohmann/json.hpp>

#include "gpuattr/util/log.h"

namespace gpuattr::kube {
namespace {

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    size_t slash = path.find('/');
    std::string_view seg = path.substr(0, slash);
    if (!seg.empty()) out.push_back(seg);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

bool QueryHasWatch(std::string_view query) {
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view param = query.substr(0, amp);
    if (param == "watch=1" || param == "watch=true") return true;
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return false;
}

// The RBAC verbs gpuattr's ClusterRole grants for a resource: what the 403 message asks for.
std::string GrantFor(const RequestKind& kind) {
  std::string qualified = kind.resource;
  if (!kind.api_group.empty()) {
    size_t slash = qualified.find('/');
    qualified.insert(slash == std::string::npos ? qualified.size() : slash, "." + kind.api_group);
  }
  if (kind.resource == "discovery") return "get on the non-resource URLs /api and /apis";
  if (kind.resource.find('/') != std::string::npos) return "get on " + qualified;
  return "list/watch on " + qualified;  // gpuattr never GETs a single object
}

std::string Scope(const RequestKind& kind) {
  if (kind.resource == "discovery") return "";
  if (kind.namespace_.empty()) return " at the cluster scope";
  return " in namespace \"" + kind.namespace_ + "\"";
}

std::string What(const RequestKind& kind) {
  return kind.verb + " " + kind.resource +
         (kind.namespace_.empty() ? "" : " in namespace \"" + kind.namespace_ + "\"");
}

// The apiserver's Status.message, if the body is one (never an exporter's body).
std::string ServerMessage(const Response& resp) {
  if (resp.body.empty() || resp.body.front() != '{') return {};
  try {
    auto j = nlohmann::json::parse(resp.body);
    if (!j.is_object() || j.value("kind", "") != "Status") return {};
    std::string msg = j.value("message", "");
    if (msg.size() > 300) msg = msg.substr(0, 300) + "...";
    return msg;
  } catch (const std::exception&) {
    return {};
  }
}

std::string Header(const Response& resp, const std::string& name) {
  auto it = resp.headers.find(name);
  return it == resp.headers.end() ? std::string() : it->second;
}

bool Retryable(int status) { return status == 429 || (status >= 500 && status != 501); }

}  // namespace

RequestKind ClassifyPath(std::string_view path) {
  RequestKind kind;
  std::string_view query;
  if (size_t q = path.find('?'); q != std::string_view::npos) {
    query = path.substr(q + 1);
    path = path.substr(0, q);
  }
  bool watch = QueryHasWatch(query);
  auto segs = SplitPath(path);
  kind.verb = "get";
  kind.resource = "discovery";
  size_t rest = 0;
  if (segs.size() >= 3 && segs[0] == "api") {
    rest = 2;
  } else if (segs.size() >= 4 && segs[0] == "apis") {
    kind.api_group = std::string(segs[1]);
    rest = 3;
  } else {
    kind.api_group.clear();
    return kind;  // /api, /apis, /api/v1, /apis/group/version, /version
  }
  if (segs.size() - rest >= 3 && segs[rest] == "namespaces") {
    kind.namespace_ = std::string(segs[rest + 1]);
    rest += 2;
  }
  kind.resource = std::string(segs[rest]);
  size_t tail = segs.size() - rest;
  if (tail == 1) {
    kind.verb = watch ? "watch" : "list";
  } else {
    kind.verb = watch ? "watch" : "get";
    if (tail >= 3) kind.resource += "/" + std::string(segs[rest + 2]);
  }
  return kind;
}

namespace {

Error ErrorTextForStatus(int status, const Response& resp, const RequestKind& kind,
                         std::string_view cluster) {
  const std::string c = "cluster \"" + std::string(cluster) + "\"";
  std::string server = ServerMessage(resp);
  std::string suffix = server.empty() ? "" : " (apiserver: " + server + ")";
  std::string code = " (HTTP " + std::to_string(status) + ")";
  switch (status) {
    case 401:
      return MakeError(ErrorCode::kUnauthenticated,
                       "unauthorized: credentials rejected by " + c + code +
                           ": check the kubeconfig user, or refresh its token");
    case 403:
      return MakeError(ErrorCode::kPermissionDenied,
                       "forbidden: cannot " + kind.verb + " resource \"" + kind.resource + "\"" +
                           Scope(kind) + " in " + c + ": grant " + GrantFor(kind) +
                           " (config/kubernetes/clusterrole.yaml)");
    case 404:
      return MakeError(ErrorCode::kNotFound,
                       "not found: " + What(kind) + " on " + c + code + suffix);
    case 410:
      return MakeError(ErrorCode::kGone, "gone: " + What(kind) + " on " + c + code +
                                             ": resourceVersion too old, relisting" + suffix);
    case 429: {
      std::string after = Header(resp, "retry-after");
      return MakeError(ErrorCode::kResourceExhausted,
                       "too many requests: " + c + " throttled " + What(kind) + code +
                           (after.empty() ? "" : ", Retry-After " + after + "s") + suffix);
    }
    default:
      break;
  }
  if (status >= 500) {
    return MakeError(ErrorCode::kUnavailable, "apiserver error: " + c + " answered HTTP " +
                                                  std::to_string(status) + " to " + What(kind) +
                                                  suffix);
  }
  return MakeError(ErrorCode::kInvalidArgument, "unexpected HTTP " + std::to_string(status) +
                                                    " from " + c + " to " + What(kind) + suffix);
}

}  // namespace

Error ErrorForStatus(int status, const Response& resp, const RequestKind& kind,
                     std::string_view cluster) {
  Error e = ErrorTextForStatus(status, resp, kind, cluster);
  e.http_status = status;  // as a field: callers never read it back from the text
  return e;
}

RandomSource DefaultRandomSource() {
  struct Shared {
    std::mutex mu;
    std::mt19937_64 gen{std::random_device{}()};
  };
  static Shared shared;
  return [] {
    std::lock_guard<std::mutex> lock(shared.mu);
    return std::uniform_real_distribution<double>(0.0, 1.0)(shared.gen);
  };
}

Backoff::Backoff(BackoffPolicy policy, RandomSource rng)
    : policy_(policy), rng_(rng ? std::move(rng) : DefaultRandomSource()) {}

std::chrono::milliseconds Backoff::Next() {
  double base = static_cast<double>(policy_.initial.count()) * std::pow(policy_.factor, attempt_);
  base = std::min(base, static_cast<double>(policy_.max.count()));
  if (attempt_ < 64) ++attempt_;
  double u = std::clamp(rng_(), 0.0, 1.0);
  double jitter = std::clamp(policy_.jitter, 0.0, 1.0);
  return std::chrono::milliseconds(static_cast<int64_t>(base * (1.0 - jitter * u)));
}

std::chrono::milliseconds ParseRetryAfter(std::string_view value) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (value.empty() || value.size() > 9) return std::chrono::milliseconds(0);
  int64_t seconds = 0;
  for (char ch : value) {
    if (!std::isdigit(static_cast<unsigned char>(ch))) return std::chrono::milliseconds(0);
    seconds = seconds * 10 + (ch - '0');
  }
  return std::chrono::seconds(seconds);
}

void RequestCounters::Add(std::string_view verb, std::string_view resource, std::string_view code) {
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_[{std::string(verb), std::string(resource), std::string(code)}];
}

std::vector<RequestCount> RequestCounters::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<RequestCount> out;
  out.reserve(counts_.size());
  for (const auto& [key, n] : counts_) {
    out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), n});
  }
  return out;
}

uint64_t RequestCounters::Get(std::string_view verb, std::string_view resource,
                              std::string_view code) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = counts_.find({std::string(verb), std::string(resource), std::string(code)});
  return it == counts_.end() ? 0 : it->second;
}

uint64_t RequestCounters::Total(std::string_view verb, std::string_view resource) const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t total = 0;
  for (const auto& [key, n] : counts_) {
    if (std::get<0>(key) == verb && std::get<1>(key) == resource) total += n;
  }
  return total;
}

ApiClient::ApiClient(std::shared_ptr<Transport> transport, ApiClientOptions options)
    : transport_(std::move(transport)),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &SystemClock()) {
  if (!options_.random) options_.random = DefaultRandomSource();
  if (options_.max_attempts < 1) options_.max_attempts = 1;
}

Request ApiClient::MakeRequest(const std::string& path, const GetOptions& options) const {
  Request req;
  req.path = path;
  req.headers = options.headers;
  if (req.headers.find("Accept") == req.headers.end()) req.headers["Accept"] = "application/json";
  req.timeout = options.timeout;
  req.max_body_bytes = options.max_body_bytes;
  return req;
}

void ApiClient::Count(const RequestKind& kind, const Result<Response>& r) {
  counters_.Add(kind.verb, kind.resource, r.ok() ? std::to_string(r->status) : "error");
}

Result<Response> ApiClient::Get(const std::string& path, const GetOptions& options) {
  const RequestKind kind = ClassifyPath(path);
  const Request req = MakeRequest(path, options);
  const int attempts = options.max_attempts > 0 ? options.max_attempts : options_.max_attempts;
  Backoff backoff(options_.backoff, options_.random);
  for (int attempt = 1;; ++attempt) {
    Result<Response> r = transport_->Get(req);
    Count(kind, r);
    std::chrono::milliseconds wait{0};
    Error err;
    if (!r.ok()) {
      err = r.error();
      bool retry = err.code == ErrorCode::kUnavailable || err.code == ErrorCode::kTimeout;
      if (!retry || attempt >= attempts) return err;
      wait = backoff.Next();
    } else if (r->status >= 200 && r->status < 300) {
      return r;
    } else {
      err = ErrorForStatus(r->status, *r, kind, transport_->ClusterName());
      if (!Retryable(r->status) || attempt >= attempts) return err;
      auto after = r->status == 429 ? ParseRetryAfter(Header(*r, "retry-after"))
                                    : std::chrono::milliseconds(0);
      wait = after.count() > 0 ? std::min(after, options_.max_retry_after) : backoff.Next();
    }
    log::Debug("apiserver request failed, retrying",
               {{"cluster", transport_->ClusterName()},
                {"path", path},
                {"error", err.message},
                {"wait_ms", static_cast<int64_t>(wait.count())},
                {"attempt", attempt}});
    if (!clock_->SleepFor(wait, options.stop)) return err;
  }
}

Result<Response> ApiClient::Stream(const std::string& path, const ChunkSink& sink,
                                   const GetOptions& options) {
  const RequestKind kind = ClassifyPath(path);
  Result<Response> r = transport_->Stream(MakeRequest(path, options), sink);
  Count(kind, r);
  if (!r.ok()) return r;
  if (r->status < 200 || r->status >= 300) {
    return ErrorForStatus(r->status, *r, kind, transport_->ClusterName());
  }
  return r;
}

}  // namespace gpuattr::kube
