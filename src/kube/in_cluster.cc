#include "gpuattr/kube/in_cluster.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpuattr/util/strings.h"

namespace gpuattr::kube {
namespace {

namespace fs = std::filesystem;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// The whole file, or an error naming it ("cannot read …: No such file or directory").
Result<std::string> ReadSecretFile(const fs::path& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return MakeError(ErrorCode::kNotFound, "in-cluster: cannot read the service account's " +
                                               std::string(what) + " " + path.string() + ": " +
                                               std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    return MakeError(ErrorCode::kInvalidArgument,
                     "in-cluster: error reading the service account's " + std::string(what) + " " +
                         path.string());
  return ss.str();
}

}  // namespace

InClusterEnv InClusterEnv::FromEnvironment() {
  InClusterEnv e;
  e.service_host = Env("KUBERNETES_SERVICE_HOST");
  e.service_port = Env("KUBERNETES_SERVICE_PORT");
  if (std::string dir = Env(std::string(kServiceAccountDirEnv).c_str()); !dir.empty())
    e.service_account_dir = std::move(dir);
  return e;
}

bool NoKubeconfig(const KubeconfigSource& source) {
  if (!source.explicit_path.empty()) return false;
  for (const std::string& file : KubeconfigFiles(source)) {
    std::error_code ec;
    if (fs::exists(fs::absolute(file, ec), ec)) return false;
  }
  return true;
}

Result<ClusterConnection> InClusterConnection(const InClusterEnv& env, const std::string& label) {
  if (!env.InPod())
    return MakeError(ErrorCode::kNotFound,
                     "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be "
                     "set");
  const fs::path dir(env.service_account_dir);
  ClusterConnection conn;
  conn.in_cluster = true;
  conn.context_name = label;
  conn.cluster_name = "in-cluster";
  conn.user_name = "service account";
  conn.kubeconfig_path = dir.string();
  conn.user_source = dir.string();
  // client-go joins them with net.JoinHostPort: an IPv6 service address goes in brackets.
  const bool ipv6 = env.service_host.find(':') != std::string::npos;
  conn.server = "https://" + (ipv6 ? "[" + env.service_host + "]" : env.service_host) + ":" +
                env.service_port;

  // The token is read now, to fail at start rather than on the first request, and re-read by
  // the credentials as it rotates.
  conn.token_file = (dir / "token").string();
  auto token = ReadSecretFile(conn.token_file, "token");
  if (!token.ok())
    return MakeError(token.error().code,
                     token.error().message +
                         " (is automountServiceAccountToken false, or the token volume missing?)");
  if (Trim(*token).empty())
    return MakeError(ErrorCode::kInvalidArgument,
                     "in-cluster: the service account's token " + conn.token_file + " is empty");

  conn.ca_file = (dir / "ca.crt").string();
  auto ca = ReadSecretFile(conn.ca_file, "CA");
  if (!ca.ok()) return ca.error();
  if (ca->find("-----BEGIN CERTIFICATE-----") == std::string::npos)
    return MakeError(ErrorCode::kInvalidArgument, "in-cluster: the service account's CA " +
                                                      conn.ca_file + " holds no PEM certificate");
  conn.ca_pem = std::move(*ca);

  std::error_code ec;
  if (fs::exists(dir / "namespace", ec)) {
    auto ns = ReadSecretFile(dir / "namespace", "namespace");
    if (ns.ok() && !Trim(*ns).empty()) conn.default_namespace = std::string(Trim(*ns));
  }
  return conn;
}

}  // namespace gpuattr::kube
