#include "gpuattr/sources/classify.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace gpuattr::sources {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(SourcesClassify, ByContent) {
  EXPECT_EQ(ClassifyBody("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 5\n").kind, BodyKind::kDcgm);
  EXPECT_EQ(ClassifyBody("DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\"} 0.5\n").kind, BodyKind::kDcgm);
  EXPECT_EQ(ClassifyBody("dcgm_fi_prof_gr_engine_active{gpu=\"0\"} 0.5\n").kind, BodyKind::kDcgm);
  EXPECT_EQ(ClassifyBody("dcgm_gpu_utilization{gpu=\"0\"} 5\n").kind, BodyKind::kDcgm);
  EXPECT_EQ(ClassifyBody("gpu_process_memory_bytes{pid=\"1\"} 5\n").kind, BodyKind::kProcess);
  EXPECT_EQ(ClassifyBody("vllm:num_requests_running{engine=\"0\"} 0.0\n").kind, BodyKind::kVllm);
  EXPECT_EQ(ClassifyBody("sglang:num_running_reqs 1\n").kind, BodyKind::kSglang);
}

TEST(SourcesClassify, ProcessWinsOverDcgmAndDcgmOverInference) {
  const std::string both =
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 5\nvllm:num_requests_running 1\n"
      "gpu_process_memory_bytes{pid=\"1\"} 5\n";
  Classification c = ClassifyBody(both);
  EXPECT_EQ(c.kind, BodyKind::kProcess);
  EXPECT_EQ(c.reason, "found gpu_process_memory_bytes");
  Classification d = ClassifyBody("vllm:num_requests_running 1\nDCGM_FI_DEV_FB_USED{} 5\n");
  EXPECT_EQ(d.kind, BodyKind::kDcgm);
  EXPECT_EQ(d.reason, "found DCGM_FI_DEV_FB_USED");
  EXPECT_EQ(ClassifyBody("sglang:token_usage 0.1\nvllm:num_requests_running 1\n").kind,
            BodyKind::kVllm);
}

TEST(SourcesClassify, IdleProcessExporterIsStillAProcessExporter) {
  // No process on the node yet: the family is declared, only device families have samples.
  Classification c = ClassifyBody(
      "# HELP gpu_process_memory_bytes GPU memory used by process.\n"
      "# TYPE gpu_process_memory_bytes gauge\n"
      "gpu_total_memory_bytes{gpu=\"0\",uuid=\"GPU-a\"} 85899345920\n");
  EXPECT_EQ(c.kind, BodyKind::kProcess);
  EXPECT_EQ(ClassifyBody("# TYPE gpu_process_memory_bytes gauge\n").kind, BodyKind::kProcess);
  EXPECT_EQ(ClassifyBody("# TYPE gpu_process_memory_bytes_other gauge\nx 1\n").kind,
            BodyKind::kUnrecognised);
  EXPECT_EQ(ClassifyBody("# gpu_process_memory_bytes is great\nx 1\n").kind,
            BodyKind::kUnrecognised);
}

TEST(SourcesClassify, OnlySampleLinesCount) {
  // A name in a comment is not a sample; other DCGM families (not DEV/PROF) are not enough.
  EXPECT_EQ(ClassifyBody("# HELP DCGM_FI_DEV_GPU_UTIL x\nfoo 1\n").kind, BodyKind::kUnrecognised);
  EXPECT_EQ(ClassifyBody("DCGM_EXP_CLOCK_EVENTS_COUNT{gpu=\"0\"} 1\n").kind,
            BodyKind::kUnrecognised);
  EXPECT_EQ(ClassifyBody("dcgm_exporter_build_info 1\n").kind, BodyKind::kUnrecognised);
  EXPECT_EQ(ClassifyBody("my_vllm:thing 1\n").kind, BodyKind::kUnrecognised);
}

TEST(SourcesClassify, UnrecognisedNamesTheFirstNonCommentLine) {
  Classification c = ClassifyBody("# HELP node_load1 x\n\n  node_load1 0.42\nnode_load5 1\n");
  EXPECT_EQ(c.kind, BodyKind::kUnrecognised);
  EXPECT_EQ(c.reason, "no GPU exporter or inference metrics; first line: node_load1 0.42");
}

TEST(SourcesClassify, ReasonIsTruncatedAndPrintable) {
  std::string html = "<!DOCTYPE html><html><head><title>Grafana</title>" + std::string(200, 'x') +
                     "\x01\xc3\xa9</head>\n<body></body>\n";
  Classification c = ClassifyBody(html);
  EXPECT_EQ(c.kind, BodyKind::kUnrecognised);
  EXPECT_THAT(c.reason, HasSubstr("first line: <!DOCTYPE html>"));
  EXPECT_LE(c.reason.size(),
            std::string("no GPU exporter or inference metrics; first line: ").size() + 80 + 3);
  EXPECT_THAT(c.reason, ::testing::EndsWith("..."));
  for (char ch : c.reason) EXPECT_TRUE(ch >= 0x20 && ch < 0x7f);
  Classification ctrl = ClassifyBody("a\x01\x7f b\n");
  EXPECT_THAT(ctrl.reason, ::testing::EndsWith("first line: a?? b"));
}

TEST(SourcesClassify, EmptyAndCommentOnlyBodies) {
  EXPECT_EQ(ClassifyBody("").reason, "empty body");
  EXPECT_EQ(ClassifyBody("\n \n").reason, "empty body");
  EXPECT_EQ(ClassifyBody("# HELP x y\n# TYPE x gauge\n").reason, "no samples, only comments");
}

TEST(SourcesClassify, KindNames) {
  EXPECT_EQ(BodyKindName(BodyKind::kDcgm), "dcgm");
  EXPECT_EQ(BodyKindName(BodyKind::kProcess), "process");
  EXPECT_EQ(BodyKindName(BodyKind::kVllm), "vllm");
  EXPECT_EQ(BodyKindName(BodyKind::kSglang), "sglang");
  EXPECT_EQ(BodyKindName(BodyKind::kUnrecognised), "unrecognised");
}

TEST(SourcesClassify, CrLfBodies) {
  EXPECT_EQ(ClassifyBody("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 5\r\n").kind, BodyKind::kDcgm);
  EXPECT_EQ(ClassifyBody("foo 1\r\n").reason,
            "no GPU exporter or inference metrics; first line: foo 1");
}

// HAMi's vGPU monitor (v2.10.0 names and the legacy ones): a per-pod memory source, read as a
// per-process exporter; its host lines alone (no vGPU container yet) still make it one.
TEST(SourcesClassify, HamiVgpuMonitorIsAPerProcessSource) {
  Classification c = ClassifyBody(
      "hami_host_gpu_utilization_ratio{device_uuid=\"GPU-a\"} 80\n"
      "hami_vgpu_memory_used_bytes{namespace=\"ml\",pod=\"p\",container=\"c\","
      "vdevice_index=\"0\",device_uuid=\"GPU-a\"} 1024\n");
  EXPECT_EQ(c.kind, BodyKind::kProcess);
  EXPECT_EQ(c.reason, "found hami_vgpu_memory_used_bytes (HAMi vGPU monitor)");
  EXPECT_EQ(ClassifyBody("vGPU_device_memory_usage_in_bytes{podname=\"p\"} 1\n").kind,
            BodyKind::kProcess);
  Classification idle = ClassifyBody("HostGPUMemoryUsage{deviceuuid=\"GPU-a\"} 5\n");
  EXPECT_EQ(idle.kind, BodyKind::kProcess);
  EXPECT_THAT(idle.reason, HasSubstr("no vGPU container"));
  // The limit alone (or any other hami_ family) proves nothing about memory in use.
  EXPECT_EQ(ClassifyBody("hami_vgpu_memory_limit_bytes{pod=\"p\"} 1\n").kind,
            BodyKind::kUnrecognised);
  // A dcgm body with a HAMi host line is still a dcgm-exporter's only if nothing else says so:
  // the monitor's own line decides.
  EXPECT_EQ(ClassifyBody("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 5\nHostGPUMemoryUsage{} 5\n").kind,
            BodyKind::kProcess);
}

}  // namespace
}  // namespace gpuattr::sources
