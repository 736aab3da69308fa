// In-cluster mode, decided as client-go decides it (clientcmd's deferred loading, then
// rest.InClusterConfig): when no kubeconfig exists — no --kubeconfig (or config `kubeconfig`), no
// file named by $KUBECONFIG, no ~/.kube/config — and KUBERNETES_SERVICE_HOST and
// KUBERNETES_SERVICE_PORT are set, gpuattr talks to https://HOST:PORT with the pod's service
// account: the token file (re-read every minute and after a 401, since projected tokens expire and
// rotate; credentials.h) and the CA from /var/run/secrets/kubernetes.io/serviceaccount/.
// $GPUATTR_SERVICE_ACCOUNT_DIR replaces that folder (tests; docs/deploy.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gpuattr/kube/kubeconfig.h"
#include "gpuattr/util/status.h"

namespace gpuattr::kube {

inline constexpr std::string_view kServiceAccountDir =
    "/var/run/secrets/kubernetes.io/serviceaccount";
inline constexpr std::string_view kServiceAccountDirEnv = "GPUATTR_SERVICE_ACCOUNT_DIR";

struct InClusterEnv {
  std::string service_host;  // $KUBERNETES_SERVICE_HOST ("" when unset)
  std::string service_port;  // $KUBERNETES_SERVICE_PORT
  std::string service_account_dir = std::string(kServiceAccountDir);
  static InClusterEnv FromEnvironment();
  // Both variables set: the process runs in a pod (client-go's ErrNotInCluster otherwise).
  bool InPod() const { return !service_host.empty() && !service_port.empty(); }
};

// True when `source` names no kubeconfig at all: no explicit path, and none of the files of
// $KUBECONFIG (or ~/.kube/config) exists. A file that exists but cannot be read is a kubeconfig
// (its error is the one to show).
bool NoKubeconfig(const KubeconfigSource& source);

// The connection of in-cluster mode: server https://HOST:PORT (IPv6 in brackets), token_file
// DIR/token (must be readable and non-empty now), the CA of DIR/ca.crt (required), the namespace
// of DIR/namespace (optional). `label` becomes the context name, i.e. the `cluster` label. Errors
// name the file and say what to check.
Result<ClusterConnection> InClusterConnection(const InClusterEnv& env, const std::string& label);

}  // namespace gpuattr::kube
