#include "gpuattr/sources/aliases.h"

#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuattr/util/strings.h"

namespace gpuattr::sources {
namespace {

constexpr LabelAlias kLabelAliases[] = {
    {"gpu", LabelKey::kGpu},
    {"UUID", LabelKey::kUuid},
    {"uuid", LabelKey::kUuid},
    {"device_uuid", LabelKey::kUuid},  // HAMi's vGPU monitor (v2.9+); `deviceuuid` before
    {"deviceuuid", LabelKey::kUuid},
    {"pci_bus_id", LabelKey::kPciBusId},
    {"device", LabelKey::kDevice},
    {"modelName", LabelKey::kModel},
    {"GPU_I_PROFILE", LabelKey::kMigProfile},
    {"GPU_I_ID", LabelKey::kGpuInstance},
    {"Hostname", LabelKey::kHostname},
    {"hostname", LabelKey::kHostname},
    {"DCGM_FI_DRIVER_VERSION", LabelKey::kDriverVersion},
    {"DCGM_FI_SYSTEM_DRIVER_VERSION", LabelKey::kDriverVersion},
    {"namespace", LabelKey::kNamespace},
    {"pod_namespace", LabelKey::kNamespace},
    {"podnamespace", LabelKey::kNamespace},  // HAMi's legacy monitor names (--legacy-metrics)
    {"pod", LabelKey::kPod},
    {"pod_name", LabelKey::kPod},
    {"podname", LabelKey::kPod},
    {"container", LabelKey::kContainer},
    {"container_name", LabelKey::kContainer},
    {"ctrname", LabelKey::kContainer},
    {"pod_uid", LabelKey::kPodUid},
    {"vgpu", LabelKey::kVgpu},
    {"err_code", LabelKey::kErrCode},
    {"err_msg", LabelKey::kErrMsg},
    {"xid", LabelKey::kXid},
    {"pid", LabelKey::kPid},
    {"model_name", LabelKey::kModelName},
    {"engine", LabelKey::kEngine},
    {"dp_rank", LabelKey::kEngine},
    {"finished_reason", LabelKey::kFinishedReason},
};

constexpr std::string_view kLabelKeyNames[] = {
    "gpu",          "uuid",     "pci_bus_id",      "device",    "model", "mig_profile",
    "gpu_instance", "hostname", "driver_version",  "namespace", "pod",   "container",
    "pod_uid",      "vgpu",     "err_code",        "err_msg",   "xid",   "pid",
    "model_name",   "engine",   "finished_reason",
};
static_assert(std::size(kLabelKeyNames) == static_cast<size_t>(LabelKey::kFinishedReason) + 1);

// Classic names (dcgm-exporter ≤ 4.8), the DCGM 4.7 names that dcgm-exporter 4.9 emits in base
// units, and the 1.x compatibility names. Matching is case-insensitive, which also covers the
// lower-cased classic names (`dcgm_fi_prof_gr_engine_active`) of the 1.x mode.
constexpr DcgmFieldAlias kDcgmFieldAliases[] = {
    // Utilisation
    {"DCGM_FI_DEV_GPU_UTIL", DcgmField::kGpuUtil, Unit::kPercent},
    {"DCGM_FI_DEV_GPU_UTIL_RATIO", DcgmField::kGpuUtil, Unit::kRatio},
    {"dcgm_gpu_utilization", DcgmField::kGpuUtil, Unit::kPercent},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", DcgmField::kGrEngineActive, Unit::kRatio},
    {"DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO", DcgmField::kGrEngineActive, Unit::kRatio},
    {"dcgm_gr_engine_active", DcgmField::kGrEngineActive, Unit::kRatio},
    {"DCGM_FI_PROF_SM_ACTIVE", DcgmField::kSmActive, Unit::kRatio},
    {"DCGM_FI_PROF_SM_UTIL_RATIO", DcgmField::kSmActive, Unit::kRatio},
    {"dcgm_sm_active", DcgmField::kSmActive, Unit::kRatio},
    {"DCGM_FI_PROF_SM_OCCUPANCY", DcgmField::kSmOccupancy, Unit::kRatio},
    {"DCGM_FI_PROF_SM_OCCUPANCY_RATIO", DcgmField::kSmOccupancy, Unit::kRatio},
    {"dcgm_sm_occupancy", DcgmField::kSmOccupancy, Unit::kRatio},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", DcgmField::kTensorActive, Unit::kRatio},
    {"DCGM_FI_PROF_TENSOR_UTIL_RATIO", DcgmField::kTensorActive, Unit::kRatio},
    {"dcgm_tensor_active", DcgmField::kTensorActive, Unit::kRatio},
    {"DCGM_FI_PROF_DRAM_ACTIVE", DcgmField::kDramActive, Unit::kRatio},
    {"DCGM_FI_PROF_DRAM_UTIL_RATIO", DcgmField::kDramActive, Unit::kRatio},
    {"dcgm_dram_active", DcgmField::kDramActive, Unit::kRatio},
    // Framebuffer memory
    {"DCGM_FI_DEV_FB_USED", DcgmField::kMemoryUsed, Unit::kMebibytes},
    {"DCGM_FI_DEV_FB_USED_BYTES", DcgmField::kMemoryUsed, Unit::kBytes},
    {"dcgm_fb_used", DcgmField::kMemoryUsed, Unit::kMebibytes},
    {"DCGM_FI_DEV_FB_FREE", DcgmField::kMemoryFree, Unit::kMebibytes},
    {"DCGM_FI_DEV_FB_FREE_BYTES", DcgmField::kMemoryFree, Unit::kBytes},
    {"dcgm_fb_free", DcgmField::kMemoryFree, Unit::kMebibytes},
    {"DCGM_FI_DEV_FB_TOTAL", DcgmField::kMemoryTotal, Unit::kMebibytes},
    {"DCGM_FI_DEV_FB_CAPACITY_BYTES", DcgmField::kMemoryTotal, Unit::kBytes},
    {"DCGM_FI_DEV_FB_TOTAL_BYTES", DcgmField::kMemoryTotal, Unit::kBytes},
    {"dcgm_fb_total", DcgmField::kMemoryTotal, Unit::kMebibytes},
    {"DCGM_FI_DEV_FB_RESERVED", DcgmField::kMemoryReserved, Unit::kMebibytes},
    {"DCGM_FI_DEV_FB_RESERVED_BYTES", DcgmField::kMemoryReserved, Unit::kBytes},
    {"dcgm_fb_reserved", DcgmField::kMemoryReserved, Unit::kMebibytes},
    // Power, energy, temperature
    {"DCGM_FI_DEV_POWER_USAGE", DcgmField::kPower, Unit::kWatts},
    {"DCGM_FI_DEV_BOARD_POWER_WATTS", DcgmField::kPower, Unit::kWatts},
    {"dcgm_power_usage", DcgmField::kPower, Unit::kWatts},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", DcgmField::kEnergy, Unit::kMillijoules},
    {"DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL", DcgmField::kEnergy, Unit::kJoules},
    {"dcgm_total_energy_consumption", DcgmField::kEnergy, Unit::kMillijoules},
    {"DCGM_FI_DEV_GPU_TEMP", DcgmField::kTemperature, Unit::kCelsius},
    {"DCGM_FI_DEV_GPU_TEMP_CELSIUS", DcgmField::kTemperature, Unit::kCelsius},
    {"dcgm_gpu_temp", DcgmField::kTemperature, Unit::kCelsius},
    // Health
    {"DCGM_FI_DEV_XID_ERRORS", DcgmField::kLastXid, Unit::kCount},
    {"DCGM_FI_DEV_XID_ERROR", DcgmField::kLastXid, Unit::kCount},
    {"dcgm_xid_errors", DcgmField::kLastXid, Unit::kCount},
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", DcgmField::kEccDbeVolatile, Unit::kCount},
    {"dcgm_ecc_dbe_volatile_total", DcgmField::kEccDbeVolatile, Unit::kCount},
    {"DCGM_FI_DEV_ROW_REMAP_FAILURE", DcgmField::kRowRemapFailure, Unit::kCount},
    {"DCGM_FI_DEV_ROW_REMAP_FAILED", DcgmField::kRowRemapFailure, Unit::kCount},
    {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", DcgmField::kUncorrectableRemappedRows,
     Unit::kCount},
    {"DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL", DcgmField::kUncorrectableRemappedRows,
     Unit::kCount},
    {"DCGM_FI_DEV_ROW_REMAP_PENDING", DcgmField::kRowRemapPending, Unit::kCount},
    {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", DcgmField::kClocksEventReasons, Unit::kCount},
    {"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", DcgmField::kClocksEventReasons, Unit::kCount},
    {"dcgm_clock_throttle_reasons", DcgmField::kClocksEventReasons, Unit::kCount},
    {"DCGM_EXP_GPU_HEALTH_STATUS", DcgmField::kHealthStatus, Unit::kCount},
    {"DCGM_EXP_XID_ERRORS_COUNT", DcgmField::kXidErrorsCount, Unit::kCount},
};

constexpr std::string_view kDcgmFieldNames[kDcgmFieldCount] = {
    "gpu_util",
    "gr_engine_active",
    "sm_active",
    "sm_occupancy",
    "tensor_active",
    "dram_active",
    "memory_used_bytes",
    "memory_free_bytes",
    "memory_total_bytes",
    "memory_reserved_bytes",
    "power_watts",
    "energy_joules",
    "temperature_celsius",
    "last_xid",
    "ecc_dbe_volatile",
    "row_remap_failure",
    "uncorrectable_remapped_rows",
    "row_remap_pending",
    "clocks_event_reasons",
    "health_status",
    "xid_errors_count",
};

constexpr ProcessMetricAlias kProcessMetricAliases[] = {
    {"gpu_process_memory_bytes", ProcessMetric::kProcessMemory, Unit::kBytes},
    {"gpu_process_utilization_percent", ProcessMetric::kProcessUtilization, Unit::kPercent},
    {"gpu_total_memory_bytes", ProcessMetric::kDeviceMemoryTotal, Unit::kBytes},
    {"gpu_total_utilization_percent", ProcessMetric::kDeviceUtilization, Unit::kPercent},
    {"gpu_power_usage_watts", ProcessMetric::kDevicePower, Unit::kWatts},
    {"gpu_temperature_celsius", ProcessMetric::kDeviceTemperature, Unit::kCelsius},
    // HAMi's vGPU monitor (cmd/vGPUmonitor/metrics.go, HAMi v2.10.0; v2.9.0 introduced the
    // hami_* names, the CamelCase ones are the earlier names it still emits with
    // --legacy-metrics). A container's memory on one card is a per-pod memory reading like a
    // process's, keyed by namespace/pod/container and device_uuid; `vdevice_index` is the
    // container's own device index, not the card's, so it is not read. The utilisations are
    // percent despite the `_ratio` names (NVML's 0-100 values, summed over the container's
    // processes for the container one).
    {"hami_vgpu_memory_used_bytes", ProcessMetric::kProcessMemory, Unit::kBytes},
    {"vGPU_device_memory_usage_in_bytes", ProcessMetric::kProcessMemory, Unit::kBytes},
    {"hami_container_device_utilization_ratio", ProcessMetric::kProcessUtilization, Unit::kPercent},
    {"Device_utilization_desc_of_container", ProcessMetric::kProcessUtilization, Unit::kPercent},
    {"hami_host_gpu_utilization_ratio", ProcessMetric::kDeviceUtilization, Unit::kPercent},
    {"HostCoreUtilization", ProcessMetric::kDeviceUtilization, Unit::kPercent},
};

// The rest of what HAMi's vGPU monitor emits (same source and version): counted as ignored,
// not unknown, in a body read as a per-process one.
constexpr std::string_view kHamiMonitorOtherFamilies[] = {
    "HostGPUMemoryUsage",
    "vGPU_device_memory_limit_in_bytes",
    "Device_memory_desc_of_container",
    "Device_last_kernel_of_container",
    "MigInfo",
};

constexpr InferenceMetricAlias kInferenceMetricAliases[] = {
    // vLLM v1
    {"vllm:kv_cache_usage_perc", EngineKind::kVllm, InferenceMetric::kKvCacheUsage, Unit::kRatio},
    {"vllm:num_requests_running", EngineKind::kVllm, InferenceMetric::kRequestsRunning,
     Unit::kCount},
    {"vllm:num_requests_waiting", EngineKind::kVllm, InferenceMetric::kRequestsWaiting,
     Unit::kCount},
    {"vllm:prompt_tokens_total", EngineKind::kVllm, InferenceMetric::kPromptTokens, Unit::kCount},
    {"vllm:generation_tokens_total", EngineKind::kVllm, InferenceMetric::kGenerationTokens,
     Unit::kCount},
    {"vllm:num_preemptions_total", EngineKind::kVllm, InferenceMetric::kPreemptions, Unit::kCount},
    {"vllm:prefix_cache_hits_total", EngineKind::kVllm, InferenceMetric::kPrefixCacheHits,
     Unit::kCount},
    {"vllm:prefix_cache_queries_total", EngineKind::kVllm, InferenceMetric::kPrefixCacheQueries,
     Unit::kCount},
    {"vllm:request_success_total", EngineKind::kVllm, InferenceMetric::kRequestSuccess,
     Unit::kCount},
    {"vllm:time_to_first_token_seconds_sum", EngineKind::kVllm, InferenceMetric::kTtftSum,
     Unit::kSeconds},
    {"vllm:time_to_first_token_seconds_count", EngineKind::kVllm, InferenceMetric::kTtftCount,
     Unit::kCount},
    // vLLM v0 and early v1 spellings
    {"vllm:gpu_cache_usage_perc", EngineKind::kVllm, InferenceMetric::kKvCacheUsage, Unit::kRatio},
    {"vllm:gpu_prefix_cache_hits_total", EngineKind::kVllm, InferenceMetric::kPrefixCacheHits,
     Unit::kCount},
    {"vllm:gpu_prefix_cache_queries_total", EngineKind::kVllm, InferenceMetric::kPrefixCacheQueries,
     Unit::kCount},
    // SGLang
    {"sglang:token_usage", EngineKind::kSglang, InferenceMetric::kKvCacheUsage, Unit::kRatio},
    {"sglang:num_running_reqs", EngineKind::kSglang, InferenceMetric::kRequestsRunning,
     Unit::kCount},
    {"sglang:num_queue_reqs", EngineKind::kSglang, InferenceMetric::kRequestsWaiting, Unit::kCount},
    {"sglang:gen_throughput", EngineKind::kSglang, InferenceMetric::kGenThroughput, Unit::kCount},
    {"sglang:prompt_tokens_total", EngineKind::kSglang, InferenceMetric::kPromptTokens,
     Unit::kCount},
    {"sglang:generation_tokens_total", EngineKind::kSglang, InferenceMetric::kGenerationTokens,
     Unit::kCount},
    {"sglang:time_to_first_token_seconds_sum", EngineKind::kSglang, InferenceMetric::kTtftSum,
     Unit::kSeconds},
    {"sglang:time_to_first_token_seconds_count", EngineKind::kSglang, InferenceMetric::kTtftCount,
     Unit::kCount},
};

template <typename Alias>
const Alias* FindExact(std::span<const Alias> table, std::string_view name) {
  for (const Alias& a : table) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

}  // namespace

std::optional<LabelMatch> LookupLabel(std::string_view label_name) {
  // Runs for every label of every sample: bucket the table by name length once.
  constexpr size_t kMaxLen = 32;
  struct Buckets {
    std::array<std::vector<LabelMatch>, kMaxLen> matches;
    std::array<std::vector<std::string_view>, kMaxLen> names;
  };
  static const Buckets kBuckets = [] {
    Buckets b;
    std::array<int, std::size(kLabelKeyNames)> seen{};  // spellings seen so far per key
    for (const LabelAlias& a : kLabelAliases) {
      const int k = static_cast<int>(a.key);
      b.matches[a.spelling.size()].push_back(LabelMatch{a.key, seen[k]++});
      b.names[a.spelling.size()].push_back(a.spelling);
    }
    return b;
  }();
  if (label_name.size() >= kMaxLen) return std::nullopt;
  const auto& names = kBuckets.names[label_name.size()];
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == label_name) return kBuckets.matches[label_name.size()][i];
  }
  return std::nullopt;
}

std::optional<LabelKey> LabelKeyOf(std::string_view label_name) {
  if (auto m = LookupLabel(label_name)) return m->key;
  return std::nullopt;
}

std::string_view LabelKeyName(LabelKey key) { return kLabelKeyNames[static_cast<int>(key)]; }

double ToBaseUnit(Unit unit, double value) {
  switch (unit) {
    case Unit::kPercent:
      return value / 100.0;
    case Unit::kMebibytes:
      return value * 1048576.0;
    case Unit::kMillijoules:
      return value / 1000.0;
    case Unit::kRatio:
    case Unit::kBytes:
    case Unit::kWatts:
    case Unit::kJoules:
    case Unit::kCelsius:
    case Unit::kSeconds:
    case Unit::kCount:
      return value;
  }
  return value;
}

std::string_view UnitName(Unit unit) {
  switch (unit) {
    case Unit::kRatio:
      return "ratio";
    case Unit::kPercent:
      return "percent";
    case Unit::kMebibytes:
      return "MiB";
    case Unit::kBytes:
      return "bytes";
    case Unit::kWatts:
      return "W";
    case Unit::kMillijoules:
      return "mJ";
    case Unit::kJoules:
      return "J";
    case Unit::kCelsius:
      return "C";
    case Unit::kSeconds:
      return "s";
    case Unit::kCount:
      return "count";
  }
  return "?";
}

std::span<const DcgmFieldAlias> DcgmFieldAliases() { return kDcgmFieldAliases; }

std::optional<DcgmFieldAlias> LookupDcgmField(std::string_view family) {
  // Built once; keys lower-cased so that every capitalisation of a listed name matches.
  static const std::unordered_map<std::string, DcgmFieldAlias> kByLowerName = [] {
    std::unordered_map<std::string, DcgmFieldAlias> map;
    for (const DcgmFieldAlias& a : kDcgmFieldAliases) map.emplace(ToLower(a.name), a);
    return map;
  }();
  if (family.size() < 5 || family.size() > 128) return std::nullopt;
  auto it = kByLowerName.find(ToLower(family));
  if (it == kByLowerName.end()) return std::nullopt;
  return it->second;
}

bool IsDcgmFamily(std::string_view family) {
  return family.size() > 5 && ToLower(family.substr(0, 5)) == "dcgm_";
}

std::string_view DcgmFieldName(DcgmField field) { return kDcgmFieldNames[static_cast<int>(field)]; }

std::span<const ProcessMetricAlias> ProcessMetricAliases() { return kProcessMetricAliases; }

std::optional<ProcessMetricAlias> LookupProcessMetric(std::string_view family) {
  if (const auto* a = FindExact<ProcessMetricAlias>(kProcessMetricAliases, family)) return *a;
  return std::nullopt;
}

bool IsHamiMonitorFamily(std::string_view family) {
  if (family.starts_with("hami_")) return true;
  if (const auto* a = FindExact<ProcessMetricAlias>(kProcessMetricAliases, family))
    return a->name.starts_with("hami_") || !a->name.starts_with("gpu_");
  return std::find(std::begin(kHamiMonitorOtherFamilies), std::end(kHamiMonitorOtherFamilies),
                   family) != std::end(kHamiMonitorOtherFamilies);
}

std::string_view EngineKindName(EngineKind kind) {
  return kind == EngineKind::kVllm ? "vllm" : "sglang";
}

std::optional<InferenceMetricAlias> LookupInferenceMetric(std::string_view sample_name) {
  if (const auto* a = FindExact<InferenceMetricAlias>(kInferenceMetricAliases, sample_name)) {
    return *a;
  }
  return std::nullopt;
}

}  // namespace gpuattr::sources
