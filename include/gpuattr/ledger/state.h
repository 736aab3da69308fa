// What one cluster's ledger carries from cycle to cycle (and across restarts, in the state
// file): idle run starts, energy counters and the time of the last successful cycle. Plain data.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuattr/attribution/types.h"

namespace gpuattr::ledger {

struct PodRecord {
  std::string node;                        // a pod seen on another node is a new pod
  std::optional<double> idle_since_unix;   // start of the current unbroken idle run
  std::optional<double> joules;            // energy counter; absent until its power was known
  std::optional<double> last_power_watts;  // power at the last cycle (trapezoid's left end)
  bool operator==(const PodRecord&) const = default;
};

// The namespace's counter at one moment: the marks give "energy over the last 24 h".
struct EnergyMark {
  double unix = 0;
  double joules = 0;
  bool operator==(const EnergyMark&) const = default;
};

struct NamespaceRecord {
  double joules = 0;          // Σ of everything its pods accrued, including pods that left
  double last_seen_unix = 0;  // last cycle with a pod of it holding a counter (for retention)
  // One mark per hour, oldest first, reaching back just past 24 h (ledger.h).
  std::vector<EnergyMark> marks{};
  bool operator==(const NamespaceRecord&) const = default;
};

struct LedgerState {
  std::optional<double> last_cycle_unix;  // the last successful cycle
  std::map<kube::PodId, PodRecord> pods;
  std::map<std::string, NamespaceRecord> namespaces;
  bool operator==(const LedgerState&) const = default;
};

}  // namespace gpuattr::ledger
