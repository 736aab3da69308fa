// client-go exec credential plugins (client.authentication.k8s.io/v1 and v1beta1): the plugin is
// started directly (posix_spawn, never a shell) with its args, our environment plus its env and
// KUBERNETES_EXEC_INFO; its stdout is an ExecCredential (never logged), its stderr lines are logged
// at warn level as the plugin's messages (each cut at 512 bytes, at most 20 per run) and never put
// into an error (errors reach the status page; stderr may hold a device-login code), and it is
// killed after a timeout.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/kube/kubeconfig.h"
#include "gpuattr/util/status.h"

namespace gpuattr::kube {

// What a plugin returned. Secret: never log token or key.
struct ExecCredential {
  std::string token;
  std::string client_cert_pem;
  std::string client_key_pem;
  std::optional<std::chrono::system_clock::time_point> expiry;  // nullopt: no expiry given
};

struct ExecPluginRun {
  ExecConfig config;
  std::string user_name;        // for messages
  std::string kubeconfig_path;  // for messages
  // spec.cluster, sent when config.provide_cluster_info.
  std::string server, ca_pem, tls_server_name, proxy_url;
  bool insecure_skip_tls_verify = false;
  std::chrono::milliseconds timeout{30000};
  std::string path_env;  // PATH used to find a bare command; empty: getenv("PATH")
};

// The KUBERNETES_EXEC_INFO value for `run` (pure).
std::string BuildExecInfo(const ExecPluginRun& run);

// The plugin's environment (pure): `base` ("NAME=value" entries ended by a null: ours), then
// the plugin's env entries, then KUBERNETES_EXEC_INFO; a later entry replaces the first earlier
// one of its name, in place.
std::vector<std::string> BuildExecEnvironment(const ExecPluginRun& run, const char* const* base);

// Parses a plugin's stdout (pure). `api_version` is what the kubeconfig asked for; `who` names the
// plugin and user in messages. Messages never quote the output.
Result<ExecCredential> ParseExecCredential(std::string_view stdout_text,
                                           const std::string& api_version, const std::string& who);

// Finds the executable for `command`: a path is used as is; a bare name is looked up in
// `path_env` (':'-separated) as Go's exec.LookPath does: the first match wins, and a match through
// an empty, "." or other relative entry is an error (exec.ErrDot), never a run from the current
// directory. Errors name the plugin, the user and the kubeconfig.
Result<std::string> FindExecutable(const ExecPluginRun& run);

// Runs the plugin once and parses its credential.
Result<ExecCredential> RunExecPlugin(const ExecPluginRun& run);

// RFC 3339 timestamp ("2026-11-30T01:02:03Z", "...+02:00", fractional seconds allowed).
std::optional<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text);

}  // namespace gpuattr::kube
