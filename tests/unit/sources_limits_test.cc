// Limits per body (sources/limits.h, docs/design.md#limits): each one at the limit (read) and one
// over it (rejected whole, the reason naming the limit and the count), and reading stops there.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuattr/expo/parser.h"
#include "gpuattr/sources/body.h"
#include "gpuattr/sources/dcgm.h"
#include "gpuattr/sources/promapi.h"

namespace gpuattr::sources {
namespace {

using ::testing::HasSubstr;

// n whole GPUs, one line each.
std::string Devices(int n) {
  std::string body;
  for (int i = 0; i < n; ++i)
    body += "DCGM_FI_DEV_GPU_TEMP{gpu=\"" + std::to_string(i) + "\",UUID=\"GPU-" +
            std::to_string(i) + "\"} 40\n";
  return body;
}

// One device with n pods.
std::string Pods(int n) {
  std::string body;
  for (int i = 0; i < n; ++i)
    body += "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-0\",namespace=\"ml\",pod=\"p" +
            std::to_string(i) + "\"} 100\n";
  return body;
}

BodyLimits With(size_t BodyLimits::*field, size_t value) {
  BodyLimits l;
  l.*field = value;
  return l;
}

void ExpectRead(std::string_view body, BodyKind kind, const BodyLimits& l) {
  BodyRead r = ReadBody(body, kind, l);
  EXPECT_TRUE(r.readings) << r.reason;
  EXPECT_EQ(r.over_limit, "");
}

void ExpectRejected(std::string_view body, BodyKind kind, const BodyLimits& l,
                    const std::string& limit, const std::string& text) {
  BodyRead r = ReadBody(body, kind, l);
  EXPECT_FALSE(r.readings);
  EXPECT_EQ(r.over_limit, limit);
  EXPECT_THAT(r.reason, HasSubstr(text));
  EXPECT_THAT(r.reason, HasSubstr("(scrape.limits." + limit + ")"));
}

TEST(BodyLimits, DefaultsAreDesignSection10s) {
  BodyLimits l;
  EXPECT_EQ(l.body_bytes, 16u << 20);
  EXPECT_EQ(l.samples, 200'000u);
  EXPECT_EQ(l.devices_per_node, 128u);
  EXPECT_EQ(l.pods_per_device, 64u);
  EXPECT_EQ(l.models_per_server, 16u);
  EXPECT_EQ(l.labels, 1'000'000u);
}

TEST(BodyLimits, BodyBytes) {
  const std::string body = Devices(2);
  ExpectRead(body, BodyKind::kDcgm, With(&BodyLimits::body_bytes, body.size()));
  ExpectRejected(body, BodyKind::kDcgm, With(&BodyLimits::body_bytes, body.size() - 1),
                 "body_bytes", "more than " + std::to_string(body.size() - 1) + " bytes");
}

TEST(BodyLimits, Samples) {
  const std::string body = Devices(5) + "# a comment is no sample\n";
  ExpectRead(body, BodyKind::kDcgm, With(&BodyLimits::samples, 5));
  ExpectRejected(body, BodyKind::kDcgm, With(&BodyLimits::samples, 4), "samples",
                 "rejected whole: 5 samples, over the limit of 4");
}

TEST(BodyLimits, Labels) {
  const std::string body = Devices(5);  // two labels a line
  ExpectRead(body, BodyKind::kDcgm, With(&BodyLimits::labels, 10));
  ExpectRejected(body, BodyKind::kDcgm, With(&BodyLimits::labels, 9), "labels",
                 "rejected whole: more than 9 labels, over the limit of 9");
}

// A body of tiny labels (`a0="",` is 6 bytes, a label view 32) stops at the label limit: the
// parse tables stay bounded by it, not by the body.
TEST(BodyLimits, TinyLabelsStopAtTheLabelLimit) {
  std::string line = "vllm:num_requests_running{model_name=\"m\"";
  for (int i = 0; i < 100; ++i) line += ",a" + std::to_string(i) + "=\"\"";
  line += "} 1\n";
  std::string body;
  while (body.size() < (4u << 20)) body += line;  // ~24,000 lines, 2.4 million labels
  expo::Exposition ex;
  expo::Limits parse;
  parse.max_labels = 100'000;
  expo::Parse(body, ex, parse);
  EXPECT_TRUE(ex.label_limit_hit);
  EXPECT_EQ(ex.labels.size(), 99'990u);  // 990 lines of 101 labels; the 991st is not kept
  EXPECT_EQ(ex.samples.size(), 990u);
  ExpectRejected(body, BodyKind::kVllm, With(&BodyLimits::labels, 100'000), "labels",
                 "more than 100000 labels");
  ExpectRead(body.substr(0, 990 * line.size()), BodyKind::kVllm,
             With(&BodyLimits::labels, 100'000));
}

TEST(BodyLimits, DevicesPerNode) {
  ExpectRead(Devices(128), BodyKind::kDcgm, {});
  ExpectRejected(Devices(129), BodyKind::kDcgm, {}, "devices_per_node",
                 "rejected whole: 129 devices on one node, over the limit of 128");
}

TEST(BodyLimits, MigSlicesAreDevicesPodsAndHostnamesAreNot) {
  std::string body;
  for (int gi : {1, 2, 3})
    for (const char* pod : {"a", "b"})
      for (const char* host : {"h1", "h2"})
        body += "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-0\",GPU_I_ID=\"" + std::to_string(gi) +
                "\",Hostname=\"" + host + "\",namespace=\"ml\",pod=\"" + pod + "\"} 1\n";
  ExpectRead(body, BodyKind::kDcgm, With(&BodyLimits::devices_per_node, 3));
  ExpectRejected(body, BodyKind::kDcgm, With(&BodyLimits::devices_per_node, 2), "devices_per_node",
                 "3 devices on one node");
}

TEST(BodyLimits, PodsPerDevice) {
  ExpectRead(Pods(64), BodyKind::kDcgm, {});
  ExpectRejected(Pods(65), BodyKind::kDcgm, {}, "pods_per_device",
                 "65 pods on device 0 (GPU-0), over the limit of 64");
}

TEST(BodyLimits, ProcessDevicesAndPods) {
  std::string body;
  for (int i = 0; i < 3; ++i)
    body += "gpu_process_memory_bytes{namespace=\"ml\",pod=\"p" + std::to_string(i) +
            "\",uuid=\"GPU-0\",gpu=\"0\",pid=\"" + std::to_string(i) + "\"} 1e9\n";
  body += "gpu_total_memory_bytes{uuid=\"GPU-1\",gpu=\"1\"} 8e10\n";
  ExpectRead(body, BodyKind::kProcess, With(&BodyLimits::pods_per_device, 3));
  ExpectRejected(body, BodyKind::kProcess, With(&BodyLimits::pods_per_device, 2), "pods_per_device",
                 "3 pods on device 0 (GPU-0)");
  ExpectRead(body, BodyKind::kProcess, With(&BodyLimits::devices_per_node, 2));
  ExpectRejected(body, BodyKind::kProcess, With(&BodyLimits::devices_per_node, 1),
                 "devices_per_node", "2 devices on one node");
}

TEST(BodyLimits, ModelsPerServer) {
  std::string body;
  for (int i = 0; i < 17; ++i)
    body += "vllm:num_requests_running{model_name=\"org/m" + std::to_string(i) + "\"} 1\n";
  std::string sixteen = body.substr(0, body.rfind("vllm:"));
  ExpectRead(sixteen, BodyKind::kVllm, {});
  ExpectRejected(body, BodyKind::kVllm, {}, "models_per_server",
                 "17 models on one server, over the limit of 16");
}

// Memory is bounded by the limits: reading stops at the first item over one.
TEST(BodyLimits, ReadingStopsAtTheFirstItemOver) {
  expo::Exposition ex;
  expo::Limits parse;
  parse.max_samples = 200;
  const std::string body = Devices(1000);
  expo::Parse(body, ex, parse);
  EXPECT_TRUE(ex.sample_limit_hit);
  EXPECT_EQ(ex.samples.size(), 200u);
  EXPECT_EQ(ex.labels.size(), 400u);  // the 201st sample's labels are gone with it
  EXPECT_EQ(ex.samples.back().line, 200u);

  LimitBreach breach;
  DcgmReadings d = ReadDcgm(ex, {}, &breach);
  EXPECT_EQ(d.records.size(), 128u);
  EXPECT_EQ(breach.limit, "devices_per_node");
  EXPECT_EQ(breach.count, 129u);

  // Without limits everything is read (the default for trusted captures and tests).
  EXPECT_EQ(ReadDcgm(ex).records.size(), 200u);
}

TEST(BodyLimits, ParserAtTheSampleLimitIsNotHit) {
  expo::Exposition ex;
  expo::Limits parse;
  parse.max_samples = 3;
  expo::Parse(Devices(3), ex, parse);
  EXPECT_FALSE(ex.sample_limit_hit);
  EXPECT_EQ(ex.samples.size(), 3u);
}

// A query API answers for many nodes: the limits apply per node, and a node over one is left
// out whole while the others are read.
TEST(BodyLimits, QueryApiNodesAreLimitedOneByOne) {
  std::vector<RepairedSeries> series;
  auto add = [&](const std::string& node, int gpu) {
    RepairedSeries s;
    s.name = "DCGM_FI_DEV_GPU_TEMP";
    s.labels = {{"UUID", node + "-" + std::to_string(gpu)}, {"gpu", std::to_string(gpu)}};
    s.node = node;
    s.value = 40;
    series.push_back(std::move(s));
  };
  for (int g = 0; g < 2; ++g) add("small", g);
  for (int g = 0; g < 3; ++g) add("big", g);
  std::vector<std::string> rejected;
  auto nodes = ReadPromSeries(series, With(&BodyLimits::devices_per_node, 2), &rejected);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].node, "small");
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_THAT(rejected[0], HasSubstr("node big: rejected whole: 3 devices on one node"));
  EXPECT_EQ(ReadPromSeries(series, With(&BodyLimits::samples, 2), &rejected).size(), 1u);
}

}  // namespace
}  // namespace gpuattr::sources
