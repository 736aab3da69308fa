#include "gpuattr/discovery/pins.h"

#include <gtest/gtest.h>

namespace gpuattr::discovery {
namespace {

TEST(ParsePins, PodAndServicePins) {
  auto pins =
      ParsePins({"gpu-operator/nvidia-dcgm-exporter:9400", "monitoring/svc/prometheus:web"});
  ASSERT_TRUE(pins.ok()) << pins.error().message;
  ASSERT_EQ(pins->pods.size(), 1u);
  EXPECT_EQ(pins->pods[0].namespace_, "gpu-operator");
  EXPECT_EQ(pins->pods[0].pod_prefix, "nvidia-dcgm-exporter");
  EXPECT_EQ(pins->pods[0].port, 9400);
  ASSERT_EQ(pins->services.size(), 1u);
  EXPECT_EQ(pins->services[0].service, "prometheus");
  EXPECT_EQ(pins->services[0].port, "web");
}

TEST(ParsePins, ClearErrors) {
  struct Case {
    std::string text;
    std::string expect;
  } cases[] = {
      {"no-slash:9400", "exactly one '/'"},
      {"ns/pod", "missing \":port\""},
      {"ns/pod:0", "1..65535"},
      {"ns/pod:70000", "1..65535"},
      {"ns/pod:abc", "1..65535"},
      {"NS/pod:9400", "namespace \"NS\""},
      {"ns/:9400", "pod prefix"},
      {"ns/service/prom:9090", "ns/svc/name:port"},
      {"ns/svc/prom:99999", "1..65535"},
      {"ns/svc/prom", "missing"},
  };
  for (const auto& c : cases) {
    auto r = ParsePins({c.text});
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message.find("\"" + c.text + "\""), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(c.expect), std::string::npos) << r.error().message;
  }
}

TEST(ResolvePins, PrefixMatchesRunningPodsOfTheNamespace) {
  kube::ClusterObjects o;
  auto add = [&](std::string ns, std::string name, std::string phase) {
    kube::Pod p;
    p.namespace_ = std::move(ns);
    p.name = std::move(name);
    p.uid = "u-" + p.name;
    p.node_name = "n1";
    p.phase = std::move(phase);
    o.pods[p.Key()] = p;
  };
  add("mon", "telemetry-abc", "Running");
  add("mon", "telemetry-def", "Running");
  add("mon", "telemetry-old", "Failed");
  add("mon-2", "telemetry-x", "Running");
  add("mon", "other", "Running");
  auto pins = ParsePins({"mon/telemetry-:9100", "mon/absent:1", "a/svc/prom:9090"});
  ASSERT_TRUE(pins.ok());
  PinnedCandidates r = ResolvePins(*pins, o);
  ASSERT_EQ(r.candidates.size(), 2u);
  EXPECT_EQ(r.candidates[0].Key(), "mon/telemetry-abc:9100");
  EXPECT_TRUE(r.candidates[0].pinned);
  EXPECT_EQ(r.candidates[0].port_source, "pin");
  EXPECT_EQ(r.candidates[1].Key(), "mon/telemetry-def:9100");
  ASSERT_EQ(r.statuses.size(), 3u);
  EXPECT_EQ(r.statuses[0].matched_pods.size(), 2u);
  EXPECT_NE(r.statuses[1].note.find("no Running pod"), std::string::npos);
  EXPECT_EQ(r.statuses[2].kind, "service");
  EXPECT_NE(r.statuses[2].note.find("used only when no exporter pod answers"), std::string::npos);
}

}  // namespace
}  // namespace gpuattr::discovery
