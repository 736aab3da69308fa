#include "gpuattr/sources/dcgm.h"

#include <gtest/gtest.h>

#include <string>

namespace gpuattr::sources {
namespace {

// Parses and reads `body`; the body is kept alive for the views in the Exposition.
struct Read {
  explicit Read(std::string text) : body(std::move(text)) {
    expo::Parse(body, exposition);
    readings = ReadDcgm(exposition);
  }
  std::string body;
  expo::Exposition exposition;
  DcgmReadings readings;
};

TEST(SourcesDcgm, OneRecordPerIdentityAcrossFamilies) {
  Read r(
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\",modelName=\"A100\",Hostname=\"n1\"} 87\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\",Hostname=\"n1\",pci_bus_id=\"00:1\"} 70000\n"
      "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-a\",Hostname=\"n1\"} 71\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-b\",Hostname=\"n1\"} 43\n");
  const auto& recs = r.readings.records;
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].device.gpu, "0");
  EXPECT_EQ(recs[0].device.uuid, "GPU-a");
  EXPECT_EQ(recs[0].device.hostname, "n1");
  EXPECT_EQ(recs[0].device.model, "A100");       // from the first line
  EXPECT_EQ(recs[0].device.pci_bus_id, "00:1");  // from the second
  EXPECT_FALSE(recs[0].device.gpu_instance.has_value());
  EXPECT_DOUBLE_EQ(*recs[0].values.gpu_util, 0.87);
  EXPECT_DOUBLE_EQ(*recs[0].values.memory_used_bytes, 70000.0 * 1048576);
  EXPECT_DOUBLE_EQ(*recs[0].values.temperature_celsius, 71);
  EXPECT_FALSE(recs[0].values.power_watts.has_value());  // not exported is absent, never 0
  EXPECT_EQ(recs[0].first_line, 1u);
  EXPECT_EQ(recs[1].first_line, 4u);
  EXPECT_EQ(r.readings.stats.samples_used, 4u);
}

TEST(SourcesDcgm, GpuInstanceZeroIsNotAWholeGpu) {
  Read r(
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"GPU-b\",GPU_I_PROFILE=\"7g.80gb\",GPU_I_ID=\"0\"} "
      "300\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"GPU-b\"} 300\n");
  ASSERT_EQ(r.readings.records.size(), 2u);
  ASSERT_TRUE(r.readings.records[0].device.gpu_instance.has_value());
  EXPECT_EQ(*r.readings.records[0].device.gpu_instance, "0");
  EXPECT_EQ(r.readings.records[0].device.mig_profile, "7g.80gb");
  EXPECT_FALSE(r.readings.records[1].device.gpu_instance.has_value());
}

TEST(SourcesDcgm, MigSlicesStaySeparateAndRepeatCardPower) {
  Read r(
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-a\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"7\"} "
      "250\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-a\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"8\"} "
      "250\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-a\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"9\"} "
      "250\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"GPU-b\"} 100\n");
  ASSERT_EQ(r.readings.records.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(*r.readings.records[i].device.gpu_instance, std::to_string(7 + i));
    EXPECT_DOUBLE_EQ(*r.readings.records[i].values.power_watts,
                     250);  // not split: attribution's job
  }
}

TEST(SourcesDcgm, EmptyPodLabelsMeanNoPodAndOldSpellingsWork) {
  Read r(
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"3\",UUID=\"GPU-d\",container=\"\",namespace=\"\",pod=\"\"} 0\n"
      "dcgm_gpu_utilization{gpu=\"4\",uuid=\"GPU-e\",container_name=\"c\",pod_name=\"p\","
      "pod_namespace=\"ns\",hostname=\"h\"} 50\n");
  ASSERT_EQ(r.readings.records.size(), 2u);
  EXPECT_FALSE(r.readings.records[0].pod.has_value());
  const DcgmRecord& old = r.readings.records[1];
  ASSERT_TRUE(old.pod.has_value());
  EXPECT_EQ(old.pod->id.namespace_, "ns");
  EXPECT_EQ(old.pod->id.name, "p");
  EXPECT_EQ(old.pod->container, "c");
  EXPECT_EQ(old.device.uuid, "GPU-e");
  EXPECT_EQ(old.device.hostname, "h");
  EXPECT_DOUBLE_EQ(*old.values.gpu_util, 0.5);
}

TEST(SourcesDcgm, TimeSlicedCopiesAndPerPodLinesAreSeparateRecords) {
  Read r(
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\",namespace=\"a\",pod=\"p1\",vgpu=\"0\"} 15866\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\",namespace=\"b\",pod=\"p2\",vgpu=\"1\"} 15866\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\",namespace=\"a\",pod=\"p1\",pod_uid=\"u1\","
      "vgpu=\"0\"} 10000\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\",namespace=\"b\",pod=\"p2\",pod_uid=\"u2\","
      "vgpu=\"1\"} 5866\n");
  const auto& recs = r.readings.records;
  ASSERT_EQ(recs.size(), 4u);
  EXPECT_EQ(recs[0].pod->vgpu, "0");
  EXPECT_EQ(recs[0].pod->pod_uid, "");
  EXPECT_EQ(recs[2].pod->pod_uid, "u1");
  EXPECT_DOUBLE_EQ(*recs[2].values.memory_used_bytes, 10000.0 * 1048576);
  EXPECT_DOUBLE_EQ(*recs[3].values.memory_used_bytes, 5866.0 * 1048576);
  EXPECT_EQ(r.readings.stats.duplicate_samples, 0u);
}

TEST(SourcesDcgm, GpuUtilAndProfAreKeptApartNeverAdded) {
  Read r(
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\"} 80\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"GPU-a\"} 0.7\n");
  ASSERT_EQ(r.readings.records.size(), 1u);
  EXPECT_DOUBLE_EQ(*r.readings.records[0].values.gpu_util, 0.8);
  EXPECT_DOUBLE_EQ(*r.readings.records[0].values.gr_engine_active, 0.7);
}

TEST(SourcesDcgm, DuplicatesNonFiniteAndUnkeyedLines) {
  Read r(
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-a\"} 61.5\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-a\"} 99\n"
      "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-a\"} NaN\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"2\",UUID=\"GPU-c\"} +Inf\n"
      "DCGM_FI_DEV_POWER_USAGE{device=\"nvidia7\"} 10\n");
  const auto& recs = r.readings.records;
  ASSERT_EQ(recs.size(), 2u);  // GPU-c exists although its only value was not finite
  EXPECT_DOUBLE_EQ(*recs[0].values.power_watts, 61.5);  // the first line is kept
  EXPECT_FALSE(recs[0].values.temperature_celsius.has_value());
  EXPECT_FALSE(recs[1].values.gpu_util.has_value());
  EXPECT_EQ(r.readings.stats.duplicate_samples, 1u);
  EXPECT_EQ(r.readings.stats.invalid_values, 2u);
  EXPECT_EQ(r.readings.stats.unkeyed_samples, 1u);
  EXPECT_EQ(r.readings.stats.samples, 5u);
  EXPECT_EQ(r.readings.stats.samples_used, 1u);
}

TEST(SourcesDcgm, HealthFields) {
  Read r(
      "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",UUID=\"GPU-a\",err_code=\"79\",err_msg=\"GPU has fallen "
      "off the bus\"} 79\n"
      "DCGM_EXP_XID_ERRORS_COUNT{gpu=\"0\",UUID=\"GPU-a\",xid=\"79\"} 2\n"
      "DCGM_EXP_XID_ERRORS_COUNT{gpu=\"0\",UUID=\"GPU-a\",xid=\"13\"} 5\n"
      "DCGM_EXP_XID_ERRORS_COUNT{gpu=\"0\",UUID=\"GPU-a\",xid=\"x1\"} 5\n"
      "DCGM_EXP_XID_ERRORS_COUNT{gpu=\"1\",UUID=\"GPU-b\"} 0\n"
      "DCGM_EXP_GPU_HEALTH_STATUS{gpu=\"0\",UUID=\"GPU-a\",health_watch=\"PCIE\"} 10\n"
      "DCGM_EXP_GPU_HEALTH_STATUS{gpu=\"0\",UUID=\"GPU-a\",health_watch=\"MEM\"} 20\n"
      "DCGM_EXP_GPU_HEALTH_STATUS{gpu=\"0\",UUID=\"GPU-a\",health_watch=\"ALL\"} 0\n"
      "DCGM_FI_DEV_CLOCKS_EVENT_REASONS{gpu=\"0\",UUID=\"GPU-a\"} 136\n"
      "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu=\"0\",UUID=\"GPU-a\"} 1\n"
      "DCGM_FI_DEV_ROW_REMAP_FAILURE{gpu=\"0\",UUID=\"GPU-a\"} 0\n"
      "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{gpu=\"0\",UUID=\"GPU-a\"} 4\n");
  ASSERT_EQ(r.readings.records.size(), 2u);  // GPU-b exists from its 0-valued count line
  const DcgmRecord& a = r.readings.records[0];
  EXPECT_DOUBLE_EQ(*a.values.last_xid, 79);
  EXPECT_EQ(a.xid_err_code, "79");
  EXPECT_EQ(a.xid_err_msg, "GPU has fallen off the bus");
  ASSERT_EQ(a.xid_error_counts.size(), 2u);
  EXPECT_DOUBLE_EQ(a.xid_error_counts.at(79), 2);
  EXPECT_DOUBLE_EQ(a.xid_error_counts.at(13), 5);
  EXPECT_DOUBLE_EQ(*a.values.health_status, 20);  // worst watch
  EXPECT_DOUBLE_EQ(*a.values.clocks_event_reasons, 136);
  EXPECT_DOUBLE_EQ(*a.values.ecc_dbe_volatile, 1);
  EXPECT_DOUBLE_EQ(*a.values.row_remap_failure, 0);
  EXPECT_DOUBLE_EQ(*a.values.uncorrectable_remapped_rows, 4);
  EXPECT_TRUE(r.readings.records[1].xid_error_counts.empty());
  EXPECT_EQ(r.readings.stats.invalid_values, 1u);  // xid="x1"
}

TEST(SourcesDcgm, DriverVersionFromEitherLabel) {
  Read r(
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\",DCGM_FI_DRIVER_VERSION=\"550.54.15\"} 0\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-b\",DCGM_FI_SYSTEM_DRIVER_VERSION=\"580.1\"} 0\n");
  ASSERT_EQ(r.readings.records.size(), 2u);
  EXPECT_EQ(r.readings.records[0].driver_version, "550.54.15");
  EXPECT_EQ(r.readings.records[1].driver_version, "580.1");
}

TEST(SourcesDcgm, IgnoredAndUnknownFamiliesAreCountedOnce) {
  std::string body;
  for (int i = 0; i < 20; ++i) {
    body +=
        "go_metric_" + std::to_string(i) + " 1\ngo_metric_" + std::to_string(i) + "{a=\"b\"} 1\n";
  }
  body += "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",UUID=\"GPU-a\"} 1980\n";
  body += "DCGM_FI_DEV_SM_CLOCK{gpu=\"1\",UUID=\"GPU-b\"} 1980\n";
  Read r(body);
  // SM_CLOCK is not a field we read, but its lines still name two devices (with no values).
  ASSERT_EQ(r.readings.records.size(), 2u);
  EXPECT_EQ(r.readings.records[0].values, DcgmValues{});
  EXPECT_EQ(r.readings.stats.samples_used, 0u);
  EXPECT_EQ(r.readings.stats.unknown_families, 20u);
  EXPECT_EQ(r.readings.stats.unknown_family_names.size(), kMaxFamilyNamesKept);
  EXPECT_EQ(r.readings.stats.ignored_families, 1u);
  ASSERT_EQ(r.readings.stats.ignored_family_names.size(), 1u);
  EXPECT_EQ(r.readings.stats.ignored_family_names[0], "DCGM_FI_DEV_SM_CLOCK");
}

// Custom counter lists: a body with only clocks, or only profiling fields, still names its
// devices, MIG slices (with the profile exactly as exported) and pods; fields not exported stay
// absent.
TEST(SourcesDcgm, AnyDcgmSeriesWithADeviceKeyMakesTheDevice) {
  Read clocks(
      "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",UUID=\"GPU-a\",GPU_I_PROFILE=\"7g.79gb\",GPU_I_ID=\"0\","
      "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"dcgm-exporter-x\"} 1980\n"
      "DCGM_FI_DEV_MEM_CLOCK{gpu=\"0\",UUID=\"GPU-a\",GPU_I_PROFILE=\"7g.79gb\",GPU_I_ID=\"0\","
      "Hostname=\"dcgm-exporter-x\"} 2619\n"
      "DCGM_FI_DEV_SM_CLOCK{gpu=\"1\",UUID=\"GPU-b\",namespace=\"ml\",pod=\"train-0\"} 1755\n"
      "DCGM_FI_DEV_SM_CLOCK{Hostname=\"dcgm-exporter-x\"} 0\n");  // no device key: nothing
  const auto& recs = clocks.readings.records;
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].device.uuid, "GPU-a");
  ASSERT_TRUE(recs[0].device.gpu_instance.has_value());
  EXPECT_EQ(*recs[0].device.gpu_instance, "0");
  EXPECT_EQ(recs[0].device.mig_profile, "7g.79gb");
  EXPECT_EQ(recs[0].device.model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(recs[0].values, DcgmValues{});  // unknown, never 0
  ASSERT_TRUE(recs[1].pod.has_value());
  EXPECT_EQ(recs[1].pod->id.name, "train-0");
  EXPECT_EQ(clocks.readings.stats.ignored_families, 2u);
  EXPECT_EQ(clocks.readings.stats.unkeyed_samples, 0u);  // a field we do not read, on no device

  Read prof(
      "DCGM_FI_PROF_SM_ACTIVE{gpu=\"0\",UUID=\"GPU-c\"} 0.5\n"
      "DCGM_FI_PROF_PIPE_FP16_ACTIVE{gpu=\"0\",UUID=\"GPU-c\"} 0.25\n");
  ASSERT_EQ(prof.readings.records.size(), 1u);
  EXPECT_DOUBLE_EQ(*prof.readings.records[0].values.sm_active, 0.5);
  EXPECT_FALSE(prof.readings.records[0].values.gpu_util.has_value());
  EXPECT_FALSE(prof.readings.records[0].values.power_watts.has_value());
}

TEST(SourcesDcgm, ReadingsOutliveTheBody) {
  DcgmReadings readings;
  {
    std::string body =
        "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\",namespace=\"ns\",pod=\"p\"} 5\n";
    expo::Exposition e;
    expo::Parse(body, e);
    readings = ReadDcgm(e);
    body.assign(body.size(), 'x');
  }
  ASSERT_EQ(readings.records.size(), 1u);
  EXPECT_EQ(readings.records[0].device.uuid, "GPU-a");
  EXPECT_EQ(readings.records[0].pod->id.name, "p");
}

TEST(SourcesDcgm, EmptyExposition) {
  expo::Exposition e;
  DcgmReadings r = ReadDcgm(e);
  EXPECT_TRUE(r.records.empty());
  EXPECT_EQ(r.stats.samples, 0u);
}

}  // namespace
}  // namespace gpuattr::sources
