// The one table of every spelling the exporters use (docs/design.md#sources): label names, dcgm
// field names across dcgm-exporter generations (1.x lower-case, classic DCGM_FI_*, 4.9 base-unit
// names), per-process exporter families and inference server families, each with its unit.
//
// Readers look names up here and nowhere else, so a new spelling is a one-line change.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace gpuattr::sources {

// ---- Labels ---------------------------------------------------------------------------------

// What a label means, whatever it is called.
enum class LabelKey : uint8_t {
  kGpu,             // gpu: card index (on MIG lines the parent card)
  kUuid,            // UUID | uuid (parent card UUID on MIG lines)
  kPciBusId,        // pci_bus_id
  kDevice,          // device: nvidiaN
  kModel,           // modelName
  kMigProfile,      // GPU_I_PROFILE
  kGpuInstance,     // GPU_I_ID
  kHostname,        // Hostname | hostname
  kDriverVersion,   // DCGM_FI_DRIVER_VERSION | DCGM_FI_SYSTEM_DRIVER_VERSION
  kNamespace,       // namespace | pod_namespace
  kPod,             // pod | pod_name
  kContainer,       // container | container_name
  kPodUid,          // pod_uid
  kVgpu,            // vgpu (time-slicing replica)
  kErrCode,         // err_code (on XID lines)
  kErrMsg,          // err_msg (on XID lines)
  kXid,             // xid (on DCGM_EXP_XID_ERRORS_COUNT)
  kPid,             // pid (per-process exporters)
  kModelName,       // model_name (inference servers)
  kEngine,          // engine (vLLM) | dp_rank (SGLang): data-parallel engine index
  kFinishedReason,  // finished_reason (vllm:request_success_total)
};

struct LabelAlias {
  std::string_view spelling;
  LabelKey key;
};

// Every accepted label spelling, in priority order within a key (the first spelling listed
// wins when a line carries two spellings of one key with non-empty values).
struct LabelMatch {
  LabelKey key;
  int rank;  // of the spelling within its key, 0 = preferred
};
// The meaning of a label name (exact, case-sensitive: `UUID` and `uuid` are both listed).
std::optional<LabelMatch> LookupLabel(std::string_view label_name);
std::optional<LabelKey> LabelKeyOf(std::string_view label_name);
std::string_view LabelKeyName(LabelKey key);  // "gpu", "uuid", ... for dumps and messages

// ---- Units ----------------------------------------------------------------------------------

enum class Unit : uint8_t {
  kRatio,        // 0..1, kept
  kPercent,      // 0..100 → ratio
  kMebibytes,    // MiB → bytes
  kBytes,        // kept
  kWatts,        // kept
  kMillijoules,  // mJ → joules
  kJoules,       // kept
  kCelsius,      // kept
  kSeconds,      // kept
  kCount,        // a number or a code (XID, bitmask, status), kept
};

// Converts `value` in `unit` to the base unit (bytes, watts, joules, ratio, °C, seconds).
double ToBaseUnit(Unit unit, double value);
std::string_view UnitName(Unit unit);

// ---- dcgm-exporter fields -------------------------------------------------------------------

enum class DcgmField : uint8_t {
  kGpuUtil,                    // GPU_UTIL (%), GPU_UTIL_RATIO → ratio
  kGrEngineActive,             // PROF_GR_ENGINE_ACTIVE | PROF_GR_ENGINE_UTIL_RATIO
  kSmActive,                   // PROF_SM_ACTIVE | PROF_SM_UTIL_RATIO
  kSmOccupancy,                // PROF_SM_OCCUPANCY | PROF_SM_OCCUPANCY_RATIO
  kTensorActive,               // PROF_PIPE_TENSOR_ACTIVE | PROF_TENSOR_UTIL_RATIO
  kDramActive,                 // PROF_DRAM_ACTIVE | PROF_DRAM_UTIL_RATIO
  kMemoryUsed,                 // FB_USED (MiB) | FB_USED_BYTES
  kMemoryFree,                 // FB_FREE (MiB) | FB_FREE_BYTES
  kMemoryTotal,                // FB_TOTAL (MiB) | FB_CAPACITY_BYTES
  kMemoryReserved,             // FB_RESERVED (MiB) | FB_RESERVED_BYTES
  kPower,                      // POWER_USAGE | BOARD_POWER_WATTS
  kEnergy,                     // TOTAL_ENERGY_CONSUMPTION (mJ) | GPU_ENERGY_JOULES_TOTAL
  kTemperature,                // GPU_TEMP | GPU_TEMP_CELSIUS
  kLastXid,                    // XID_ERRORS | XID_ERROR: the last XID, not a count
  kEccDbeVolatile,             // ECC_DBE_VOL_TOTAL
  kRowRemapFailure,            // ROW_REMAP_FAILURE | ROW_REMAP_FAILED
  kUncorrectableRemappedRows,  // UNCORRECTABLE_REMAPPED_ROWS | ROW_REMAP_UNCORRECTABLE_TOTAL
  kRowRemapPending,            // ROW_REMAP_PENDING
  kClocksEventReasons,         // CLOCK_THROTTLE_REASONS | CLOCKS_EVENT_REASONS (bitmask)
  kHealthStatus,               // DCGM_EXP_GPU_HEALTH_STATUS (0 pass, 10 warn, 20 fail)
  kXidErrorsCount,             // DCGM_EXP_XID_ERRORS_COUNT{xid}
};
inline constexpr int kDcgmFieldCount = static_cast<int>(DcgmField::kXidErrorsCount) + 1;

struct DcgmFieldAlias {
  std::string_view name;  // as exported (matched case-insensitively)
  DcgmField field;
  Unit unit;
};

std::span<const DcgmFieldAlias> DcgmFieldAliases();
// The field behind a family name, matched case-insensitively (the 1.x compatibility mode also
// emits lower-cased classic names such as `dcgm_fi_prof_gr_engine_active`).
std::optional<DcgmFieldAlias> LookupDcgmField(std::string_view family);
// True for any family dcgm-exporter emits (DCGM_FI_*, DCGM_EXP_*, 1.x `dcgm_*`), used or not.
bool IsDcgmFamily(std::string_view family);
std::string_view DcgmFieldName(DcgmField field);  // "gpu_util", "memory_used_bytes", ...

// ---- Per-process exporters ------------------------------------------------------------------

enum class ProcessMetric : uint8_t {
  kProcessMemory,       // gpu_process_memory_bytes{namespace,pod,container,uuid,gpu,pid}, and
                        // HAMi's per-container hami_vgpu_memory_used_bytes
  kProcessUtilization,  // gpu_process_utilization_percent{...}
  kDeviceMemoryTotal,   // gpu_total_memory_bytes{uuid}
  kDeviceUtilization,   // gpu_total_utilization_percent{uuid}
  kDevicePower,         // gpu_power_usage_watts{uuid}
  kDeviceTemperature,   // gpu_temperature_celsius{uuid}
};

struct ProcessMetricAlias {
  std::string_view name;
  ProcessMetric metric;
  Unit unit;
};

std::span<const ProcessMetricAlias> ProcessMetricAliases();
std::optional<ProcessMetricAlias> LookupProcessMetric(std::string_view family);
// Any family of HAMi's vGPU monitor (hami_*, and its legacy names), read or not.
bool IsHamiMonitorFamily(std::string_view family);

// ---- Inference servers ----------------------------------------------------------------------

enum class EngineKind : uint8_t { kVllm, kSglang };
std::string_view EngineKindName(EngineKind kind);  // "vllm", "sglang"

enum class InferenceMetric : uint8_t {
  kKvCacheUsage,        // ratio 0..1 (vLLM kv_cache_usage_perc / gpu_cache_usage_perc, SGLang
                        // token_usage)
  kRequestsRunning,     // gauge
  kRequestsWaiting,     // gauge
  kGenThroughput,       // SGLang gen_throughput (tokens/s), gauge
  kPromptTokens,        // counter
  kGenerationTokens,    // counter
  kPreemptions,         // counter
  kPrefixCacheHits,     // counter (tokens)
  kPrefixCacheQueries,  // counter (tokens)
  kRequestSuccess,      // counter, by finished_reason
  kTtftSum,             // histogram _sum (seconds)
  kTtftCount,           // histogram _count
};

struct InferenceMetricAlias {
  std::string_view name;  // full sample name, e.g. "vllm:time_to_first_token_seconds_sum"
  EngineKind engine;
  InferenceMetric metric;
  Unit unit;
};

std::optional<InferenceMetricAlias> LookupInferenceMetric(std::string_view sample_name);

}  // namespace gpuattr::sources
