// The read-path choice (query_api.h): above discovery.query_api_above_gpu_nodes GPU nodes a
// trusted query API holding the GPU series replaces one proxy GET per exporter. Against an
// in-memory transport that counts every request.
#include <gtest/gtest.h>

#include "gpuattr/discovery/discovery.h"
#include "gpuattr/discovery/query_api.h"
#include "gpuattr/kube/api_client.h"
#include "gpuattr/metrics/discovery_metrics.h"
#include "gpuattr/metrics/families.h"
#include "gpuattr/report/status_page.h"
#include "gpuattr/scrape/cycle.h"
#include "support/fake_clock.h"
#include "support/fake_transport.h"
#include "support/pods.h"

namespace gpuattr::discovery {
namespace {

using std::chrono::seconds;
using testing::FakeReply;
using testing::FakeTransport;

constexpr char kProbeHit[] = R"({"status":"success","data":{"resultType":"vector","result":[
  {"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE"},"value":[1700000000,"3"]}]}})";

std::string DcgmBody(int gpu) {
  return "DCGM_FI_DEV_POWER_USAGE{gpu=\"" + std::to_string(gpu) + "\",UUID=\"GPU-" +
         std::to_string(gpu) + "\"} 100\n";
}

// The query API's answer: one GPU per node, with the node label and the scrape target's
// namespace/pod (the node's exporter pod, as the Prometheus Operator labels it).
std::string DataAnswer(int nodes) {
  std::string r = R"({"status":"success","data":{"resultType":"vector","result":[)";
  for (int i = 0; i < nodes; ++i)
    r += std::string(i ? "," : "") +
         R"({"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","gpu":"0","UUID":"GPU-N)" +
         std::to_string(i) + R"(","node":"gpu-)" + std::to_string(i) +
         R"(","namespace":"gpu-operator","pod":"dcgm-exporter-gpu-)" + std::to_string(i) +
         R"("},"value":[1700000000,"100"]})";
  return r + "]}}";
}

// `nodes` GPU nodes, each with a dcgm-exporter pod, and a Prometheus in namespace `api_ns`.
std::shared_ptr<kube::ClusterObjects> Cluster(int nodes, const std::string& api_ns) {
  auto o = std::make_shared<kube::ClusterObjects>();
  for (int i = 0; i < nodes; ++i) {
    kube::Node n;
    n.name = "gpu-" + std::to_string(i);
    n.capacity["nvidia.com/gpu"] = 1;
    o->nodes[n.name] = n;
    kube::Pod p = gpuattr::testing::MakeDaemonSetPod("gpu-operator", "dcgm-exporter-" + n.name,
                                                     n.name, "nvcr.io/nvidia/k8s/dcgm-exporter:3.3",
                                                     {{"metrics", 9400}});
    o->pods[p.Key()] = p;
  }
  kube::Node cpu;
  cpu.name = "cpu-0";
  o->nodes[cpu.name] = cpu;
  kube::Service s;
  s.namespace_ = api_ns;
  s.name = "prometheus-k8s";
  s.ports = {{"web", 9090}};
  o->services[s.Key()] = s;
  return o;
}

std::string ExporterPath(int i) {
  return "/api/v1/namespaces/gpu-operator/pods/dcgm-exporter-gpu-" + std::to_string(i) +
         ":9400/proxy/metrics";
}
std::string QueryPrefix(const std::string& ns) {
  return "/api/v1/namespaces/" + ns + "/services/prometheus-k8s:9090/proxy/api/v1/query?query=";
}

struct Fixture {
  FakeClock clock;
  std::shared_ptr<FakeTransport> transport = std::make_shared<FakeTransport>("test");
  std::shared_ptr<kube::ApiClient> client;
  std::unique_ptr<scrape::Fetcher> fetcher;
  std::unique_ptr<Discovery> discovery;

  Fixture(size_t above, int nodes, const std::string& api_ns, DiscoveryOptions options = {}) {
    kube::ApiClientOptions ao;
    ao.clock = &clock;
    ao.max_attempts = 1;
    client = std::make_shared<kube::ApiClient>(transport, ao);
    fetcher = scrape::MakeApiFetcher(client);
    options.query_api.prefer_above_gpu_nodes = above;
    discovery = std::make_unique<Discovery>("test", std::move(options), clock);
    for (int i = 0; i < nodes; ++i)
      transport->SetDefault(ExporterPath(i), FakeReply::Json(DcgmBody(i)));
    transport->SetDefault(QueryPrefix(api_ns) + "count", FakeReply::Json(kProbeHit));
    transport->SetDefault(QueryPrefix(api_ns) + "%7B", FakeReply::Json(DataAnswer(nodes)));
  }
  size_t ExporterGets() const {
    return transport->CountRequests("/api/v1/namespaces/gpu-operator/pods/");
  }
  size_t DataQueries(const std::string& ns) const {
    return transport->CountRequests(QueryPrefix(ns) + "%7B");
  }
};

TEST(ReadPath, DescribeSaysWhichPathAndWhy) {
  ReadPathChoice below = DescribeReadPath({3, 200, "", ""});
  EXPECT_EQ(below.path, ReadPath::kExporters);
  EXPECT_EQ(below.reason, "below_threshold");
  EXPECT_EQ(below.detail,
            "3 GPU nodes, at most 200 (discovery.query_api_above_gpu_nodes): one proxy GET per "
            "exporter");
  EXPECT_EQ(DescribeReadPath({1000, 0, "", ""}).reason, "disabled");
  ReadPathChoice none = DescribeReadPath({201, 200, "", ""});
  EXPECT_EQ(none.path, ReadPath::kExporters);
  EXPECT_EQ(none.reason, "no_trusted_query_api");
  ReadPathChoice preferred = DescribeReadPath({201, 200, "monitoring/prom:9090", ""});
  EXPECT_EQ(preferred.path, ReadPath::kQueryApi);
  EXPECT_EQ(preferred.reason, "preferred");
  EXPECT_NE(preferred.detail.find("monitoring/prom:9090"), std::string::npos);
  ReadPathChoice fallback = DescribeReadPath({5, 200, "", "monitoring/prom:9090"});
  EXPECT_EQ(fallback.path, ReadPath::kQueryApi);
  EXPECT_EQ(fallback.reason, "fallback");
  EXPECT_EQ(ReadPathName(ReadPath::kQueryApi), "query_api");
  EXPECT_EQ(ReadPathName(ReadPath::kExporters), "exporters");
  EXPECT_FALSE(PreferQueryApi(200, 200));
  EXPECT_TRUE(PreferQueryApi(201, 200));
  EXPECT_FALSE(PreferQueryApi(100000, 0));
}

TEST(ReadPath, GpuNodesAdvertiseNvidiaOrPublishDraGpus) {
  kube::ClusterObjects o;
  kube::Node a, b, c, d;
  a.name = "a";
  a.capacity["nvidia.com/gpu"] = 8;
  b.name = "b";
  b.allocatable["nvidia.com/mig-1g.10gb"] = 0;  // even at 0
  c.name = "c";
  c.capacity["example.com/fpga"] = 1;
  d.name = "d";
  for (const auto& n : {a, b, c, d}) o.nodes[n.name] = n;
  kube::ResourceSlice s;
  s.name = "s";
  s.driver = "gpu.nvidia.com";
  s.node_name = "d";
  s.devices.push_back({});
  o.resource_slices[s.name] = s;
  kube::ResourceSlice again = s;  // a second slice of the same node counts once
  again.name = "s2";
  o.resource_slices[again.name] = again;
  EXPECT_EQ(CountGpuNodes(o), 3u);
}

TEST(ReadPath, TrustedMeansPinnedOrInATrustedNamespace) {
  QueryApiOptions opts;
  QueryApiCandidate c;
  c.namespace_ = "monitoring";
  EXPECT_TRUE(TrustedQueryApi(c, opts));
  c.namespace_ = "team-a";
  EXPECT_FALSE(TrustedQueryApi(c, opts));
  c.pinned = true;
  EXPECT_TRUE(TrustedQueryApi(c, opts));
}

TEST(ReadPath, BelowTheThresholdEveryExporterIsReadByProxy) {
  Fixture f(/*above=*/5, /*nodes=*/4, "monitoring");
  auto o = Cluster(4, "monitoring");
  scrape::ScrapeResult r = scrape::ReadCycle(*f.discovery, *f.fetcher, *o);
  EXPECT_EQ(f.ExporterGets(), 4u);
  EXPECT_EQ(f.transport->CountRequests("/api/v1/namespaces/monitoring/"), 0u);
  EXPECT_EQ(r.readings.size(), 4u);
  EXPECT_EQ(r.report.read_path, "exporters");
  EXPECT_EQ(r.report.read_path_reason, "below_threshold");
}

TEST(ReadPath, AboveTheThresholdATrustedQueryApiReplacesTheProxyGets) {
  Fixture f(/*above=*/3, /*nodes=*/4, "monitoring");
  auto o = Cluster(4, "monitoring");
  for (int cycle = 0; cycle < 3; ++cycle) {
    scrape::ScrapeResult r = scrape::ReadCycle(*f.discovery, *f.fetcher, *o);
    EXPECT_EQ(f.ExporterGets(), 0u) << "cycle " << cycle;
    EXPECT_EQ(f.DataQueries("monitoring"), static_cast<size_t>(cycle + 1));
    EXPECT_EQ(r.report.read_path, "query_api");
    EXPECT_EQ(r.report.read_path_reason, "preferred");
    ASSERT_EQ(r.readings.size(), 4u);  // one per node, from the API
    EXPECT_EQ(r.readings[0].pod, "prometheus-k8s");
    f.clock.Advance(seconds(20));
  }
  EXPECT_EQ(f.transport->CountRequests(QueryPrefix("monitoring") + "count"), 1u);  // probed once
}

TEST(ReadPath, AnUntrustedQueryApiIsNotPreferred) {
  Fixture f(/*above=*/3, /*nodes=*/4, "team-a");
  auto o = Cluster(4, "team-a");
  scrape::ScrapeResult r = scrape::ReadCycle(*f.discovery, *f.fetcher, *o);
  EXPECT_EQ(f.ExporterGets(), 4u);
  EXPECT_EQ(f.transport->CountRequests("/api/v1/namespaces/team-a/"), 0u);
  EXPECT_EQ(r.report.read_path, "exporters");
  EXPECT_EQ(r.report.read_path_reason, "no_trusted_query_api");
}

TEST(ReadPath, APinnedExporterIsStillReadAndWinsForItsNode) {
  DiscoveryOptions options;
  options.pins.pods.push_back({"gpu-operator", "dcgm-exporter-gpu-1", 9400, "pin"});
  Fixture f(/*above=*/3, /*nodes=*/4, "monitoring", options);
  auto o = Cluster(4, "monitoring");
  scrape::ScrapeResult r = scrape::ReadCycle(*f.discovery, *f.fetcher, *o);
  EXPECT_EQ(f.ExporterGets(), 1u);
  EXPECT_EQ(f.transport->CountRequests(ExporterPath(1)), 1u);
  EXPECT_EQ(r.report.read_path_reason, "preferred");
  size_t for_gpu1 = 0;
  for (const auto& e : r.readings)
    if (e.node == "gpu-1") {
      ++for_gpu1;
      EXPECT_EQ(e.pod, "dcgm-exporter-gpu-1");
    }
  EXPECT_EQ(for_gpu1, 1u);
  EXPECT_EQ(r.readings.size(), 4u);
}

TEST(ReadPath, AShardCountsTheWholeClustersGpuNodes) {
  Fixture f(/*above=*/3, /*nodes=*/4, "monitoring");
  auto whole = Cluster(4, "monitoring");
  auto share = std::make_shared<kube::ClusterObjects>(*whole);
  for (int i = 1; i < 4; ++i) {
    share->nodes.erase("gpu-" + std::to_string(i));
    share->pods.erase("gpu-operator/dcgm-exporter-gpu-" + std::to_string(i));
  }
  scrape::ScrapeResult r =
      scrape::ReadCycle(*f.discovery, *f.fetcher, *share, nullptr, whole.get());
  EXPECT_EQ(r.report.read_path_reason, "preferred");
  EXPECT_EQ(f.ExporterGets(), 0u);
  // Without the whole cluster, the share alone (1 GPU node) is below the threshold.
  Fixture g(/*above=*/3, /*nodes=*/4, "monitoring");
  EXPECT_EQ(scrape::ReadCycle(*g.discovery, *g.fetcher, *share).report.read_path_reason,
            "below_threshold");
}

TEST(ReadPath, TheMetricSaysWhichPath) {
  Fixture f(/*above=*/3, /*nodes=*/4, "monitoring");
  auto o = Cluster(4, "monitoring");
  scrape::ScrapeResult r = scrape::ReadCycle(*f.discovery, *f.fetcher, *o);
  model::Snapshot s;
  s.complete = true;
  model::ClusterSnapshot c;
  c.cluster = "test";
  c.latest.up = true;
  c.latest.discovery = std::make_shared<const DiscoveryReport>(r.report);
  s.clusters.push_back(c);
  const std::string text = metrics::RenderText(s);
  EXPECT_NE(text.find("gpuattr_discovery_read_path{cluster=\"test\",path=\"query_api\","
                      "reason=\"preferred\"} 1"),
            std::string::npos)
      << text;
}

TEST(ReadPath, TheStatusPageSaysWhichPathAndWhy) {
  Fixture f(/*above=*/3, /*nodes=*/4, "monitoring");
  auto o = Cluster(4, "monitoring");
  DiscoveryReport r = scrape::ReadCycle(*f.discovery, *f.fetcher, *o).report;
  r.shard = "shard 1 of 3 owns 2 of 5 nodes";
  const std::string page = report::RenderDiscoverySection(r, 1700000000);
  EXPECT_NE(page.find("GPU series read from a query API (preferred): 4 GPU nodes, more than 3 "
                      "(discovery.query_api_above_gpu_nodes): the GPU series come from the "
                      "trusted query API monitoring/prometheus-k8s:9090"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("shard 1 of 3 owns 2 of 5 nodes"), std::string::npos);
}

}  // namespace
}  // namespace gpuattr::discovery
