// The seam between the cycle loop and Kubernetes: one ClusterSession per cluster. The loop calls
// RunCycle() once per interval (sessions of different clusters run in parallel) and publishes
// what it returns. The kube-backed implementation is discovery::KubeClusterSession (main.cc).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpuattr/app/config.h"
#include "gpuattr/publish/snapshot.h"
#include "gpuattr/util/status.h"

namespace gpuattr::app {

struct CycleResult {
  bool up = false;                  // the apiserver answered and the cycle read what it needed
  std::vector<std::string> errors;  // human-readable, each naming the object/permission at fault
  // Optional parts left out, not errors (no log per cycle, cluster stays up): e.g. a 403 on a DRA
  // kind, naming the verb, resource and ClusterRole.
  std::vector<std::string> notes;
  publish::RequestCounts apiserver_requests;  // cumulative since the session started
  // Absent when the cycle did not get as far as discovery; the previous report stays published.
  std::shared_ptr<const discovery::DiscoveryReport> discovery;
  // Absent when the cycle failed; the previous attribution stays published (last good data).
  std::shared_ptr<const attribution::Attribution> attribution;
  // Like attribution: absent when the cycle failed (the previous ones stay published).
  std::shared_ptr<const allocation::Allocation> allocation;
  std::shared_ptr<const ledger::LedgerView> ledger;
  std::shared_ptr<const inference::InferenceView> inference;
};

class ClusterSession {
 public:
  virtual ~ClusterSession() = default;
  virtual std::string Cluster() const = 0;  // the `cluster` label
  // One full cycle. Must return within about the scrape timeout; called from a worker thread,
  // never concurrently with itself.
  virtual CycleResult RunCycle() = 0;
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
