// Normalised readings: what the exporters said, in base units, grouped by identity, with no
// attribution decided (no max or sum across records). Plain structs; strings are owned so that
// readings outlive the scraped body.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "gpuattr/kube/pod_id.h"
#include "gpuattr/sources/aliases.h"

namespace gpuattr::sources {

// A whole GPU or a MIG slice as dcgm-exporter names it. The identity is (hostname, gpu,
// gpu_instance, uuid); the rest are attributes taken from whichever line carries them
// (dcgm-exporter omits e.g. modelName on some families).
struct DeviceKey {
  std::string gpu;                          // card index; on MIG lines the parent card
  std::optional<std::string> gpu_instance;  // GPU_I_ID; absent for whole GPUs ("0" is valid)
  std::string uuid;                         // card UUID; on MIG lines the parent card's
  std::string hostname;                     // Hostname|hostname label (may be the exporter pod)
  // Attributes
  std::string mig_profile;  // GPU_I_PROFILE, e.g. "1g.10gb"
  std::string model;        // modelName
  std::string pci_bus_id;
  std::string device;  // nvidiaN
};

// The pod a line is labelled with. Empty label values count as absent; a reading has PodLabels
// only when at least namespace or pod is present.
struct PodLabels {
  kube::PodId id;
  std::string container;
  std::string pod_uid;  // dcgm-exporter's per-pod FB_USED/GPU_UTIL lines (with vgpu)
  std::string vgpu;     // time-slicing replica with --kubernetes-virtual-gpus

  bool operator==(const PodLabels&) const = default;
};

// Every field in base units; absent means the exporter did not say.
struct DcgmValues {
  std::optional<double> gpu_util;          // ratio: GPU_UTIL/100 (never the PROF fallback)
  std::optional<double> gr_engine_active;  // ratio
  std::optional<double> sm_active;         // ratio
  std::optional<double> sm_occupancy;      // ratio
  std::optional<double> tensor_active;     // ratio
  std::optional<double> dram_active;       // ratio
  std::optional<double> memory_used_bytes;
  std::optional<double> memory_free_bytes;
  std::optional<double> memory_total_bytes;
  std::optional<double> memory_reserved_bytes;
  std::optional<double> power_watts;
  std::optional<double> energy_joules;  // counter since driver load
  std::optional<double> temperature_celsius;
  std::optional<double> last_xid;  // the last XID seen, not a count
  std::optional<double> ecc_dbe_volatile;
  std::optional<double> row_remap_failure;
  std::optional<double> uncorrectable_remapped_rows;
  std::optional<double> row_remap_pending;
  std::optional<double> clocks_event_reasons;  // bitmask
  std::optional<double> health_status;         // worst of the lines: 0 pass, 10 warn, 20 fail

  bool operator==(const DcgmValues&) const = default;

  // The slot of a field (kXidErrorsCount has none: it lives in DcgmRecord::xid_error_counts).
  std::optional<double>* Slot(DcgmField field);
  const std::optional<double>* Slot(DcgmField field) const;
};

// One identity's lines: a device, optionally labelled with one pod (or one pod replica).
struct DcgmRecord {
  DeviceKey device;
  std::optional<PodLabels> pod;
  std::string driver_version;  // DCGM_FI_DRIVER_VERSION | DCGM_FI_SYSTEM_DRIVER_VERSION label
  DcgmValues values;
  std::string xid_err_code;  // err_code/err_msg labels of the XID line, when present
  std::string xid_err_msg;
  std::map<int, double> xid_error_counts;  // DCGM_EXP_XID_ERRORS_COUNT by xid label
  uint32_t first_line = 0;                 // where the identity first appeared (diagnostics)
};

// What a reader skipped, for logs, the status page and parse-error counters.
struct ReadStats {
  size_t samples = 0;            // samples looked at
  size_t samples_used = 0;       // samples that set a value
  size_t ignored_families = 0;   // recognised families this reader does not use (e.g. SM_CLOCK)
  size_t unknown_families = 0;   // families of another kind (go_*, process_*, ...)
  size_t invalid_values = 0;     // NaN/±Inf values, unparseable xid labels: treated as absent
  size_t duplicate_samples = 0;  // same identity and field twice: the first one is kept
  size_t unkeyed_samples = 0;    // no gpu, no uuid (or no uuid for process lines): unusable
  std::vector<std::string> ignored_family_names;  // first few, for diagnostics
  std::vector<std::string> unknown_family_names;  // first few, for diagnostics
  std::map<std::string, uint64_t> rejected;       // lines dropped, by reason
                                                  // (docs/design.md#rejected-lines)
};
inline constexpr size_t kMaxFamilyNamesKept = 16;

struct DcgmReadings {
  std::vector<DcgmRecord> records;  // in order of first appearance
  ReadStats stats;
};

// ---- Per-process exporters ------------------------------------------------------------------

// One process on one GPU, as the per-process exporter labels it.
struct ProcessReading {
  std::optional<PodLabels> pod;  // namespace, pod, container; absent for processes of no pod
  std::string uuid;
  std::string gpu;
  std::string pid;
  std::optional<double> memory_bytes;
  std::optional<double> utilization;  // ratio: percent/100
  uint32_t first_line = 0;
};

// A device as the per-process exporter sees it (lower-case `uuid`).
struct ProcessDeviceReading {
  std::string uuid;
  std::string gpu;
  std::optional<double> memory_total_bytes;
  std::optional<double> utilization;  // ratio
  std::optional<double> power_watts;
  std::optional<double> temperature_celsius;
  uint32_t first_line = 0;
};

struct ProcessReadings {
  std::vector<ProcessReading> processes;  // keyed by (namespace, pod, container, uuid, gpu, pid)
  std::vector<ProcessDeviceReading> devices;  // keyed by (uuid, gpu)
  ReadStats stats;
};

// ---- Inference servers ----------------------------------------------------------------------

// One model served by one server pod, summed over its data-parallel engines.
struct InferenceReading {
  EngineKind kind = EngineKind::kVllm;
  std::string model;       // last path segment of model_name
  std::string model_name;  // as exported
  size_t engines = 0;      // distinct engine label values seen (1 when unlabelled)

  // Gauges. Request counts and throughput are summed over engines; KV-cache usage is the max over
  // engines (each engine has its own cache, so the fullest one is what saturates).
  std::optional<double> kv_cache_usage;  // ratio
  std::optional<double> requests_running;
  std::optional<double> requests_waiting;
  std::optional<double> gen_throughput;  // SGLang tokens/s

  // Counters, summed over engines.
  std::optional<double> prompt_tokens_total;
  std::optional<double> generation_tokens_total;
  std::optional<double> preemptions_total;
  std::optional<double> prefix_cache_hits_total;
  std::optional<double> prefix_cache_queries_total;
  std::map<std::string, double> request_success_total;  // by finished_reason
  std::optional<double> ttft_seconds_sum;
  std::optional<double> ttft_count;
};

struct InferenceReadings {
  std::vector<InferenceReading> models;  // in order of first appearance
  ReadStats stats;
};

// ---- One exporter's readings -----------------------------------------------------------------

using Readings = std::variant<DcgmReadings, ProcessReadings, InferenceReadings>;

// What one exporter said in one cycle and who said it: one per scraped pod, or one per node and
// kind from a query API. Discovery makes them; attribution reads the dcgm and process ones,
// inference the inference ones, all from the same vector (nothing is copied between stages).
struct ExporterReadings {
  std::string namespace_;  // the exporter pod (a query API: its service's namespace)
  std::string pod;         // the exporter pod (a query API: the service)
  // The exporter pod's spec.nodeName (a query API: the series' node). When empty, attribution
  // looks the pod up in the cluster objects, and only then uses dcgm's hostname label.
  std::string node;
  Readings readings;
  // Provenance, for the vetting (trust/vet.h): a pinned exporter wins a device UUID that two
  // exporters report, then one a trust rule names, then a DaemonSet's (`rank`, trust::Rank:
  // 0 pinned, 1 trust rule, 2 DaemonSet in an exporter namespace); only a pinned exporter may
  // report more cards than its node advertises; a query API's node must be a node of the cluster.
  bool pinned = false;
  bool from_query_api = false;
  uint8_t rank = 2;
};

// The stats of whichever kind of readings this is.
ReadStats& StatsOf(Readings& readings);
const ReadStats& StatsOf(const Readings& readings);

}  // namespace gpuattr::sources
