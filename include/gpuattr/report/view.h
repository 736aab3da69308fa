// The answer at a glance: one pure view of a Snapshot — whose GPUs, who holds them idle, the top
// pods, devices by node, health per card, pending pods, exporters, probes and discovery — built
// once and rendered by the status page (status_page.h), the terminal table, the JSON snapshot and
// the Markdown incident report (outputs.h). Every output reads the same rows, so they never
// disagree. Rows point at the model's types (attribution::Pod, Device, Card, the allocation's
// PendingPod, discovery's ExporterStatus and ProbeRecord) and add only what the view computes; the
// view holds the outputs and reports they point into.
//
// Rows are sorted for reading: the biggest user or holder first, ties by name. std::optional
// means unknown (shown as "-", JSON null), never a fake 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuattr/allocation/types.h"
#include "gpuattr/discovery/report.h"
#include "gpuattr/health/health.h"
#include "gpuattr/model/snapshot.h"

namespace gpuattr::report {

struct ViewOptions {
  size_t top_pods = 10;        // rows of each "top pods" list
  double refresh_seconds = 0;  // the page reloads itself this often (the cycle interval); 0: never
  std::string metrics_path = "/metrics";  // where the exposition is served (--web.telemetry-path)
};

struct ClusterRow {
  std::string cluster;
  std::string state;  // "up", "down", or "pending" before its first cycle
  std::optional<double> last_success_unix;
  std::optional<double> last_attempt_unix;
  std::optional<double> data_age_seconds;  // now − last success
  std::optional<double> cycle_duration_seconds;
  uint64_t cycles = 0;
  std::vector<std::string> errors;
  std::vector<std::string> notes;
};

// Totals over every cluster, for the headline.
struct Totals {
  size_t clusters = 0, clusters_up = 0;
  size_t nodes = 0;    // GPU nodes
  size_t cards = 0;    // physical GPUs seen
  size_t devices = 0;  // whole GPUs and MIG slices seen
  double gpu_equivalents_in_use = 0;
  std::optional<double> power_watts;  // Σ cards
  std::optional<double> attributed_power_watts;
  std::optional<double> memory_used_bytes;  // Σ pods
  size_t gpu_pods = 0;
  size_t idle_pods = 0;
  std::optional<double> idle_memory_bytes;
  size_t pending_pods = 0;
  size_t cards_critical = 0, cards_warning = 0, cards_ok = 0, cards_unknown = 0;
};

struct NamespaceRow {
  std::string cluster;
  std::string name;
  double gpu_equivalents = 0;
  size_t devices_in_use = 0;
  int64_t requested_devices = 0;         // Σ of device resources, never replicas
  int64_t requested_replicas = 0;        // Σ of time-slicing replicas (`*.shared`)
  allocation::ResourceCounts requested;  // per resource as Kubernetes names it (replicas too)
  std::optional<double> utilization;
  std::optional<double> memory_used_bytes;
  std::optional<double> memory_idle_bytes;
  std::optional<double> power_watts;
  std::optional<double> energy_24h_joules;  // from the ledger; over energy_window_seconds
  double energy_window_seconds = 0;         // 86400, or less while the history is shorter
  size_t gpu_pods = 0;
  size_t idle_pods = 0;
  size_t pending_pods = 0;
};

// An attributed pod: the attribution's Pod, and what the ledger adds.
struct PodRow {
  std::string cluster;
  const attribution::Pod* pod = nullptr;  // in the view's outputs; never null in a built view
  std::optional<double> idle_seconds;     // the current idle run (ledger)
  std::optional<double> energy_joules;    // the pod's counter (ledger)
};

// A whole GPU or a MIG slice: the attribution's Device, and who is attributed it.
struct DeviceRow {
  const attribution::Device* device = nullptr;  // in the view's outputs; never null
  std::vector<std::string> pods;                // "namespace/pod" attributed to it
};

// A physical GPU: the attribution's Card, and what its devices add up to.
struct CardRow {
  const attribution::Card* card = nullptr;  // in the view's outputs; never null
  bool mig = false;                         // its devices are MIG slices (else one whole GPU)
  size_t slices = 0;                        // MIG slices (devices with a gpu_instance)
  // Whole GPU: the device's. MIG: Σ of the slices' memory, GPU-equivalent-weighted mean
  // utilisation.
  std::optional<double> utilization;
  std::optional<double> memory_used_bytes;
  std::optional<double> memory_total_bytes;
  std::optional<double> temperature_celsius;
  health::State health = health::State::kUnknown;
  // MIG: the slices by instance (after a card-level device without instance when the exporter
  // has a line for the whole card); else the one whole GPU.
  std::vector<DeviceRow> devices;
};

struct NodeRow {
  std::string cluster;
  std::string node;
  std::optional<double> power_watts;
  std::optional<double> unattributed_power_watts;
  health::State health = health::State::kUnknown;
  std::optional<int64_t> capacity;  // devices, never replicas
  std::optional<int64_t> allocatable;
  int64_t requested = 0;
  std::vector<CardRow> cards;
};

// One line per card (its slices' issues together) or per node (withdrawn devices).
struct HealthRow {
  std::string cluster;
  std::string node;
  std::string gpu;  // empty for a node-level line
  std::string model;
  size_t slices = 0;  // MIG slices of the card (0 for a whole GPU or a node line)
  health::State state = health::State::kUnknown;
  std::vector<health::Issue> issues;  // card lines: critical first
  std::vector<std::string> reasons;   // node lines: why the node is not ok
};

// A pending GPU pod: the allocation's PendingPod (age, requests, hint).
struct PendingRow {
  std::string cluster;
  const allocation::PendingPod* pending = nullptr;  // in the view's outputs; never null
};

// An exporter of a cluster's discovery report (a row of the gpuattr_exporter_* families).
struct ExporterRow {
  std::string cluster;
  const discovery::ExporterStatus* status = nullptr;  // in the view's reports; never null
  uint64_t rejected_lines = 0;                        // Σ status->rejected
};

// A candidate discovery probed, with its verdict.
struct ProbeRow {
  std::string cluster;
  const discovery::ProbeRecord* probe = nullptr;  // in the view's reports; never null
  std::string candidate;  // "namespace/pod:port" or the pin (probe->candidate.Key())
  std::string outcome;    // accepted, unrecognised, error, pinned, ... (discovery::OutcomeName)
};

// One cluster's discovery: the report's summary (what was listed, probed and skipped, how the GPU
// series were read, the pins, what to do when nothing was found) and what its rows add up to.
// Its rows: StatusView::exporters[first_exporter, first_exporter + exporters) and
// StatusView::probes[first_probe, first_probe + probes).
struct DiscoveryRow {
  std::string cluster;
  const discovery::DiscoveryReport* report = nullptr;  // in the view's reports; never null
  size_t first_exporter = 0;
  size_t exporters = 0;
  size_t exporters_up = 0;
  size_t first_probe = 0;
  size_t probes = 0;
  // Candidates whose GPU body comes from a pod that may not speak for GPUs: not read.
  uint64_t untrusted = 0;
};

// "What it costs" (docs/accounting.md#on-the-status-page): each cluster's ledger cost summary
// (ledger::CostSummary, computed once per cycle) per namespace, per team and for idle, over the
// windows of ledger::kCostWindowDays. A window's cost is absent when none of its hours was priced.
struct CostRow {
  std::string cluster;
  std::string name;  // the namespace, the team, "idle" or "all cards"
  // Namespaces: its team (the first of accounting.namespace_labels), absent without that label.
  std::optional<std::string> team;
  std::vector<std::string> namespaces;  // teams: the namespaces in it, sorted
  ledger::CostWindows windows{};
};

// A card this cycle saw that no price rule matched: why a cost is missing.
struct UnpricedCardRow {
  std::string cluster;
  const attribution::Card* card = nullptr;  // in the view's outputs; never null
};

struct CostsView {
  // By hours over the longest window on the first basis shown, descending, then cluster and name.
  std::vector<CostRow> namespaces;
  std::vector<CostRow> teams;  // only when some namespace has the team label; kNoTeam last
  std::vector<CostRow> idle;   // every node's idle, one row per cluster
  std::vector<CostRow> cards;  // the cards' own hours (= Σ namespaces + idle), one per cluster
  std::vector<UnpricedCardRow> unpriced_cards;  // by cluster, then in card order
  size_t priced_cards = 0;                      // this cycle
  std::string currency;                         // of the costs; empty when nothing was priced
  std::string team_label;                       // the label naming a team; empty when none
  std::vector<accounting::Basis> bases;         // accounting.bases (the first cluster's)
  int64_t today = 0;                            // UTC day (days since 1970-01-01)
};

// A workload's rightsizing row (rightsizing::WorkloadView, docs/rightsizing.md).
struct RightsizingRow {
  std::string cluster;
  const rightsizing::WorkloadView* workload = nullptr;  // in the view's outputs; never null
  std::string currency;  // of reclaimable_cost_per_hour, when it is known
};

struct RightsizingTotals {
  size_t workloads = 0;
  double reclaimable_gpu_equivalents = 0;
  std::optional<double> reclaimable_cost_per_hour;  // Σ of the priced workloads'; absent if none
  std::string currency;
};

// Rows of the long lists (rightsizing, costs) the page, the table and the Markdown report show;
// the JSON snapshot has them all.
inline constexpr size_t kRowsShown = 20;

struct StatusView {
  double generated_unix = 0;  // the `now` it was built for
  bool complete = false;      // false before the first cycle ended
  std::string metrics_path = "/metrics";
  double refresh_seconds = 0;
  Totals totals;
  std::vector<ClusterRow> clusters;
  std::vector<NamespaceRow> namespaces;  // by GPU-equivalents, then power, descending
  std::vector<PodRow> idle;              // idle pods by memory held, descending
  std::vector<PodRow> top_by_power;      // at most ViewOptions::top_pods
  std::vector<PodRow> top_by_memory;
  std::vector<PodRow> pods;  // every attributed pod, by cluster and name
  std::vector<NodeRow> nodes;
  std::vector<HealthRow> health;  // critical first, then warning; by cluster, node, card
  std::vector<PendingRow> pending;
  std::vector<ExporterRow> exporters;   // by cluster, then as the report lists them
  std::vector<ProbeRow> probes;         // by cluster, then as the report lists them
  std::vector<DiscoveryRow> discovery;  // one per cluster whose discovery ran
  CostsView costs;
  // By reclaimable GPU-equivalents descending, then cluster, namespace, kind and name.
  std::vector<RightsizingRow> rightsizing;
  RightsizingTotals rightsizing_totals;
  bool multi_cluster = false;  // more than one cluster: outputs show a cluster column

  // What the rows point into: every cluster's cycle output and discovery report, held here so
  // that the view stays valid on its own (rows point at the model's types instead of copying).
  std::vector<std::shared_ptr<const model::CycleOutput>> outputs;
  std::vector<std::shared_ptr<const discovery::DiscoveryReport>> reports;
};

StatusView BuildStatusView(const model::Snapshot& snapshot, double now_unix,
                           const ViewOptions& options);

// The discovery rows of one report alone (tests, and the page's section for it); `report` must
// outlive the view.
StatusView BuildDiscoveryView(const discovery::DiscoveryReport& report, double now_unix);

}  // namespace gpuattr::report
