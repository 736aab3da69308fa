// The answer at a glance: one pure view of a Snapshot — whose GPUs, who holds them idle, the top
// pods, devices by node, health per card, pending pods, exporters — built once and rendered by the
// status page (status_page.h), the terminal table, the JSON snapshot and the Markdown incident
// report (outputs.h). Every output reads the same rows, so they never disagree.
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
#include "gpuattr/publish/snapshot.h"

namespace gpuattr::publish {

struct ViewOptions {
  size_t top_pods = 10;        // rows of each "top pods" list
  double refresh_seconds = 0;  // the page reloads itself this often (the cycle interval); 0: never
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

struct PodRow {
  std::string cluster;
  kube::PodId pod;
  std::string node;
  size_t devices = 0;
  double gpu_equivalents = 0;
  std::optional<double> utilization;
  std::optional<double> memory_used_bytes;
  std::optional<double> memory_total_bytes;
  std::optional<double> power_watts;
  std::optional<bool> idle;
  std::optional<double> idle_seconds;   // the current idle run (ledger)
  std::optional<double> energy_joules;  // the pod's counter (ledger)
  std::string method;                   // process, dcgm_pod, even_split
  bool unrequested_gpu_use = false;
};

// A whole GPU or a MIG slice.
struct DeviceRow {
  std::optional<std::string> gpu_instance;  // the slice's GPU_I_ID
  std::string mig_profile;                  // "1g.10gb", empty for a whole GPU
  double gpu_equivalents = 1;
  std::optional<double> utilization;
  std::optional<double> memory_used_bytes;
  std::optional<double> memory_total_bytes;
  std::optional<double> power_watts;
  std::optional<double> temperature_celsius;
  std::vector<std::string> pods;        // "namespace/pod" attributed to it
  std::vector<std::string> candidates;  // possible owners when the exporter names no pod
};

struct CardRow {
  std::string gpu;  // card index
  std::string uuid;
  std::string model;
  bool mig = false;   // its devices are MIG slices (else one whole GPU)
  size_t slices = 0;  // MIG slices (devices with a gpu_instance)
  std::optional<double> power_watts;
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

struct PendingRow {
  std::string cluster;
  kube::PodId pod;
  std::optional<double> age_seconds;
  allocation::ResourceCounts requested;
  allocation::Hint hint;
};

struct ExporterRow {
  std::string cluster;
  std::string namespace_;
  std::string pod;
  std::string node;
  std::string kind;
  bool up = false;
  std::string reason;
  double duration_seconds = 0;
  uint64_t bytes = 0;
  uint64_t parse_errors = 0;
};

struct ProbeRow {
  std::string cluster;
  std::string candidate;  // "namespace/pod:port" or the pin
  std::string node;
  std::string outcome;  // accepted, unrecognised, error, pinned, ... (discovery::OutcomeName)
  std::string reason;
};

struct StatusView {
  double generated_unix = 0;  // the `now` it was built for
  bool complete = false;      // false before the first cycle ended
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
  std::vector<ExporterRow> exporters;
  std::vector<ProbeRow> probes;
  // The discovery report of each cluster that has one (behind exporters and probes), for the
  // page's detailed section.
  struct Discovery {
    std::string cluster;
    std::shared_ptr<const discovery::DiscoveryReport> report;
  };
  std::vector<Discovery> discovery;
  bool multi_cluster = false;  // more than one cluster: outputs show a cluster column
};

StatusView BuildStatusView(const Snapshot& snapshot, double now_unix, const ViewOptions& options);

}  // namespace gpuattr::publish
