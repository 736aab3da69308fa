// The large-cluster read path against the fake apiserver's request log: a generated cluster of
// GPU nodes (one dcgm-exporter DaemonSet pod each) with a Prometheus in `monitoring` that holds
// their series. Above discovery.query_api_above_gpu_nodes: one query per cycle and no proxy GET
// to any exporter; at or below it: one proxy GET per exporter and no query.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "gpuattr/app/kube_session.h"
#include "gpuattr/kube/http_transport.h"
#include "gpuattr/kube/kubeconfig.h"
#include "support/fake_apiserver.h"
#include "support/fake_clock.h"
#include "support/paths.h"
#include "support/subprocess.h"
#include "test_paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

std::string NodeName(int i) { return "gpu-" + std::to_string(i); }
std::string ExporterName(int i) { return "nvidia-dcgm-exporter-" + std::to_string(1000 + i); }

// `nodes` GPU nodes with 2 GPUs each, a dcgm-exporter DaemonSet pod per node, a CPU node, and
// monitoring/prometheus-k8s answering the probe and the data query with every node's series.
Scenario GeneratedCluster(int nodes) {
  Scenario sc;
  sc.name = "generated-" + std::to_string(nodes);
  std::string data = R"({"status":"success","data":{"resultType":"vector","result":[)";
  for (int i = 0; i < nodes; ++i) {
    sc.objects.push_back(json{
        {"apiVersion", "v1"},
        {"kind", "Node"},
        {"metadata", {{"name", NodeName(i)}}},
        {"status",
         {{"capacity", {{"nvidia.com/gpu", "2"}}}, {"allocatable", {{"nvidia.com/gpu", "2"}}}}}});
    sc.objects.push_back(json{
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata",
         {{"name", ExporterName(i)},
          {"namespace", "gpu-operator"},
          {"labels", {{"app", "nvidia-dcgm-exporter"}}},
          {"ownerReferences", json::array({{{"apiVersion", "apps/v1"},
                                            {"kind", "DaemonSet"},
                                            {"name", "nvidia-dcgm-exporter"},
                                            {"uid", "ds-uid"},
                                            {"controller", true}}})}}},
        {"spec",
         {{"nodeName", NodeName(i)},
          {"containers",
           json::array(
               {{{"name", "exporter"},
                 {"image", "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04"},
                 {"ports", json::array({{{"name", "metrics"}, {"containerPort", 9400}}})}}})}}},
        {"status",
         {{"phase", "Running"},
          {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})},
          {"containerStatuses", json::array({{{"name", "exporter"}, {"ready", true}}})}}}});
    std::string body;
    for (int g = 0; g < 2; ++g) {
      const std::string uuid = "GPU-" + std::to_string(i) + "-" + std::to_string(g);
      body += "DCGM_FI_DEV_POWER_USAGE{gpu=\"" + std::to_string(g) + "\",UUID=\"" + uuid +
              "\",modelName=\"NVIDIA L40S\"} 120\n";
      data += std::string(i + g ? "," : "") +
              R"({"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","gpu":")" + std::to_string(g) +
              R"(","UUID":")" + uuid + R"(","modelName":"NVIDIA L40S","node":")" + NodeName(i) +
              R"(","namespace":"gpu-operator","pod":")" + ExporterName(i) +
              R"(","job":"dcgm"},"value":[1700000000,"120"]})";
    }
    sc.exporter_bodies[ExporterKey("gpu-operator", ExporterName(i), "9400")] = {body};
  }
  data += "]}}";
  sc.objects.push_back(json{{"apiVersion", "v1"},
                            {"kind", "Node"},
                            {"metadata", {{"name", "cpu-0"}}},
                            {"status", {{"capacity", {{"cpu", "8"}}}}}});
  sc.objects.push_back(
      json{{"apiVersion", "v1"},
           {"kind", "Service"},
           {"metadata", {{"name", "prometheus-k8s"}, {"namespace", "monitoring"}}},
           {"spec", {{"ports", json::array({{{"name", "web"}, {"port", 9090}}})}}}});
  const std::string probe =
      R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE"},"value":[1700000000,")" +
      std::to_string(2 * nodes) + R"("]}]}})";
  sc.prometheus[ExporterKey("monitoring", "prometheus-k8s", "9090")] = {
      {PromAnswer::Match::kContains, "count by (__name__)", 200, probe},
      {PromAnswer::Match::kContains, "__name__=~", 200, data}};
  return sc;
}

struct Counts {
  size_t exporter_gets = 0, data_queries = 0, probes = 0;
};

Counts Count(const FakeApiServer& server) {
  Counts c;
  for (const RequestRecord& r : server.Requests()) {
    if (r.path.starts_with("/api/v1/namespaces/gpu-operator/pods/")) ++c.exporter_gets;
    if (r.path.starts_with("/api/v1/namespaces/monitoring/services/prometheus-k8s:9090/proxy")) {
      if (r.query.find("count") != std::string::npos)
        ++c.probes;
      else
        ++c.data_queries;
    }
  }
  return c;
}

// Three cycles of an in-process session with the given threshold.
struct Cycles {
  Counts counts;
  std::vector<std::string> reasons;
  size_t devices = 0;  // attributed devices of the last cycle
};

Cycles RunCycles(int nodes, size_t above) {
  Cycles out;
  FakeApiServer server(GeneratedCluster(nodes));
  EXPECT_TRUE(server.Start().ok());
  const fs::path kc = fs::temp_directory_path() /
                      ("gpuattr-readpath-" + std::to_string(server.port()) + ".kubeconfig");
  EXPECT_TRUE(server.WriteKubeconfig(kc).ok());
  kube::KubeconfigSource src;
  src.explicit_path = kc.string();
  auto conns = kube::LoadConnections(src, {});
  fs::remove(kc);
  EXPECT_TRUE(conns.ok());
  if (!conns.ok()) return out;
  auto transport = kube::MakeTransport(conns->front());
  EXPECT_TRUE(transport.ok());
  if (!transport.ok()) return out;
  FakeClock clock;
  app::KubeSessionOptions o;
  o.clock = &clock;
  o.sync_timeout = 20s;
  o.discovery.query_api.prefer_above_gpu_nodes = above;
  app::KubeClusterSession session("gen", std::shared_ptr<kube::Transport>(std::move(*transport)),
                                  o);
  for (int cycle = 0; cycle < 3; ++cycle) {
    model::CycleResult r = session.RunCycle();
    EXPECT_TRUE(r.up);
    if (r.discovery) out.reasons.push_back(r.discovery->read_path_reason);
    if (r.output) out.devices = r.output->attribution.devices.size();
    clock.Advance(20s);
  }
  out.counts = Count(server);
  session.Cancel();
  server.Stop();
  return out;
}

TEST(ReadPathAgainstFakeCluster, AboveTheThresholdOneQueryPerCycleAndNoExporterGets) {
  Cycles c = RunCycles(/*nodes=*/12, /*above=*/10);
  EXPECT_EQ(c.counts.exporter_gets, 0u);
  EXPECT_EQ(c.counts.data_queries, 3u);  // one per cycle
  EXPECT_EQ(c.counts.probes, 1u);        // the verdict is cached
  EXPECT_EQ(c.reasons, (std::vector<std::string>{"preferred", "preferred", "preferred"}));
  EXPECT_EQ(c.devices, 24u);  // every node's GPUs, from the query API
}

TEST(ReadPathAgainstFakeCluster, AtOrBelowTheThresholdOneProxyGetPerExporter) {
  Cycles c = RunCycles(/*nodes=*/10, /*above=*/10);
  EXPECT_EQ(c.counts.exporter_gets, 30u);  // 10 exporters × 3 cycles (the probe is the scrape)
  EXPECT_EQ(c.counts.data_queries, 0u);
  EXPECT_EQ(c.counts.probes, 0u);
  EXPECT_EQ(c.reasons,
            (std::vector<std::string>{"below_threshold", "below_threshold", "below_threshold"}));
  EXPECT_EQ(c.devices, 20u);
}

// The binary reads the threshold from its config file and says which path it took.
TEST(ReadPathAgainstFakeCluster, TheBinaryTakesTheThresholdFromItsConfig) {
  FakeApiServer server(GeneratedCluster(6));
  ASSERT_TRUE(server.Start().ok());
  char tmpl[] = "/tmp/gpuattr-readpath-bin-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  ASSERT_TRUE(server.WriteKubeconfig(dir / "kubeconfig").ok());
  std::ofstream(dir / "gpuattr.yaml") << "discovery:\n  query_api_above_gpu_nodes: 5\n";
  Child child = SpawnChild(
      {DaemonBinary(), "--once", "--kubeconfig", (dir / "kubeconfig").string(), "--config.file",
       (dir / "gpuattr.yaml").string(), "--state.file", (dir / "state.json").string()},
      EnvironmentWithout({}), dir);
  ASSERT_EQ(WaitChild(child.pid, 60s), 0) << SlurpFile(child.err);
  const std::string out = SlurpFile(child.out);
  EXPECT_THAT(out, HasSubstr("gpuattr_discovery_read_path{cluster=\"fake\",path=\"query_api\","
                             "reason=\"preferred\"} 1\n"));
  const Counts counts = Count(server);
  EXPECT_EQ(counts.exporter_gets, 0u);
  EXPECT_EQ(counts.data_queries, 1u);
  server.Stop();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpuattr::testing
