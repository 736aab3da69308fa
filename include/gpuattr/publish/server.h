// The HTTP(S) endpoint: /metrics, /healthz, /readyz, the status page "/" and the snapshot as
// /snapshot.json and /snapshot.md (publish/outputs.h), served by
// cpp-httplib from the latest published Snapshot.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpuattr/publish/snapshot.h"
#include "gpuattr/publish/store.h"
#include "gpuattr/util/clock.h"
#include "gpuattr/util/status.h"

namespace gpuattr::publish {

struct Credential {
  std::string username;
  std::string password;  // never logged or shown
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 9787;            // 0: any free port (see MetricsServer::port())
  std::string tls_cert_file;  // both set: HTTPS
  std::string tls_key_file;
  std::vector<Credential> users;    // non-empty: basic auth on every path
  Clock* clock = nullptr;           // the status page's "ago" times; SystemClock() when null
  double page_refresh_seconds = 0;  // the status page reloads itself this often (the interval)
};

class MetricsServer {
 public:
  // Binds and starts serving on a background thread. Errors name the address (or TLS file).
  static Result<std::unique_ptr<MetricsServer>> Start(const ServerOptions& options,
                                                      std::shared_ptr<const SnapshotStore> store);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const;  // the bound port (useful with port 0)
  void Stop();       // idempotent; waits for the serving thread

 private:
  struct Impl;
  explicit MetricsServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// True when `header` ("Basic base64(user:pass)") matches one of `users`. Every candidate is
// compared in constant time (SHA-256 digests compared with CRYPTO_memcmp).
bool CheckBasicAuth(std::string_view header, const std::vector<Credential>& users);

}  // namespace gpuattr::publish
