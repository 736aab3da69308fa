// The HTTP(S) endpoint: /metrics, /healthz, /readyz, the status page "/" and the snapshot as
// /snapshot.json and /snapshot.md (http/http_routes.h), served from the latest published
// Snapshot and its rendered bytes (metrics/store.h).
//
// Our own small server rather than cpp-httplib (docs/design.md#http-server): Debian 12's httplib
// 0.11.4 reads a request line or header line into a string that grows until a newline comes, checks
// the caps only afterwards, has a per-read timeout but no deadline for a whole head, queues
// accepted connections without bound, and reads a request's body or honours Range as it likes; all
// of that is compiled into libcpp-httplib.so.
//
// Here one thread owns every socket (poll): it accepts, runs TLS handshakes, reads request heads
// into buffers of at most HeadLimit bytes under a deadline, refuses what Admit refuses, and
// writes responses without blocking. A fixed pool of workers authenticates (bcrypt) and builds
// the responses. A slow or hostile client holds one connection slot for at most the header
// deadline (or write deadline), never a worker; nothing it sends is kept beyond the head's caps.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuattr/http/basic_auth.h"
#include "gpuattr/http/http_request.h"
#include "gpuattr/http/refusals.h"
#include "gpuattr/http/tls_server.h"
#include "gpuattr/metrics/store.h"
#include "gpuattr/util/clock.h"
#include "gpuattr/util/status.h"

namespace gpuattr::http {

struct ServerLimits {
  HttpLimits http;
  // From accepting a connection (or finishing the previous response on it) to the end of the
  // next request head, TLS handshake included. A partial head then gets 408; an idle
  // keep-alive connection is closed.
  std::chrono::milliseconds header_timeout{5'000};
  std::chrono::milliseconds write_timeout{60'000};  // to send one response
  // A reader slower than this is cut: by `send_grace` + n / min_send_rate after a response
  // started, at least n of its bytes must be sent (0: no minimum).
  size_t min_send_rate = 128 * 1024;  // bytes per second
  std::chrono::milliseconds send_grace{10'000};
  // After a refusal the connection is closed; what the client still sends is read and dropped
  // for this long (or up to linger_bytes), so that it gets the answer rather than a reset.
  std::chrono::milliseconds linger{1'000};
  size_t linger_bytes = 1u << 20;
  int workers = 4;
  size_t max_connections = 128;
  // Beyond max_connections: slots for /healthz and /readyz only (anything else there gets 503),
  // so that the probes get in while every other slot is taken. When these are full too, a new
  // connection pushes out the oldest one still waiting for its request head; with none of those,
  // new connections wait in the listen backlog.
  size_t health_connections = 8;
  size_t max_connections_per_peer = 64;  // from one address; more are closed at once
  size_t max_requests_per_connection = 1'000;
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 9787;                  // 0: any free port (see MetricsServer::port())
  std::optional<TlsOptions> tls;    // set: HTTPS only
  std::vector<BcryptUser> users;    // non-empty: basic auth on every path
  Clock* clock = nullptr;           // the status page's "ago" times; SystemClock() when null
  double page_refresh_seconds = 0;  // the status page reloads itself this often (the interval)
  std::string metrics_path = "/metrics";  // --web.telemetry-path; any other path 404s
  ServerLimits limits;
  // Where refusals are counted (gpuattr_http_refused_total); the daemon keeps one set across
  // reloads. Null: the server counts in a set of its own.
  std::shared_ptr<RefusalCounters> refusals;
};

class MetricsServer {
 public:
  // Binds and starts serving on background threads. Errors name the address (or TLS file, or
  // user whose hash is unusable).
  static Result<std::unique_ptr<MetricsServer>> Start(
      const ServerOptions& options, std::shared_ptr<const metrics::SnapshotStore> store);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const;  // the bound port (useful with port 0)
  void Stop();       // idempotent; closes every connection and waits for the threads

 private:
  struct Impl;
  explicit MetricsServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The warning logged at start when the server is reachable from other hosts without TLS or
// without authentication (basic auth or verified client certificates); nullopt when fine.
std::optional<std::string> ExposureWarning(bool loopback, bool tls, bool authenticated);

}  // namespace gpuattr::http
