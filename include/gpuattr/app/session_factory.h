// Builds the kube-backed sessions the cycle loop runs: one KubeClusterSession per configured
// cluster (kubeconfig context), with the config's pins, scrape limits and cache lifetimes, all
// sharing one state file. Plugs in as the SessionFactory: `Run(config, MakeKubeSessions, ...)`.
#pragma once

#include <cstdint>
#include <optional>

#include "gpuattr/app/config.h"
#include "gpuattr/app/kube_session.h"
#include "gpuattr/app/session.h"
#include "gpuattr/discovery/pins.h"
#include "gpuattr/kube/in_cluster.h"
#include "gpuattr/kube/kubeconfig.h"
#include "gpuattr/util/status.h"

namespace gpuattr::app {

// The parsed pins → discovery pins.
discovery::Pins PinsFromConfig(const std::vector<TargetPin>& targets);
// Discovery, scrape and stage settings from the config (pins, limits, cache lifetimes, idle).
KubeSessionOptions SessionOptionsFromConfig(const Config& config);

// The state file of Config::state_file ("" → the XDG default), read now; read-only with --once,
// else locked (ledger::StateFile::OpenExclusive). Null (with a warning) when there is no usable
// location; an error when another gpuattr holds the file.
Result<std::shared_ptr<ledger::StateFile>> OpenStateFile(const Config& config);

struct LabelledConnection {
  std::string label;  // the `cluster` label
  kube::ClusterConnection connection;
};

// The clusters to read and their labels: in-cluster mode when no kubeconfig exists and the
// process runs in a pod (kube/in_cluster.h; label Config::cluster_name, else "in-cluster"), else
// one connection per configured context (label Config::cluster_name, else the cluster's `name`,
// else the context name). Reads files only (kubeconfig, service account).
Result<std::vector<LabelledConnection>> ClusterConnections(const Config& config,
                                                           const kube::KubeconfigSource& source,
                                                           const kube::InClusterEnv& env);

// scrape.concurrency "auto" (0 in the Config): 16 exporter reads at once, or fewer when the
// process runs under a memory limit (a container's, ProcessMemoryLimit): as many as fit the limit
// minus kDaemonReserveBytes by the formula of docs/security.md#memory, at least 1. Pure.
inline constexpr int kDefaultScrapeConcurrency = 16;
inline constexpr uint64_t kDaemonReserveBytes = uint64_t{256} << 20;
// What one read may hold at most: body_bytes + 80 x samples + 64 x labels
// (docs/security.md#memory).
uint64_t ReadMemoryBound(const LimitsConfig& limits);
struct ScrapeConcurrency {
  int value = kDefaultScrapeConcurrency;
  bool lowered = false;  // auto, below the default for the memory limit
};
ScrapeConcurrency ResolveScrapeConcurrency(const ScrapeConfig& scrape,
                                           std::optional<uint64_t> memory_limit);

// Whether a cluster's exporters are read directly (docs/deploy.md#direct-scraping): scrape.path
// direct, or auto in the cluster (in-cluster mode). Pure.
bool ScrapesDirectly(ScrapePath path, bool in_cluster);

// The direct reads' TLS settings: scrape.tls.ca_file read and checked (an error names the key and
// the file), scrape.tls.server_name.
Result<scrape::DirectOptions> DirectOptionsFromConfig(const ScrapeConfig& scrape);

// Errors (unreadable kubeconfig, unknown context, bad credentials setup) name the file or context.
Result<SessionList> MakeKubeSessions(const Config& config);

}  // namespace gpuattr::app
