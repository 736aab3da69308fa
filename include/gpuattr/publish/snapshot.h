// What one moment of gpuattr knows: the result of the latest cycle of every cluster. Plain data,
// built by the cycle loop and never changed after it is published (readers hold a
// shared_ptr<const Snapshot>). Attribution results are added here by later stages.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace gpuattr::discovery {
struct DiscoveryReport;
}  // namespace gpuattr::discovery
namespace gpuattr::attribution {
struct Attribution;  // attribution/types.h
}  // namespace gpuattr::attribution
namespace gpuattr::allocation {
struct Allocation;  // allocation/types.h
}  // namespace gpuattr::allocation
namespace gpuattr::ledger {
struct LedgerView;  // ledger/ledger.h
}  // namespace gpuattr::ledger
namespace gpuattr::inference {
struct InferenceView;  // inference/inference.h
}  // namespace gpuattr::inference

namespace gpuattr::publish {

// One row of gpuattr_apiserver_requests_total.
struct RequestKey {
  std::string verb;      // "list", "watch", "get", "proxy"
  std::string resource;  // "pods", "nodes", "pods/proxy", ...
  std::string code;      // HTTP status as text, or "error" when no response arrived
  auto operator<=>(const RequestKey&) const = default;
};
using RequestCounts = std::map<RequestKey, uint64_t>;  // cumulative since start

struct ClusterSnapshot {
  std::string cluster;  // the `cluster` label
  bool up = false;      // the latest cycle reached the apiserver and read what it needed
  // Unix time of the end of the latest *successful* cycle; absent until one succeeded. Stale data
  // stays published with this timestamp when later cycles fail.
  std::optional<double> last_success_unix_seconds;
  std::optional<double> last_attempt_unix_seconds;  // end of the latest cycle, good or bad
  double cycle_duration_seconds = 0;                // of the latest cycle
  uint64_t cycles = 0;                              // cycles run so far
  RequestCounts apiserver_requests;
  std::vector<std::string> errors;  // from the latest cycle, human-readable, no secrets
  std::vector<std::string> notes;   // optional parts left out (a DRA kind forbidden), not errors
  // What discovery found and probed in the latest cycle that got that far (exporters, probes).
  std::shared_ptr<const discovery::DiscoveryReport> discovery;
  // Devices, cards, pods, namespaces, node power of the latest successful cycle; null until one.
  std::shared_ptr<const attribution::Attribution> attribution;
  // The scheduler's view (requests, capacity, pending pods and hints) of the latest successful
  // cycle.
  std::shared_ptr<const allocation::Allocation> allocation;
  // What persists across cycles: idle run lengths and energy counters.
  std::shared_ptr<const ledger::LedgerView> ledger;
  // Inference servers' rates and gauges of the latest successful cycle.
  std::shared_ptr<const inference::InferenceView> inference;
};

struct Snapshot {
  // False only for the placeholder published before the first cycle ends (/readyz says 503).
  bool complete = false;
  double generated_unix_seconds = 0;
  std::vector<ClusterSnapshot> clusters;
};

}  // namespace gpuattr::publish
