// Per-request credentials for one cluster: a static bearer token, a tokenFile (re-read at most
// once a minute, like client-go, and at once after a 401), an exec credential plugin (cached until
// its expirationTimestamp, re-run after a 401), or basic auth. Thread-safe: concurrent callers
// share one plugin run. Everything returned is secret: never log it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "gpuattr/kube/exec_plugin.h"
#include "gpuattr/kube/kubeconfig.h"
#include "gpuattr/util/status.h"

namespace gpuattr::kube {

struct AuthMaterial {
  std::string authorization;  // the Authorization header value ("" = none)
  // Client certificate from an exec plugin ("" = use the kubeconfig's, if any). The generation
  // changes whenever the certificate changes, so TLS clients holding an old one can be dropped.
  std::string exec_cert_pem;
  std::string exec_key_pem;
  uint64_t exec_cert_generation = 0;
};

class Credentials {
 public:
  using Clock = std::function<std::chrono::system_clock::time_point()>;
  using ExecRunner = std::function<Result<ExecCredential>(const ExecPluginRun&)>;
  struct Options {
    Clock clock;             // default: system_clock::now
    ExecRunner exec_runner;  // default: RunExecPlugin
    std::chrono::milliseconds exec_timeout{30000};
    std::chrono::seconds token_file_period{60};  // client-go re-reads tokenFile every minute
    std::chrono::seconds expiry_margin{10};      // refresh an exec credential this early
    std::chrono::seconds failure_backoff{5};     // repeat a failed plugin run no sooner
  };

  explicit Credentials(ClusterConnection conn) : Credentials(std::move(conn), Options{}) {}
  Credentials(ClusterConnection conn, Options options);

  // The credentials for the next request (runs the exec plugin or reads tokenFile when needed).
  Result<AuthMaterial> Current();

  // After a 401: forgets the exec credential / tokenFile contents. True when the next Current()
  // may yield different credentials, i.e. when one retry is worth it.
  bool Invalidate();

  // "exec", "tokenFile", "token", "basic", "client-certificate" or "none" (for messages and logs).
  std::string Kind() const;

 private:
  Result<AuthMaterial> FromTokenFile(std::chrono::system_clock::time_point now);
  Result<AuthMaterial> FromExec(std::chrono::system_clock::time_point now);

  ClusterConnection conn_;
  Options options_;
  std::mutex mu_;
  // tokenFile cache
  std::string file_token_;
  std::optional<std::chrono::system_clock::time_point> file_read_at_;
  // exec cache
  std::optional<ExecCredential> exec_cred_;
  std::optional<Error> exec_error_;
  std::chrono::system_clock::time_point exec_error_at_{};
  uint64_t exec_cert_generation_ = 0;
};

}  // namespace gpuattr::kube
