// The cycle's result types: what the stages produce (app/stages.h, RunStages → CycleOutput) and
// what every output reads (metrics/, report/, http/). A Snapshot is what one moment of gpuattr
// knows: the latest cycle of every cluster. Plain data, built by the cycle loop (app/run.h) and
// never changed after it is published (readers hold a shared_ptr<const Snapshot>).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuattr/accounting/teams.h"
#include "gpuattr/allocation/types.h"
#include "gpuattr/attribution/types.h"
#include "gpuattr/discovery/report.h"
#include "gpuattr/health/health.h"
#include "gpuattr/inference/inference.h"
#include "gpuattr/ledger/ledger.h"
#include "gpuattr/rightsizing/rightsizing.h"
#include "gpuattr/rightsizing/workload.h"

namespace gpuattr::model {

// One row of gpuattr_apiserver_requests_total.
struct RequestKey {
  std::string verb;      // "list", "watch", "get", "proxy"
  std::string resource;  // "pods", "nodes", "pods/proxy", ...
  std::string code;      // HTTP status as text, or "error" when no response arrived
  auto operator<=>(const RequestKey&) const = default;
};
using RequestCounts = std::map<RequestKey, uint64_t>;  // cumulative since start

// Who an attributed pod is (gpuattr_pod_info): read from its pod object, which the metrics layer
// does not see (the objects are the cycle's input, not kept in its output).
struct PodIdentity {
  kube::PodId pod;
  std::string node;
  std::string uid;  // metadata.uid; empty when the pod object is unknown
  // The pod's workload as rightsizing resolves it (rightsizing::WorkloadOf); absent when the pod
  // object is unknown.
  std::optional<rightsizing::WorkloadId> workload;
};

// What the stages made of one successful cycle (app/stages.h): who uses which device, the
// scheduler's view, node health, inference servers and what persists across cycles.
struct CycleOutput {
  attribution::Attribution attribution;
  allocation::Allocation allocation;
  // Every GPU node (advertises an nvidia.com/ resource, or a device was seen), sorted by name:
  // the node-health stage's roll-up of the attribution's devices and the node objects.
  std::vector<health::NodeHealth> node_health;
  inference::InferenceView inference;
  ledger::LedgerView ledger;
  // Per workload: observations over the window and a recommendation (docs/rightsizing.md).
  rightsizing::RightsizingView rightsizing;
  // Namespace -> its team labels (accounting.namespace_labels); empty when namespaces cannot be
  // listed, and on every shard but shard 0.
  accounting::NamespaceLabels namespace_labels;
  // One per pod of attribution.pods, in its order.
  std::vector<PodIdentity> pod_identities;
};

// One cycle of one cluster, as its session reports it.
struct CycleResult {
  // The object cache was in sync (every kind listed, its watch connected within 2 intervals) and
  // the apiserver answered this cycle's requests; only such a cycle publishes its output.
  bool up = false;
  std::vector<std::string> errors;  // human-readable, each naming the object/permission at fault
  // Optional parts left out, not errors (no log per cycle, cluster stays up): e.g. a 403 on a DRA
  // kind, naming the verb, resource and ClusterRole.
  std::vector<std::string> notes;
  RequestCounts apiserver_requests;  // cumulative since the session started
  // What discovery found and probed; null when the cycle did not get as far as discovery.
  std::shared_ptr<const discovery::DiscoveryReport> discovery;
  // Null when the cycle failed. In a ClusterSnapshot: the last good cycle's, kept while later
  // cycles fail, for up to stale_after after last_success_unix_seconds (app/run.h).
  std::shared_ptr<const CycleOutput> output;
};

struct ClusterSnapshot {
  std::string cluster;  // the `cluster` label
  // Unix time of the end of the latest *successful* cycle; absent until one succeeded. Stale data
  // stays published with this timestamp when later cycles fail.
  std::optional<double> last_success_unix_seconds;
  std::optional<double> last_attempt_unix_seconds;  // end of the latest cycle, good or bad
  double cycle_duration_seconds = 0;                // of the latest cycle
  // The configured interval between cycles (--interval); 0 when unknown (tests that build a
  // snapshot by hand). Published for staleness alerts (docs/alerts.md#gpuattrstale).
  double interval_seconds = 0;
  uint64_t cycles = 0;  // cycles run so far
  // The latest cycle's status; its discovery and output are the latest that exist (a failed
  // cycle keeps the last good ones published).
  CycleResult latest;
};

// The daemon's configuration reloads (SIGHUP), as Prometheus publishes its own.
struct ConfigReload {
  bool last_successful = true;
  double last_success_unix_seconds = 0;  // the start, until a reload succeeds
};

struct Snapshot {
  // False until every cluster finished its first cycle, good or failed (/readyz says 503); true
  // from then on, while its last good data (or only gpuattr's own series) are served.
  bool complete = false;
  double generated_unix_seconds = 0;
  std::vector<ClusterSnapshot> clusters;
  std::optional<ConfigReload> config_reload;  // the daemon only (not --once)
  // What the daemon's HTTP server refused so far, by reason (http/refusals.h); empty for --once.
  std::vector<std::pair<std::string, uint64_t>> http_refusals;
};

}  // namespace gpuattr::model
