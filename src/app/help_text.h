// The prose of --help around the settings table, shared by --help (help.cc) and the man page
// (man_page.cc): one text, two renderings.
#pragma once

#include <string>
#include <string_view>

#include "gpuattr/app/settings.h"

namespace gpuattr::app {

inline constexpr std::string_view kIntro =
    R"(gpuattr - whose GPUs are these, and is anyone using them?

gpuattr runs on your workstation with your kubeconfig. Every interval it reads the GPU exporters
that already run in your Kubernetes clusters (dcgm-exporter, per-process exporters, vLLM/SGLang)
through the kube-apiserver pod proxy, joins them with pods, nodes and DRA claims, and serves
per-device, per-pod and per-namespace GPU series on a local /metrics for Prometheus.
Nothing is installed in the cluster; every request is a read made with your own credentials.

In a pod (in-cluster mode): with no kubeconfig at all (no --kubeconfig, no file in $KUBECONFIG,
no ~/.kube/config) and KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT set, gpuattr reads
the cluster it runs in with its service account: the token (re-read every minute and after a
401, as it rotates) and the CA from /var/run/secrets/kubernetes.io/serviceaccount/
($GPUATTR_SERVICE_ACCOUNT_DIR replaces that folder). Manifests: config/kubernetes/.

As kubectl-gpuattr (a link to gpuattr, installed beside it) it is the kubectl plugin
`kubectl gpuattr`: one cycle printed as a table (--once --output table), with kubectl's flags
-o table|json|markdown|prometheus, -n NAMESPACE (that namespace's rows), --kubeconfig, --context.

As `gpuattr report --from DATE --to DATE` it prints GPU-hours and their cost per namespace or
team over those UTC days from the state file alone, with no cluster access (gpuattr report --help).

Usage:
  gpuattr [flags]
  kubectl gpuattr [-o FORMAT] [-n NAMESPACE] [flags]
  gpuattr report --from DATE --to DATE [--group-by namespace|team] [--output markdown|csv|json]

Settings by topic. A --flag overrides the same key of the config file (--config.file); a key
without a flag is set in the file only. config/gpuattr.example.yaml shows every key.
)";

inline constexpr std::string_view kOutro = R"(
Endpoints: /metrics (Prometheus text format, gzip when asked), /healthz, /readyz (200 after the
first cycle), / (status page: whose GPUs, idle holders, top pods, devices, health, pending pods,
exporters and probes), /snapshot.json and /snapshot.md (the same as --output json|markdown).

Exit codes:
  0  success (--help, --version, --once with at least one cluster answering, clean shutdown)
  1  --once: no cluster answered; or a fatal runtime error
  2  bad flag, bad config file or bad value (the message names the flag or key)
  3  cannot serve: the listen address is in use or invalid for this host, TLS files unusable
)";

// "--web.listen-address ADDR", "-h, --help", "scrape.timeout DURATION": a setting's head line.
std::string SettingHead(const Setting& s);

}  // namespace gpuattr::app
