// The seam between the cycle loop and a cluster: one ClusterSession per cluster. The loop calls
// RunCycle() once per interval (sessions of different clusters run in parallel) and publishes
// what it returns. The kube-backed implementation is KubeClusterSession (kube_session.h); tests
// plug in fakes.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpuattr/app/config.h"
#include "gpuattr/model/snapshot.h"
#include "gpuattr/util/status.h"

namespace gpuattr::app {

class ClusterSession {
 public:
  virtual ~ClusterSession() = default;
  virtual std::string Cluster() const = 0;  // the `cluster` label
  // One full cycle. Must return within about the scrape timeout; called from a worker thread,
  // never concurrently with itself. A failed cycle leaves `discovery`/`output` null: the
  // previous ones stay published (last good data).
  virtual model::CycleResult RunCycle() = 0;
  // Called from another thread on shutdown while RunCycle may be running: abort in-flight requests
  // so RunCycle returns promptly. Must be safe to call at any time.
  virtual void Cancel() {}
};

using SessionList = std::vector<std::unique_ptr<ClusterSession>>;
// Builds one session per configured cluster (Config::clusters; none → the current context).
// Errors (unreadable kubeconfig, unknown context) name the file or context.
using SessionFactory = std::function<Result<SessionList>(const Config&)>;

// Clusters to run: Config::clusters, or one entry for the kubeconfig's current context.
std::vector<ClusterConfig> EffectiveClusters(const Config& config);

}  // namespace gpuattr::app
