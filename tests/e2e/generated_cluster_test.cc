// Discovery on a generated GPU cluster (docs/design.md#discovery, revised after a 16,000-pod run):
// the fake apiserver serves 128 nodes with 2,048 GPU job pods that declare no port, one
// dcgm-exporter per node, a few vLLM servers and notebooks that declare a port. Over several
// cycles: not one proxy GET to a port-less pod, every exporter read in the first cycle, the vLLM
// servers found within a few cycles, inference probes within the per-cycle budget, no LIST after
// the first cycle.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>

#include "gpuattr/app/kube_session.h"
#include "gpuattr/metrics/discovery_metrics.h"
#include "gpuattr/report/status_page.h"
#include "support/generated_cluster.h"
#include "support/session_harness.h"

namespace gpuattr::testing {
namespace {

using std::chrono::seconds;

constexpr int kNodes = 128;
constexpr int kInference = 6;
constexpr int kNotebooks = 60;
constexpr size_t kBudget = 50;

// "ns/pod" of a pod-proxy path /api/v1/namespaces/NS/pods/NAME:PORT/proxy/metrics.
std::string ProxiedPod(const std::string& path) {
  const std::string ns_at = "/api/v1/namespaces/";
  size_t ns_end = path.find('/', ns_at.size());
  size_t name_at = path.find("/pods/", ns_end);
  if (ns_end == std::string::npos || name_at == std::string::npos) return path;
  name_at += 6;
  size_t name_end = path.find_first_of(":/", name_at);
  return path.substr(ns_at.size(), ns_end - ns_at.size()) + "/" +
         path.substr(name_at, name_end - name_at);
}

TEST(GeneratedCluster, PortlessPodsAreNeverProbedExportersFirstInferenceWithinTheBudget) {
  GeneratedClusterSpec spec;
  spec.nodes = kNodes;
  spec.inference_pods = kInference;
  spec.notebook_pods = kNotebooks;
  GeneratedClusterInfo info;
  Scenario scenario = GenerateCluster(spec, &info);
  ASSERT_EQ(info.exporters, static_cast<size_t>(kNodes));
  ASSERT_GE(info.portless_pods, 2000u);  // "thousands of port-less GPU pods"

  // The pods the proxy may be asked for: exporters, vLLM servers, notebooks (they declare ports).
  std::set<std::string> exporters, servers, notebooks;
  for (const auto& o : scenario.objects) {
    if (o.value("kind", "") != "Pod") continue;
    const std::string key = o["metadata"]["namespace"].get<std::string>() + "/" +
                            o["metadata"]["name"].get<std::string>();
    const std::string name = o["metadata"]["name"];
    if (name.rfind("nvidia-dcgm-exporter-", 0) == 0) exporters.insert(key);
    if (name.rfind("llm-", 0) == 0) servers.insert(key);
    if (name.rfind("notebook-", 0) == 0) notebooks.insert(key);
  }
  ASSERT_EQ(servers.size(), static_cast<size_t>(kInference));
  ASSERT_EQ(notebooks.size(), static_cast<size_t>(kNotebooks));

  app::KubeSessionOptions options;
  options.cache.services = false;
  options.discovery.inference_probes_per_cycle = kBudget;
  SessionHarness h;
  ASSERT_TRUE(h.Start(std::move(scenario), options));

  // Cycle 1: every exporter read, port-less pods counted and left alone, the budget kept.
  auto c1 = h.Cycle();
  ASSERT_TRUE(c1->up) << (c1->errors.empty() ? "" : c1->errors[0]);
  size_t dcgm_up = 0;
  for (const auto& e : c1->report.exporters) dcgm_up += e.kind == "dcgm" && e.up;
  EXPECT_EQ(dcgm_up, static_cast<size_t>(kNodes));
  ASSERT_NE(c1->result.output, nullptr);
  EXPECT_EQ(c1->result.output->attribution.devices.size(), info.devices);
  EXPECT_EQ(c1->report.skipped_no_port, info.portless_pods);
  EXPECT_EQ(c1->report.outcome_counts.at("no_port"), info.portless_pods);
  EXPECT_EQ(c1->report.probed_this_cycle, kNodes + kBudget);
  EXPECT_EQ(c1->report.waiting_first_probe, kInference + kNotebooks - kBudget);
  EXPECT_EQ(c1->report.outcome_counts.at("waiting"), kInference + kNotebooks - kBudget);
  const std::string page = report::RenderDiscoverySection(c1->report, 0);
  EXPECT_NE(page.find(std::to_string(info.portless_pods) + " pods skipped: no declared port"),
            std::string::npos);
  const size_t lists_after_first = h.server->CountRequests("list");

  // Further cycles, 20 s apart: the vLLM servers are found within a few cycles.
  std::map<std::string, size_t> found_in;  // vLLM server → cycle
  auto note_servers = [&](const SessionCycle& c, size_t n) {
    for (const auto& e : c.report.exporters)
      if (e.kind == "vllm" && e.up) found_in.emplace(e.namespace_ + "/" + e.pod, n);
  };
  note_servers(*c1, 1);
  constexpr size_t kCycles = 6;
  for (size_t n = 2; n <= kCycles; ++n) {
    ASSERT_TRUE(h.WaitForWatches());
    h.clock.Advance(seconds(20));
    auto c = h.Cycle();
    ASSERT_TRUE(c->up) << (c->errors.empty() ? "" : c->errors[0]);
    EXPECT_LE(c->report.probed_this_cycle, kBudget) << "cycle " << n;
    EXPECT_EQ(c->report.waiting_first_probe, 0u) << "cycle " << n;
    note_servers(*c, n);
  }
  ASSERT_EQ(found_in.size(), static_cast<size_t>(kInference));
  for (const auto& [pod, n] : found_in) EXPECT_LE(n, 2u) << pod;

  // Over every cycle: no proxy GET to a pod that declares no port, one GET per exporter per cycle,
  // each notebook probed once (its failure is not retried within 2 minutes).
  std::map<std::string, size_t> gets;
  for (const RequestRecord& r : h.server->Requests())
    if (r.verb == "proxy") ++gets[ProxiedPod(r.path)];
  for (const auto& [pod, n] : gets) {
    const bool declares_port = exporters.count(pod) || servers.count(pod) || notebooks.count(pod);
    EXPECT_TRUE(declares_port) << "proxy GET to a port-less pod: " << pod;
    if (exporters.count(pod)) {
      EXPECT_EQ(n, kCycles) << pod;
    }
    if (notebooks.count(pod)) {
      EXPECT_EQ(n, 1u) << pod;
    }
  }
  EXPECT_EQ(gets.size(), exporters.size() + servers.size() + notebooks.size());
  EXPECT_EQ(h.server->CountRequests("list"), lists_after_first);  // steady state: no LIST
}

}  // namespace
}  // namespace gpuattr::testing
