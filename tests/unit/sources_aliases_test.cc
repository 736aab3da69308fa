#include "gpuattr/sources/aliases.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gpuattr/sources/labels.h"

namespace gpuattr::sources {
namespace {

TEST(SourcesAliases, EveryLabelSpellingOfDesignSection3Maps) {
  const std::pair<const char*, LabelKey> cases[] = {
      {"Hostname", LabelKey::kHostname},
      {"hostname", LabelKey::kHostname},
      {"UUID", LabelKey::kUuid},
      {"uuid", LabelKey::kUuid},
      {"namespace", LabelKey::kNamespace},
      {"pod_namespace", LabelKey::kNamespace},
      {"pod", LabelKey::kPod},
      {"pod_name", LabelKey::kPod},
      {"container", LabelKey::kContainer},
      {"container_name", LabelKey::kContainer},
      {"GPU_I_PROFILE", LabelKey::kMigProfile},
      {"GPU_I_ID", LabelKey::kGpuInstance},
      {"modelName", LabelKey::kModel},
      {"pci_bus_id", LabelKey::kPciBusId},
      {"device", LabelKey::kDevice},
      {"pod_uid", LabelKey::kPodUid},
      {"vgpu", LabelKey::kVgpu},
      {"DCGM_FI_DRIVER_VERSION", LabelKey::kDriverVersion},
      {"DCGM_FI_SYSTEM_DRIVER_VERSION", LabelKey::kDriverVersion},
      {"gpu", LabelKey::kGpu},
      {"err_code", LabelKey::kErrCode},
      {"err_msg", LabelKey::kErrMsg},
      {"xid", LabelKey::kXid},
      {"pid", LabelKey::kPid},
      {"model_name", LabelKey::kModelName},
      {"engine", LabelKey::kEngine},
      {"dp_rank", LabelKey::kEngine},
      {"finished_reason", LabelKey::kFinishedReason},
  };
  for (const auto& [spelling, key] : cases) {
    auto got = LabelKeyOf(spelling);
    ASSERT_TRUE(got.has_value()) << spelling;
    EXPECT_EQ(*got, key) << spelling;
  }
  EXPECT_FALSE(LabelKeyOf("Uuid").has_value());  // exact spellings only
  EXPECT_FALSE(LabelKeyOf("instance").has_value());
  EXPECT_FALSE(LabelKeyOf("").has_value());
}

TEST(SourcesAliases, LabelKeyNamesAreDistinct) {
  std::set<std::string_view> names;
  for (int k = 0; k < kLabelKeyCount; ++k) names.insert(LabelKeyName(static_cast<LabelKey>(k)));
  EXPECT_EQ(names.size(), static_cast<size_t>(kLabelKeyCount));
}

TEST(SourcesAliases, PreferredSpellingWinsAndEmptyValuesAreAbsent) {
  const expo::Label both[] = {{"pod_namespace", "old"}, {"namespace", "new"},
                              {"pod_name", "p"},        {"pod", ""},
                              {"uuid", "GPU-x"},        {"UUID", ""}};
  ResolvedLabels l(both);
  EXPECT_EQ(l.Get(LabelKey::kNamespace), "new");  // `namespace` outranks `pod_namespace`
  EXPECT_EQ(l.Get(LabelKey::kPod), "p");          // empty `pod` is absent: `pod_name` stands
  EXPECT_EQ(l.Get(LabelKey::kUuid), "GPU-x");
  EXPECT_FALSE(l.Has(LabelKey::kContainer));
}

struct FieldCase {
  const char* name;
  DcgmField field;
  double raw;
  double base;
};

TEST(SourcesAliases, DcgmFieldNamesMapWithTheirUnits) {
  const FieldCase cases[] = {
      // classic names
      {"DCGM_FI_DEV_GPU_UTIL", DcgmField::kGpuUtil, 87, 0.87},
      {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", DcgmField::kGrEngineActive, 0.42, 0.42},
      {"DCGM_FI_PROF_SM_ACTIVE", DcgmField::kSmActive, 0.5, 0.5},
      {"DCGM_FI_PROF_SM_OCCUPANCY", DcgmField::kSmOccupancy, 0.25, 0.25},
      {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", DcgmField::kTensorActive, 0.1, 0.1},
      {"DCGM_FI_PROF_DRAM_ACTIVE", DcgmField::kDramActive, 0.3, 0.3},
      {"DCGM_FI_DEV_FB_USED", DcgmField::kMemoryUsed, 70000, 70000.0 * 1048576},
      {"DCGM_FI_DEV_FB_FREE", DcgmField::kMemoryFree, 11000, 11000.0 * 1048576},
      {"DCGM_FI_DEV_FB_TOTAL", DcgmField::kMemoryTotal, 81920, 81920.0 * 1048576},
      {"DCGM_FI_DEV_FB_RESERVED", DcgmField::kMemoryReserved, 539, 539.0 * 1048576},
      {"DCGM_FI_DEV_POWER_USAGE", DcgmField::kPower, 310.5, 310.5},
      {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", DcgmField::kEnergy, 123456, 123.456},
      {"DCGM_FI_DEV_GPU_TEMP", DcgmField::kTemperature, 71, 71},
      {"DCGM_FI_DEV_XID_ERRORS", DcgmField::kLastXid, 79, 79},
      {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", DcgmField::kEccDbeVolatile, 2, 2},
      {"DCGM_FI_DEV_ROW_REMAP_FAILURE", DcgmField::kRowRemapFailure, 1, 1},
      {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", DcgmField::kUncorrectableRemappedRows, 3, 3},
      {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", DcgmField::kClocksEventReasons, 72, 72},
      {"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", DcgmField::kClocksEventReasons, 8, 8},
      {"DCGM_EXP_XID_ERRORS_COUNT", DcgmField::kXidErrorsCount, 4, 4},
      {"DCGM_EXP_GPU_HEALTH_STATUS", DcgmField::kHealthStatus, 20, 20},
      // dcgm-exporter 4.9 / DCGM 4.7 names in base units
      {"DCGM_FI_DEV_GPU_UTIL_RATIO", DcgmField::kGpuUtil, 0.87, 0.87},
      {"DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO", DcgmField::kGrEngineActive, 0.42, 0.42},
      {"DCGM_FI_PROF_SM_UTIL_RATIO", DcgmField::kSmActive, 0.5, 0.5},
      {"DCGM_FI_PROF_SM_OCCUPANCY_RATIO", DcgmField::kSmOccupancy, 0.25, 0.25},
      {"DCGM_FI_PROF_TENSOR_UTIL_RATIO", DcgmField::kTensorActive, 0.1, 0.1},
      {"DCGM_FI_PROF_DRAM_UTIL_RATIO", DcgmField::kDramActive, 0.3, 0.3},
      {"DCGM_FI_DEV_FB_USED_BYTES", DcgmField::kMemoryUsed, 4096, 4096},
      {"DCGM_FI_DEV_FB_FREE_BYTES", DcgmField::kMemoryFree, 4096, 4096},
      {"DCGM_FI_DEV_FB_CAPACITY_BYTES", DcgmField::kMemoryTotal, 8192, 8192},
      {"DCGM_FI_DEV_FB_RESERVED_BYTES", DcgmField::kMemoryReserved, 512, 512},
      {"DCGM_FI_DEV_BOARD_POWER_WATTS", DcgmField::kPower, 871.25, 871.25},
      {"DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL", DcgmField::kEnergy, 5000, 5000},
      {"DCGM_FI_DEV_GPU_TEMP_CELSIUS", DcgmField::kTemperature, 57, 57},
      {"DCGM_FI_DEV_XID_ERROR", DcgmField::kLastXid, 31, 31},
      {"DCGM_FI_DEV_ROW_REMAP_FAILED", DcgmField::kRowRemapFailure, 1, 1},
      {"DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL", DcgmField::kUncorrectableRemappedRows, 3, 3},
      // 1.x compatibility names, and lower-cased classic names
      {"dcgm_gpu_utilization", DcgmField::kGpuUtil, 50, 0.5},
      {"dcgm_fb_used", DcgmField::kMemoryUsed, 2, 2.0 * 1048576},
      {"dcgm_fb_free", DcgmField::kMemoryFree, 2, 2.0 * 1048576},
      {"dcgm_power_usage", DcgmField::kPower, 40, 40},
      {"dcgm_total_energy_consumption", DcgmField::kEnergy, 1500, 1.5},
      {"dcgm_gpu_temp", DcgmField::kTemperature, 33, 33},
      {"dcgm_xid_errors", DcgmField::kLastXid, 43, 43},
      {"dcgm_ecc_dbe_volatile_total", DcgmField::kEccDbeVolatile, 1, 1},
      {"dcgm_fi_prof_gr_engine_active", DcgmField::kGrEngineActive, 0.008246, 0.008246},
      {"dcgm_fi_dev_fb_used", DcgmField::kMemoryUsed, 1, 1048576},
  };
  for (const FieldCase& c : cases) {
    auto alias = LookupDcgmField(c.name);
    ASSERT_TRUE(alias.has_value()) << c.name;
    EXPECT_EQ(alias->field, c.field) << c.name;
    EXPECT_DOUBLE_EQ(ToBaseUnit(alias->unit, c.raw), c.base) << c.name;
  }
}

TEST(SourcesAliases, UnusedAndForeignFamiliesAreNotFields) {
  EXPECT_FALSE(LookupDcgmField("DCGM_FI_DEV_SM_CLOCK").has_value());
  EXPECT_FALSE(LookupDcgmField("DCGM_FI_DEV_FB_USED_RATIO").has_value());
  EXPECT_FALSE(LookupDcgmField("gpu_process_memory_bytes").has_value());
  EXPECT_FALSE(LookupDcgmField("").has_value());
  EXPECT_TRUE(IsDcgmFamily("DCGM_FI_DEV_SM_CLOCK"));
  EXPECT_TRUE(IsDcgmFamily("dcgm_sm_clock"));
  EXPECT_TRUE(IsDcgmFamily("DCGM_EXP_CLOCK_EVENTS_COUNT"));
  EXPECT_FALSE(IsDcgmFamily("go_goroutines"));
  EXPECT_FALSE(IsDcgmFamily("dcgm"));
}

TEST(SourcesAliases, EveryDcgmFieldHasANameAndAnAlias) {
  std::set<std::string_view> names;
  for (int f = 0; f < kDcgmFieldCount; ++f) {
    const auto field = static_cast<DcgmField>(f);
    names.insert(DcgmFieldName(field));
    bool aliased = false;
    for (const DcgmFieldAlias& a : DcgmFieldAliases()) aliased |= a.field == field;
    EXPECT_TRUE(aliased) << DcgmFieldName(field);
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kDcgmFieldCount));
}

TEST(SourcesAliases, AliasNamesAreUniqueIgnoringCase) {
  std::set<std::string> seen;
  for (const DcgmFieldAlias& a : DcgmFieldAliases()) {
    std::string lower(a.name);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_TRUE(seen.insert(lower).second) << a.name;
  }
}

TEST(SourcesAliases, UnitsConvertToBaseUnits) {
  EXPECT_DOUBLE_EQ(ToBaseUnit(Unit::kPercent, 43), 0.43);
  EXPECT_DOUBLE_EQ(ToBaseUnit(Unit::kMebibytes, 1), 1048576);
  EXPECT_DOUBLE_EQ(ToBaseUnit(Unit::kMebibytes, 81920), 85899345920.0);  // 80 GiB
  EXPECT_DOUBLE_EQ(ToBaseUnit(Unit::kMillijoules, 2500), 2.5);
  for (Unit u : {Unit::kRatio, Unit::kBytes, Unit::kWatts, Unit::kJoules, Unit::kCelsius,
                 Unit::kSeconds, Unit::kCount}) {
    EXPECT_DOUBLE_EQ(ToBaseUnit(u, 12.5), 12.5) << UnitName(u);
  }
}

TEST(SourcesAliases, ProcessAndInferenceNames) {
  auto mem = LookupProcessMetric("gpu_process_memory_bytes");
  ASSERT_TRUE(mem);
  EXPECT_EQ(mem->metric, ProcessMetric::kProcessMemory);
  auto util = LookupProcessMetric("gpu_process_utilization_percent");
  ASSERT_TRUE(util);
  EXPECT_DOUBLE_EQ(ToBaseUnit(util->unit, 60), 0.6);
  EXPECT_TRUE(LookupProcessMetric("gpu_total_memory_bytes"));
  EXPECT_TRUE(LookupProcessMetric("gpu_total_utilization_percent"));
  EXPECT_TRUE(LookupProcessMetric("gpu_power_usage_watts"));
  EXPECT_TRUE(LookupProcessMetric("gpu_temperature_celsius"));
  EXPECT_FALSE(LookupProcessMetric("gpu_process_memory"));

  const std::pair<const char*, InferenceMetric> inference[] = {
      {"vllm:kv_cache_usage_perc", InferenceMetric::kKvCacheUsage},
      {"vllm:gpu_cache_usage_perc", InferenceMetric::kKvCacheUsage},
      {"vllm:num_requests_running", InferenceMetric::kRequestsRunning},
      {"vllm:num_requests_waiting", InferenceMetric::kRequestsWaiting},
      {"vllm:prompt_tokens_total", InferenceMetric::kPromptTokens},
      {"vllm:generation_tokens_total", InferenceMetric::kGenerationTokens},
      {"vllm:num_preemptions_total", InferenceMetric::kPreemptions},
      {"vllm:prefix_cache_hits_total", InferenceMetric::kPrefixCacheHits},
      {"vllm:prefix_cache_queries_total", InferenceMetric::kPrefixCacheQueries},
      {"vllm:gpu_prefix_cache_hits_total", InferenceMetric::kPrefixCacheHits},
      {"vllm:request_success_total", InferenceMetric::kRequestSuccess},
      {"vllm:time_to_first_token_seconds_sum", InferenceMetric::kTtftSum},
      {"vllm:time_to_first_token_seconds_count", InferenceMetric::kTtftCount},
      {"sglang:token_usage", InferenceMetric::kKvCacheUsage},
      {"sglang:num_running_reqs", InferenceMetric::kRequestsRunning},
      {"sglang:num_queue_reqs", InferenceMetric::kRequestsWaiting},
      {"sglang:gen_throughput", InferenceMetric::kGenThroughput},
  };
  for (const auto& [name, metric] : inference) {
    auto a = LookupInferenceMetric(name);
    ASSERT_TRUE(a) << name;
    EXPECT_EQ(a->metric, metric) << name;
    EXPECT_EQ(a->engine, std::string_view(name).starts_with("vllm:") ? EngineKind::kVllm
                                                                     : EngineKind::kSglang);
  }
  EXPECT_FALSE(LookupInferenceMetric("vllm:time_to_first_token_seconds_bucket"));
}

}  // namespace
}  // namespace gpuattr::sources
