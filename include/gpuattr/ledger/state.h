// What one cluster's ledger carries from cycle to cycle (and across restarts, in the state
// file): idle run starts, energy counters, the last known power of every pod and when each was
// last observed, and the time of the last successful cycle. Plain data.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpuattr/accounting/accounting.h"
#include "gpuattr/attribution/types.h"
#include "gpuattr/ledger/pod_uid.h"

namespace gpuattr::ledger {

// One pod's record. A pod is its namespace and name (the map key), its UID and its node: another
// UID or another node under the same name is another pod, whose record starts fresh.
struct PodRecord {
  PodUid uid;                              // metadata.uid; empty when unknown (older files)
  std::string node;                        // a pod seen on another node is a new pod
  std::optional<double> idle_since_unix;   // start of the current unbroken idle run
  std::optional<double> last_idle_unix;    // the last cycle that found it idle (gap rule)
  std::optional<double> joules;            // energy counter; absent until its power was known
  std::optional<double> last_power_watts;  // the last known power (trapezoid's left end)
  std::optional<double> last_power_unix;   // when last_power_watts was measured
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

// GPU-hours (docs/accounting.md): counters per basis, and what the last accounted cycle saw.
struct GpuHours {
  accounting::PerBasis hours{};
  accounting::PerBasis cost{};  // priced cards only, in the state's currency
  bool priced = false;          // some of its hours were on a priced card (it has cost series)
  bool operator==(const GpuHours&) const = default;
};

// Under which key the last accounted cycle saw a pod (a pod accrues over an interval only when
// that cycle saw it under the key it has now): its UID, else its "namespace/name".
enum class SeenAs : uint8_t { kNo, kUid, kName };

struct PodHoursRecord {
  PodUid uid;        // another UID under the same name is another pod
  std::string node;  // as is the same name on another node
  GpuHours total;
  // Kept here rather than in a set of the seen pods' keys: 16,000 strings fewer (the state file
  // still lists them as seen_pods).
  SeenAs seen = SeenAs::kNo;
  bool operator==(const PodHoursRecord&) const = default;
};

struct NamespaceHoursRecord {
  GpuHours total;             // Σ of what its pods accrued, including pods that left
  double last_seen_unix = 0;  // last cycle with a pod of it holding a counter (for retention)
  bool operator==(const NamespaceHoursRecord&) const = default;
};

struct NodeIdleRecord {
  GpuHours total;
  double last_seen_unix = 0;  // last cycle that saw a card of the node
  bool operator==(const NodeIdleRecord&) const = default;
};

// One UTC day's GPU-hours (docs/accounting.md#daily-totals), for `gpuattr report`.
struct NamespaceDay {
  GpuHours total;  // what its pods accrued that day
  // Its labels named in accounting.namespace_labels, as last seen that day (none when unknown).
  std::map<std::string, std::string> labels;
  bool operator==(const NamespaceDay&) const = default;
};

struct DayTotals {
  std::map<std::string, NamespaceDay> namespaces;
  GpuHours idle;   // every node's idle
  GpuHours cards;  // the cards' own hours (the same on every basis) = Σ namespaces + idle
  bool operator==(const DayTotals&) const = default;
};

// Days since 1970-01-01 UTC: the key of the daily totals.
using UtcDay = int64_t;

// Keys looked up by view (heterogeneous): a cycle finds 16,000 pods' UIDs without copying them.
using KeySet = std::set<std::string, std::less<>>;

struct AccountingState {
  // The last successful cycle accounted, and the cards it saw (the pods it saw: their records'
  // `seen`): the next successful cycle accrues over the interval since, for those only. Absent
  // after a failed cycle.
  std::optional<double> last_unix;
  KeySet cards;          // "node/uuid" (else "node/gpu")
  std::string currency;  // of the cost counters; empty until a price applied
  std::map<kube::PodId, PodHoursRecord> pod_hours;
  std::map<std::string, NamespaceHoursRecord> namespace_hours;
  std::map<std::string, NodeIdleRecord> node_idle;
  // Daily totals of the last accounting.retention_days UTC days, oldest first, and the names of
  // accounting.namespace_labels when they were recorded (the first groups the report by team).
  std::map<UtcDay, DayTotals> days;
  std::vector<std::string> namespace_labels;
  bool empty() const {
    return !last_unix && cards.empty() && currency.empty() && pod_hours.empty() &&
           namespace_hours.empty() && node_idle.empty() && days.empty() && namespace_labels.empty();
  }
  bool operator==(const AccountingState&) const = default;
};

struct LedgerState {
  std::optional<double> last_cycle_unix;  // the last successful cycle
  std::map<kube::PodId, PodRecord> pods;
  std::map<std::string, NamespaceRecord> namespaces;
  AccountingState accounting;
  bool operator==(const LedgerState&) const = default;
};

}  // namespace gpuattr::ledger
