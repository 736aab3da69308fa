#include "gpuattr/app/session_factory.h"

#include <gtest/gtest.h>

namespace gpuattr::app {
namespace {

TEST(SessionFactory, ConfigBecomesSessionOptions) {
  Config config;
  auto pod = ParseTargetPin("gpu-operator/nvidia-dcgm-exporter:9400");
  auto svc = ParseTargetPin("monitoring/svc/prometheus:9090");
  ASSERT_TRUE(pod.ok() && svc.ok());
  config.targets = {*pod, *svc};
  config.scrape.concurrency = 3;
  config.scrape.timeout = std::chrono::seconds(7);
  config.scrape.limits.body_bytes = 1 << 20;
  config.scrape.limits.devices_per_node = 5;
  config.scrape.limits.query_api_body_bytes = 3 << 20;
  config.discovery.trust.exporters = {{"gpu-mon", {{"app", "x"}}}};
  config.discovery.trust.query_api_namespaces = {"obs"};
  config.discovery.trust.exporter_namespaces = {"gpu-ops"};
  config.discovery.not_inference_cache = std::chrono::minutes(5);
  config.discovery.inference_probes_per_cycle = 9;
  KubeSessionOptions o = SessionOptionsFromConfig(config);
  ASSERT_EQ(o.discovery.pins.pods.size(), 1u);
  EXPECT_EQ(o.discovery.pins.pods[0].namespace_, "gpu-operator");
  EXPECT_EQ(o.discovery.pins.pods[0].pod_prefix, "nvidia-dcgm-exporter");
  EXPECT_EQ(o.discovery.pins.pods[0].port, 9400);
  ASSERT_EQ(o.discovery.pins.services.size(), 1u);
  EXPECT_EQ(o.discovery.pins.services[0].service, "prometheus");
  EXPECT_EQ(o.discovery.pins.services[0].port, "9090");
  EXPECT_EQ(o.discovery.scrape.concurrency, 3u);
  EXPECT_EQ(o.discovery.scrape.timeout, std::chrono::seconds(7));
  EXPECT_EQ(o.discovery.scrape.limits.body_bytes, 1u << 20);
  EXPECT_EQ(o.discovery.scrape.limits.devices_per_node, 5u);
  EXPECT_EQ(o.discovery.scrape.limits.samples, 200'000u);
  EXPECT_EQ(o.discovery.query_api.max_body_bytes, 3u << 20);
  EXPECT_EQ(o.discovery.query_api.limits, o.discovery.scrape.limits);
  EXPECT_EQ(o.discovery.trust_rules, config.discovery.trust.exporters);
  EXPECT_EQ(o.discovery.query_api.trusted_namespaces, std::vector<std::string>{"obs"});
  EXPECT_EQ(o.discovery.exporter_namespaces, std::vector<std::string>{"gpu-ops"});
  EXPECT_EQ(o.discovery.ttls.inference_negative, std::chrono::minutes(5));
  EXPECT_EQ(o.discovery.ttls.result, std::chrono::seconds(60));
  EXPECT_EQ(o.discovery.inference_probes_per_cycle, 9u);
}

TEST(SessionFactory, MissingKubeconfigIsAnErrorNamingIt) {
  Config config;
  config.kubeconfig = "/nonexistent/gpuattr-test/kubeconfig";
  auto r = MakeKubeSessions(config);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("/nonexistent/gpuattr-test/kubeconfig"), std::string::npos)
      << r.error().message;
}

}  // namespace
}  // namespace gpuattr::app
