// The series budget per node shape (docs/performance.md#series-budget): the exposition of a
// generated two-node cluster (one whole-GPU node, one MIG node: the scale benchmark's two shapes,
// one GPU pod per device, each its own workload) is counted per node, a workload's series going
// to its pod's node, as do a pod's series that carry no node label. A change that adds series per
// device, pod or node fails here until the documented budget says so. The same cycle guards the
// streaming render: one cluster of several exporters writes every family in one run.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "gpuattr/metrics/families.h"
#include "gpuattr/metrics/text_writer.h"
#include "gpuattr/model/snapshot.h"
#include "support/generated_cluster.h"
#include "support/session_harness.h"
#include "support/snapshots.h"

namespace gpuattr::testing {
namespace {

using std::chrono::seconds;

std::string Render(const model::CycleResult& r) {
  return metrics::RenderText(SnapshotOf("fake", r));
}

// The third cycle of a generated two-node cluster (counters and rightsizing's observations past
// their first cycle); null when a cycle failed (the failure is reported).
std::shared_ptr<const SessionCycle> ThirdCycleOfTwoNodes(GeneratedClusterInfo& info) {
  GeneratedClusterSpec spec;
  spec.nodes = 2;
  Scenario scenario = GenerateCluster(spec, &info);
  EXPECT_EQ(info.devices, 8u + 24u);  // 8 whole cards; 8 cards of 3 MIG slices

  app::KubeSessionOptions options;
  options.cache.services = false;
  SessionHarness h;
  if (!h.Start(std::move(scenario), options)) return ADD_FAILURE() << "harness", nullptr;
  std::shared_ptr<const SessionCycle> c;
  for (int n = 0; n < 3; ++n) {
    if (n > 0) {
      if (!h.WaitForWatches()) return ADD_FAILURE() << "watches", nullptr;
      h.clock.Advance(seconds(20));
    }
    c = h.Cycle();
    if (!c->up) return ADD_FAILURE() << (c->errors.empty() ? "down" : c->errors[0]), nullptr;
  }
  return c;
}

// The daemon renders one cluster family by family (metrics/text_writer.h, RenderGroupByGroup):
// every group must write each family in one run, in table order, whatever the number of nodes,
// exporters and namespaces; a group written exporter by exporter (as discovery's once was) splits
// its families, and the rendering says so (false) instead of streaming.
TEST(StreamingRender, AClusterOfSeveralExportersWritesEveryFamilyInOneRun) {
  GeneratedClusterInfo info;
  const auto c = ThirdCycleOfTwoNodes(info);
  ASSERT_TRUE(c);
  ASSERT_GE(c->result.discovery->exporters.size(), 2u);
  const model::Snapshot s = SnapshotOf("fake", c->result);
  std::string streamed;
  size_t largest = 0;
  EXPECT_TRUE(metrics::RenderGroupByGroup(
      s, [&](std::string_view p) { streamed += p; }, largest));
  EXPECT_EQ(streamed, metrics::RenderText(s));
}

TEST(SeriesBudget, EachNodeShapeServesItsDocumentedSeries) {
  GeneratedClusterInfo info;
  const auto c = ThirdCycleOfTwoNodes(info);
  ASSERT_TRUE(c);

  static const std::regex label(R"re(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)")re");
  struct Sample {
    std::string family;
    std::map<std::string, std::string> labels;
  };
  std::vector<Sample> samples;
  std::istringstream text(Render(c->result));
  for (std::string line; std::getline(text, line);) {
    if (line.empty() || line[0] == '#') continue;
    Sample s;
    s.family = line.substr(0, line.find_first_of("{ "));
    const size_t open = line.find('{'), close = line.rfind('}');
    if (open != std::string::npos && close != std::string::npos) {
      const std::string inside = line.substr(open + 1, close - open - 1);
      for (std::sregex_iterator it(inside.begin(), inside.end(), label), end; it != end; ++it)
        s.labels[(*it)[1]] = (*it)[2];
    }
    samples.push_back(std::move(s));
  }

  // A pod's and a workload's node: gpuattr_pod_info names all three.
  std::map<std::string, std::string> pod_node, workload_node;  // namespace/name → node
  for (const Sample& s : samples) {
    if (s.family != "gpuattr_pod_info") continue;
    const std::string& ns = s.labels.at("namespace");
    pod_node[ns + "/" + s.labels.at("pod")] = s.labels.at("node");
    workload_node[ns + "/" + s.labels.at("workload")] = s.labels.at("node");
  }
  ASSERT_EQ(pod_node.size(), info.gpu_pods);
  ASSERT_EQ(workload_node.size(), info.gpu_pods) << "one workload per GPU pod";

  std::map<std::string, size_t> per_node;
  std::map<std::string, bool> mig;              // node → has MIG slices
  std::map<std::string, size_t> per_namespace;  // the rest: namespaces' series
  size_t cluster_wide = 0;                      // and the cluster's and gpuattr's own
  for (const Sample& s : samples) {
    std::string node;
    if (auto it = s.labels.find("node"); it != s.labels.end()) {
      node = it->second;
    } else if (s.labels.count("pod") && s.family.rfind("gpuattr_pod_", 0) == 0) {
      node = pod_node.at(s.labels.at("namespace") + "/" + s.labels.at("pod"));
    } else if (s.family.rfind("gpuattr_workload_", 0) == 0) {
      node = workload_node.at(s.labels.at("namespace") + "/" + s.labels.at("workload"));
    }
    if (node.empty()) {
      if (auto it = s.labels.find("namespace"); it != s.labels.end())
        ++per_namespace[it->second];
      else
        ++cluster_wide;
      continue;
    }
    ++per_node[node];
    if (s.family == "gpuattr_device_info" && s.labels.count("gpu_instance")) mig[node] = true;
  }
  ASSERT_EQ(per_node.size(), 2u);
  for (const auto& [node, series] : per_node) {
    // docs/performance.md#series-budget: 32 + 8 × 5 + 8 × 9 + 8 × 16 + 8 × 7 for 8 whole GPUs,
    // 35 + 8 × 5 + 24 × 9 + 24 × 16 + 24 × 7 for 8 cards of 3 slices and two resources.
    EXPECT_EQ(series, mig[node] ? 843u : 328u)
        << node << (mig[node] ? " (MIG)" : " (whole GPUs)")
        << ": update docs/performance.md#series-budget and the README's figure with the change";
  }
  // A namespace with GPU pods: 10 families, gpu_hours_total per basis (3) and requested_devices
  // per resource its pods ask for (one in each generated namespace).
  ASSERT_FALSE(per_namespace.empty());
  for (const auto& [ns, series] : per_namespace) EXPECT_EQ(series, 14u) << ns;
  // The cluster's and gpuattr's own: a few dozen, whatever the cluster's size.
  EXPECT_LT(cluster_wide, 60u);
}

}  // namespace
}  // namespace gpuattr::testing
