#include "gpuattr/app/session_factory.h"

#include <gtest/gtest.h>

namespace gpuattr::app {
namespace {

// scrape.concurrency auto: 16, or what fits a memory limit by docs/security.md#memory's formula.
TEST(SessionFactory, AutoScrapeConcurrencyFitsTheMemoryLimit) {
  Config config;  // the defaults: auto, 16 MiB bodies, 200,000 samples, 1,000,000 labels
  ASSERT_EQ(config.scrape.concurrency, 0);
  const uint64_t per_read = ReadMemoryBound(config.scrape.limits);
  EXPECT_EQ(per_read, (16u << 20) + 80u * 200'000 + 64u * 1'000'000);  // 96.8 MB
  constexpr uint64_t kMiB = 1 << 20;
  auto resolve = [&](std::optional<uint64_t> limit) {
    return ResolveScrapeConcurrency(config.scrape, limit);
  };
  EXPECT_EQ(resolve(std::nullopt).value, 16);  // a workstation: no limit
  EXPECT_FALSE(resolve(std::nullopt).lowered);
  // The shipped manifests' 1 GiB: (1024 - 256) MiB / 96.8 MB = 8.3.
  EXPECT_EQ(resolve(1024 * kMiB).value, 8);
  EXPECT_TRUE(resolve(1024 * kMiB).lowered);
  EXPECT_EQ(resolve(512 * kMiB).value, 2);    // 268 MB / 96.8 MB = 2.8
  EXPECT_EQ(resolve(200 * kMiB).value, 1);    // below the reserve: one read at a time still
  EXPECT_EQ(resolve(64ull << 30).value, 16);  // room for more than 16: the default
  EXPECT_FALSE(resolve(64ull << 30).lowered);
  // Smaller limits per read fit more reads.
  config.scrape.limits.labels = 100'000;
  config.scrape.limits.samples = 50'000;
  config.scrape.limits.body_bytes = 4 * kMiB;  // 4.2 + 4 + 6.4 MB = 14.6 MB a read
  EXPECT_EQ(resolve(512 * kMiB).value, 16);
  // An explicit value is kept whatever the limit (MakeKubeSessions warns when it cannot fit).
  config.scrape.concurrency = 12;
  EXPECT_EQ(resolve(300 * kMiB).value, 12);
  EXPECT_FALSE(resolve(300 * kMiB).lowered);
}

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
