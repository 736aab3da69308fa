#include "gpuattr/kube/credentials.h"

#include <yaml-cpp/binary.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "gpuattr/util/strings.h"

namespace gpuattr::kube {

Credentials::Credentials(ClusterConnection conn, Options options)
    : conn_(std::move(conn)), options_(std::move(options)) {
  if (!options_.clock) options_.clock = [] { return std::chrono::system_clock::now(); };
  if (!options_.exec_runner) options_.exec_runner = RunExecPlugin;
}

std::string Credentials::Kind() const {
  if (!conn_.token.empty()) return "token";
  if (!conn_.token_file.empty()) return "tokenFile";
  if (conn_.exec) return "exec";
  if (!conn_.username.empty()) return "basic";
  if (!conn_.client_cert_pem.empty()) return "client-certificate";
  return "none";
}

Result<AuthMaterial> Credentials::Current() {
  // Precedence as in client-go: a static token, then tokenFile, then exec, then basic auth.
  if (!conn_.token.empty()) return AuthMaterial{"Bearer " + conn_.token, "", "", 0};
  std::lock_guard<std::mutex> lock(mu_);
  auto now = options_.clock();
  if (!conn_.token_file.empty()) return FromTokenFile(now);
  if (conn_.exec) return FromExec(now);
  if (!conn_.username.empty()) {
    std::string pair = conn_.username + ":" + conn_.password;
    return AuthMaterial{
        "Basic " +
            YAML::EncodeBase64(reinterpret_cast<const unsigned char*>(pair.data()), pair.size()),
        "", "", 0};
  }
  return AuthMaterial{};
}

Result<AuthMaterial> Credentials::FromTokenFile(std::chrono::system_clock::time_point now) {
  if (!file_read_at_ || now - *file_read_at_ >= options_.token_file_period) {
    // Messages name where the token file came from: the kubeconfig user, or the pod's service
    // account (in-cluster mode).
    const std::string what = conn_.in_cluster ? "in-cluster: the service account's token"
                                              : "user \"" + conn_.user_name + "\" in kubeconfig " +
                                                    conn_.user_source + ": tokenFile";
    std::ifstream in(conn_.token_file, std::ios::binary);
    if (!in) {
      return MakeError(ErrorCode::kUnauthenticated,
                       what + ": cannot read " + conn_.token_file + ": " + std::strerror(errno));
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    std::string token(Trim(ss.str()));
    if (token.empty()) {
      return MakeError(ErrorCode::kUnauthenticated, what + " " + conn_.token_file + " is empty");
    }
    file_token_ = std::move(token);
    file_read_at_ = now;
  }
  return AuthMaterial{"Bearer " + file_token_, "", "", 0};
}

Result<AuthMaterial> Credentials::FromExec(std::chrono::system_clock::time_point now) {
  auto material = [this](const ExecCredential& c) {
    AuthMaterial m;
    if (!c.token.empty()) m.authorization = "Bearer " + c.token;
    m.exec_cert_pem = c.client_cert_pem;
    m.exec_key_pem = c.client_key_pem;
    m.exec_cert_generation = exec_cert_generation_;
    return m;
  };
  if (exec_cred_ && (!exec_cred_->expiry || now + options_.expiry_margin < *exec_cred_->expiry)) {
    return material(*exec_cred_);
  }
  if (exec_error_ && now - exec_error_at_ < options_.failure_backoff) return *exec_error_;

  ExecPluginRun run;
  run.config = *conn_.exec;
  run.user_name = conn_.user_name;
  run.kubeconfig_path = conn_.user_source.empty() ? conn_.kubeconfig_path : conn_.user_source;
  run.server = conn_.server;
  run.ca_pem = conn_.ca_pem;
  run.tls_server_name = conn_.tls_server_name;
  run.proxy_url = conn_.proxy_url;
  run.insecure_skip_tls_verify = conn_.insecure_skip_tls_verify;
  run.timeout = options_.exec_timeout;
  Result<ExecCredential> got = options_.exec_runner(run);
  if (!got.ok()) {
    exec_error_ = got.error();
    exec_error_at_ = now;
    exec_cred_.reset();
    return got.error();
  }
  exec_error_.reset();
  if (!exec_cred_ || exec_cred_->client_cert_pem != got->client_cert_pem ||
      exec_cred_->client_key_pem != got->client_key_pem) {
    ++exec_cert_generation_;
  }
  exec_cred_ = std::move(*got);
  return material(*exec_cred_);
}

bool Credentials::Invalidate() {
  if (!conn_.token.empty()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (!conn_.token_file.empty()) {
    file_read_at_.reset();
    return true;
  }
  if (conn_.exec) {
    exec_cred_.reset();
    exec_error_.reset();
    return true;
  }
  return false;
}

}  // namespace gpuattr::kube
