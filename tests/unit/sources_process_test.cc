#include "gpuattr/sources/process.h"

#include <gtest/gtest.h>

#include <string>

namespace gpuattr::sources {
namespace {

struct Read {
  explicit Read(std::string text) : body(std::move(text)) {
    expo::Parse(body, exposition);
    readings = ReadProcess(exposition);
  }
  std::string body;
  expo::Exposition exposition;
  ProcessReadings readings;
};

TEST(SourcesProcess, ProcessesAndDevices) {
  Read r(
      "gpu_process_memory_bytes{namespace=\"ml\",pod=\"v\",container=\"c\",pid=\"1\",gpu=\"0\","
      "uuid=\"GPU-a\"} 1024\n"
      "gpu_process_utilization_percent{namespace=\"ml\",pod=\"v\",container=\"c\",pid=\"1\","
      "gpu=\"0\",uuid=\"GPU-a\"} 60\n"
      "gpu_process_memory_bytes{namespace=\"ml\",pod=\"v\",container=\"c\",pid=\"2\",gpu=\"0\","
      "uuid=\"GPU-a\"} 2048\n"
      "gpu_total_memory_bytes{gpu=\"0\",uuid=\"GPU-a\"} 85899345920\n"
      "gpu_total_utilization_percent{gpu=\"0\",uuid=\"GPU-a\"} 75\n"
      "gpu_power_usage_watts{gpu=\"0\",uuid=\"GPU-a\"} 400\n"
      "gpu_temperature_celsius{gpu=\"0\",uuid=\"GPU-a\"} 66\n"
      "gpu_process_memory_bytes{namespace=\"\",pod=\"\",pid=\"9\",uuid=\"GPU-a\"} 7\n"
      "gpu_process_memory_bytes{pid=\"10\"} 7\n"
      "gpu_something_else{uuid=\"GPU-a\"} 1\n"
      "up 1\n");
  const auto& p = r.readings.processes;
  ASSERT_EQ(p.size(), 3u);
  ASSERT_TRUE(p[0].pod.has_value());
  EXPECT_EQ(p[0].pod->id.namespace_, "ml");
  EXPECT_EQ(p[0].pod->id.name, "v");
  EXPECT_EQ(p[0].pod->container, "c");
  EXPECT_EQ(p[0].pid, "1");
  EXPECT_EQ(p[0].uuid, "GPU-a");
  EXPECT_DOUBLE_EQ(*p[0].memory_bytes, 1024);
  EXPECT_DOUBLE_EQ(*p[0].utilization, 0.6);
  EXPECT_FALSE(p[1].utilization.has_value());
  EXPECT_FALSE(p[2].pod.has_value());  // a process of no pod
  EXPECT_EQ(p[2].gpu, "");
  ASSERT_EQ(r.readings.devices.size(), 1u);
  const auto& d = r.readings.devices[0];
  EXPECT_EQ(d.uuid, "GPU-a");
  EXPECT_DOUBLE_EQ(*d.memory_total_bytes, 85899345920.0);
  EXPECT_DOUBLE_EQ(*d.utilization, 0.75);
  EXPECT_DOUBLE_EQ(*d.power_watts, 400);
  EXPECT_DOUBLE_EQ(*d.temperature_celsius, 66);
  EXPECT_EQ(r.readings.stats.unkeyed_samples, 1u);
  EXPECT_EQ(r.readings.stats.ignored_families, 1u);
  EXPECT_EQ(r.readings.stats.unknown_families, 1u);
}

TEST(SourcesProcess, DuplicatesAndNaN) {
  Read r(
      "gpu_power_usage_watts{uuid=\"GPU-a\"} 100\n"
      "gpu_power_usage_watts{uuid=\"GPU-a\"} 200\n"
      "gpu_temperature_celsius{uuid=\"GPU-a\"} NaN\n");
  ASSERT_EQ(r.readings.devices.size(), 1u);
  EXPECT_DOUBLE_EQ(*r.readings.devices[0].power_watts, 100);
  EXPECT_FALSE(r.readings.devices[0].temperature_celsius.has_value());
  EXPECT_EQ(r.readings.stats.duplicate_samples, 1u);
  EXPECT_EQ(r.readings.stats.invalid_values, 1u);
}

// HAMi's vGPU monitor (HAMi v2.10.0, cmd/vGPUmonitor/metrics.go, with --legacy-metrics): each
// container's memory on a card is one reading without a pid; the legacy names repeat the same
// figures and are counted once; its other families are ignored, not unknown; vdevice_index is
// the container's own index, never taken as the card's.
TEST(SourcesProcess, HamiVgpuMonitorContainersAreReadingsWithoutPid) {
  Read r(
      "hami_vgpu_memory_used_bytes{container=\"c0\",device_uuid=\"GPU-a\",namespace=\"ml\","
      "pod=\"h-0\",vdevice_index=\"1\",zone=\"vGPU\"} 9437184000\n"
      "hami_vgpu_memory_limit_bytes{container=\"c0\",device_uuid=\"GPU-a\",namespace=\"ml\","
      "pod=\"h-0\",vdevice_index=\"1\",zone=\"vGPU\"} 12076449792\n"
      "hami_container_device_utilization_ratio{container=\"c0\",device_uuid=\"GPU-a\","
      "namespace=\"ml\",pod=\"h-0\",vdevice_index=\"1\",zone=\"vGPU\"} 55\n"
      "hami_host_gpu_utilization_ratio{device_index=\"3\",device_type=\"NVIDIA-NVIDIA L4\","
      "device_uuid=\"GPU-a\",node=\"n\",zone=\"vGPU\"} 80\n"
      "hami_host_gpu_memory_used_bytes{device_index=\"3\",device_uuid=\"GPU-a\"} 1\n"
      "vGPU_device_memory_usage_in_bytes{ctrname=\"c0\",deviceuuid=\"GPU-a\",podname=\"h-0\","
      "podnamespace=\"ml\",vdeviceid=\"1\",zone=\"vGPU\"} 9437184000\n"
      "vGPU_device_memory_usage_in_bytes{ctrname=\"c1\",deviceuuid=\"GPU-a\",podname=\"h-0\","
      "podnamespace=\"ml\",vdeviceid=\"0\",zone=\"vGPU\"} 1048576\n"
      "HostCoreUtilization{deviceidx=\"3\",deviceuuid=\"GPU-a\",nodeid=\"n\"} 80\n"
      "Device_memory_desc_of_container{ctrname=\"c0\",deviceuuid=\"GPU-a\"} 1\n");
  const auto& p = r.readings.processes;
  ASSERT_EQ(p.size(), 2u);
  ASSERT_TRUE(p[0].pod.has_value());
  EXPECT_EQ(p[0].pod->id.namespace_, "ml");
  EXPECT_EQ(p[0].pod->id.name, "h-0");
  EXPECT_EQ(p[0].pod->container, "c0");
  EXPECT_EQ(p[0].uuid, "GPU-a");
  EXPECT_EQ(p[0].gpu, "");  // neither vdevice_index nor device_index is the card key
  EXPECT_EQ(p[0].pid, "");
  EXPECT_DOUBLE_EQ(*p[0].memory_bytes, 9437184000.0);
  EXPECT_DOUBLE_EQ(*p[0].utilization, 0.55);
  EXPECT_EQ(p[1].pod->container, "c1");  // a container only the legacy names report
  EXPECT_DOUBLE_EQ(*p[1].memory_bytes, 1048576.0);
  ASSERT_EQ(r.readings.devices.size(), 1u);
  EXPECT_EQ(r.readings.devices[0].uuid, "GPU-a");
  EXPECT_DOUBLE_EQ(*r.readings.devices[0].utilization, 0.8);
  EXPECT_EQ(r.readings.stats.duplicate_samples, 2u);  // legacy c0 memory, HostCoreUtilization
  EXPECT_EQ(r.readings.stats.ignored_families, 3u);
  EXPECT_EQ(r.readings.stats.unknown_families, 0u);
}

}  // namespace
}  // namespace gpuattr::sources
