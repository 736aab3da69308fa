// The in-cluster Fetcher (docs/deploy.md#direct-scraping): GETs exporters by pod IP (and query
// APIs by ClusterIP) without the apiserver. Each target gets its own kube::HttpTransport (the
// apiserver's client: the same timeouts, body caps, keep-alive, strict TLS and Cancel), with no
// credentials and no proxy; only the URL differs from the proxy path.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>

#include "gpuattr/kube/http_transport.h"
#include "gpuattr/scrape/fetch.h"
#include "gpuattr/util/strings.h"

namespace gpuattr::scrape {
namespace {

using SteadyClock = std::chrono::steady_clock;

// A transport nobody used for this long belongs to a pod that is gone (or moved).
constexpr auto kIdleTransportLifetime = std::chrono::minutes(10);

// The first line of an error body, printable ASCII only and short: it goes on the status page.
std::string BodyExcerpt(std::string_view body) {
  std::string out;
  for (char c : body) {
    if (c == '\n' || out.size() >= 120) break;
    out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  }
  return std::string(Trim(out));
}

// Connection refused, no route, or a connect that never completes: what a NetworkPolicy (or a
// firewall) between gpuattr and the exporter does. The hint names the fix.
bool LooksBlocked(const Error& e) {
  const std::string& m = e.message;
  if (e.code == ErrorCode::kTimeout) return m.find("connecting to ") != std::string::npos;
  return m.find("connection refused") != std::string::npos ||
         m.find("no route to host") != std::string::npos;
}

std::string BlockedHint(const FetchTarget& t) {
  return " (is a NetworkPolicy in the target's namespace blocking gpuattr from port " +
         std::to_string(t.port) + "? allow it: docs/deploy.md#networkpolicy)";
}

size_t IdleCap(size_t wanted) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
    return std::max<size_t>(1, std::min<size_t>(wanted, lim.rlim_cur / 2));
  return std::max<size_t>(1, wanted);
}

class DirectFetcher final : public Fetcher {
 public:
  explicit DirectFetcher(DirectOptions options)
      : options_(std::move(options)), cap_(IdleCap(options_.max_idle_connections)) {}

  Fetch Get(const FetchTarget& target, const FetchOptions& options) override {
    Fetch f;
    if (target.host.empty()) {
      f.error = target.no_host_reason.empty() ? target.what + ": no address to read it directly"
                                              : target.no_host_reason;
      return f;
    }
    const auto start = SteadyClock::now();
    auto transport = TransportFor(target);
    if (!transport.ok()) {
      f.error = transport.error().message;
      return f;
    }
    kube::Request req;
    req.path = ForwardedPath(target.proxy_path);
    req.timeout = options.timeout;
    req.max_body_bytes = options.max_body_bytes;
    req.headers["Accept"] = options.accept;
    Result<kube::Response> r = (*transport)->Get(req);
    f.duration_seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
    if (!r.ok()) {
      f.error = r.error().message;
      f.over_cap = r.error().code == ErrorCode::kResourceExhausted;
      if (LooksBlocked(r.error())) f.error += BlockedHint(target);
      return f;
    }
    f.http_status = r->status;
    if (r->status < 200 || r->status >= 300) {
      const std::string excerpt = BodyExcerpt(r->body);
      f.error = target.what + ": HTTP " + std::to_string(r->status) + " from " +
                DirectBaseUrl(target.scheme, target.host, target.port) + req.path +
                (excerpt.empty() ? "" : ": " + excerpt);
      return f;
    }
    f.ok = true;
    f.body = std::move(r->body);
    f.bytes = f.body.size();
    return f;
  }

  void Cancel() override {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    for (auto& [url, entry] : transports_) entry.transport->Cancel();
  }

 private:
  struct Entry {
    std::shared_ptr<kube::Transport> transport;
    SteadyClock::time_point last_used;
  };

  Result<std::shared_ptr<kube::Transport>> TransportFor(const FetchTarget& t) {
    const std::string base = DirectBaseUrl(t.scheme, t.host, t.port);
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_)
      return MakeError(ErrorCode::kUnavailable, t.what + ": cancelled (shutting down)");
    const auto now = SteadyClock::now();
    if (auto it = transports_.find(base); it != transports_.end()) {
      it->second.last_used = now;
      return it->second.transport;
    }
    Evict(now);
    kube::ClusterConnection conn;
    conn.context_name = t.what;
    conn.server = base;
    conn.ca_pem = options_.ca_pem;
    conn.ca_file = options_.ca_file;
    conn.tls_server_name = options_.server_name;
    kube::TransportOptions topts;
    topts.max_idle_clients = 1;  // one GET per target and cycle
    topts.subject = t.what;
    topts.getenv = [](const char*) -> const char* { return nullptr; };  // never via a proxy
    auto made = kube::MakeTransport(conn, topts);
    if (!made.ok()) return made.error();
    std::shared_ptr<kube::Transport> transport(std::move(*made));
    transports_[base] = {transport, now};
    return transport;
  }

  // Under mu_: forgets transports unused for long, then the least recently used ones beyond the
  // cap (their idle connection closes with them; one in use finishes first, shared).
  void Evict(SteadyClock::time_point now) {
    std::erase_if(transports_, [&](const auto& kv) {
      return now - kv.second.last_used > kIdleTransportLifetime;
    });
    while (transports_.size() >= cap_) {
      auto oldest = std::min_element(
          transports_.begin(), transports_.end(),
          [](const auto& a, const auto& b) { return a.second.last_used < b.second.last_used; });
      transports_.erase(oldest);
    }
  }

  const DirectOptions options_;
  const size_t cap_;
  std::mutex mu_;
  std::map<std::string, Entry> transports_;  // by base URL
  bool cancelled_ = false;
};

}  // namespace

std::unique_ptr<Fetcher> MakeDirectFetcher(DirectOptions options) {
  return std::make_unique<DirectFetcher>(std::move(options));
}

}  // namespace gpuattr::scrape
