// A query API's series stand only when the pod Prometheus scraped them from passes the exporter
// rule (trust/query_target.h, docs/design.md#trust; issue 25's second finding): the Prometheus
// Operator's namespace/pod target labels, the classic kubernetes_namespace/kubernetes_pod_name,
// both when both are there, and no target at all only from a pinned query API.
#include "gpuattr/trust/query_target.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "gpuattr/discovery/query_api.h"
#include "gpuattr/trust/vet.h"
#include "support/pods.h"

namespace gpuattr::trust {
namespace {

using sources::LabelPairs;
using sources::RepairedSeries;

kube::ClusterObjects Cluster() {
  kube::ClusterObjects o;
  for (const char* n : {"gpu-a", "gpu-b"}) o.nodes[n] = testing::MakeGpuNode(n, 2);
  std::vector<kube::Pod> pods = {
      testing::MakeDaemonSetPod("gpu-operator", "dcgm-exporter-b", "gpu-b", "dcgm-exporter"),
      // The tenant's: a DaemonSet in its own namespace, a ReplicaSet pod, a GPU job.
      testing::MakeDaemonSetPod("a-team", "gpu-exporter-x", "gpu-b", "dcgm-exporter"),
      testing::MakeRunningPod("a-team", "worker-7d9f-abcde", "gpu-b", "busybox"),
      testing::MakeRunningPod("ml", "train-1", "gpu-b", "pytorch"),
      testing::MakeRunningPod("a-team", "job-0", "gpu-b", "pytorch")};
  pods[2].owners = {{"ReplicaSet", "worker-7d9f", true, "apps/v1"}};
  pods[3].containers[0].limits["nvidia.com/gpu"] = 1;
  pods[4].containers[0].limits["nvidia.com/gpu"] = 1;
  for (const kube::Pod& p : pods) o.pods[p.Key()] = p;
  return o;
}

struct Judge {
  kube::ClusterObjects objects = Cluster();
  discovery::QueryApiOptions options;
  bool api_pinned = false;

  // The series' verdict after label repair as the query API reads it.
  std::string operator()(LabelPairs labels, RepairedSeries* out = nullptr) {
    labels.emplace_back("__name__", "DCGM_FI_DEV_POWER_USAGE");
    labels.emplace_back("gpu", "0");
    std::sort(labels.begin(), labels.end());
    auto r = sources::RepairSeries({labels, 4999, 1700000000}, discovery::PodLookupFor(objects));
    EXPECT_TRUE(r.has_value());
    const QueryTargetContext ctx =
        discovery::TargetContext(objects, options.exporter_trust, options.pod_pins, api_pinned);
    std::string verdict(JudgeQueryTarget(*r, ctx));
    if (out) *out = *r;
    return verdict;
  }
};

TEST(QueryTarget, TheOperatorsTargetLabelsNameTheExporter) {
  Judge j;
  RepairedSeries s;
  EXPECT_EQ(j({{"namespace", "gpu-operator"},
               {"pod", "dcgm-exporter-b"},
               {"exported_namespace", "ml"},
               {"exported_pod", "train-1"}},
              &s),
            "");
  EXPECT_EQ(s.node, "gpu-b");  // the target's node
  EXPECT_EQ(j({{"namespace", "gpu-operator"}, {"pod", "dcgm-exporter-b"}}), "");  // an idle GPU
}

// Issue 25: a plain ReplicaSet pod in a-team that a trusted Prometheus scraped.
TEST(QueryTarget, ATenantsPodScrapedByATrustedPrometheusIsNot) {
  Judge j;
  // It serves workload labels: Prometheus renames them, the target stays a-team's.
  EXPECT_EQ(j({{"namespace", "a-team"},
               {"pod", "worker-7d9f-abcde"},
               {"exported_namespace", "ml"},
               {"exported_pod", "train-1"}}),
            kUntrustedTarget);
  // Its own DaemonSet in a-team: no better.
  EXPECT_EQ(j({{"namespace", "a-team"}, {"pod", "gpu-exporter-x"}}), kUntrustedTarget);
  // It serves no pod label: its own pod reads as the workload, and no target can be told.
  EXPECT_EQ(j({{"namespace", "a-team"}, {"pod", "worker-7d9f-abcde"}}), kNoTarget);
  // It forges the classic target labels on top: the operator's namespace/pod still fail.
  EXPECT_EQ(j({{"namespace", "a-team"},
               {"pod", "gpu-exporter-x"},
               {"kubernetes_namespace", "gpu-operator"},
               {"kubernetes_pod_name", "dcgm-exporter-b"}}),
            kUntrustedTarget);
  // ... and its pod, read as the workload beside the forged target, holds no GPU.
  EXPECT_EQ(j({{"namespace", "a-team"},
               {"pod", "worker-7d9f-abcde"},
               {"kubernetes_namespace", "gpu-operator"},
               {"kubernetes_pod_name", "dcgm-exporter-b"}}),
            kUntrustedTarget);
}

TEST(QueryTarget, TheClassicRelabelling) {
  Judge j;
  RepairedSeries s;
  EXPECT_EQ(j({{"kubernetes_namespace", "gpu-operator"},
               {"kubernetes_pod_name", "dcgm-exporter-b"},
               {"namespace", "ml"},
               {"pod", "train-1"}},
              &s),
            "");
  EXPECT_EQ(s.node, "gpu-b");
  ASSERT_TRUE(s.workload);
  EXPECT_EQ(s.workload->name, "train-1");
  EXPECT_EQ(j({{"kubernetes_namespace", "a-team"},
               {"kubernetes_pod_name", "worker-7d9f-abcde"},
               {"namespace", "ml"},
               {"pod", "train-1"}}),
            kUntrustedTarget);
  // Under a classic Prometheus a body may add the operator's spelling itself (Prometheus renames
  // only the labels it sets): every target spelling present must pass.
  EXPECT_EQ(j({{"kubernetes_namespace", "a-team"},
               {"kubernetes_pod_name", "worker-7d9f-abcde"},
               {"namespace", "gpu-operator"},
               {"pod", "dcgm-exporter-b"},
               {"exported_pod", "train-1"},
               {"exported_namespace", "ml"}}),
            kUntrustedTarget);
}

TEST(QueryTarget, NoTargetOnlyFromAPinnedQueryApi) {
  Judge j;
  EXPECT_EQ(j({{"node", "gpu-b"}}), kNoTarget);
  j.api_pinned = true;
  EXPECT_EQ(j({{"node", "gpu-b"}}), "");
  // A target that is named must pass, pinned API or not.
  EXPECT_EQ(j({{"namespace", "a-team"}, {"pod", "gpu-exporter-x"}}), kUntrustedTarget);
}

TEST(QueryTarget, TheTargetMustRunOnTheSeriesNode) {
  Judge j;
  EXPECT_EQ(j({{"namespace", "gpu-operator"}, {"pod", "dcgm-exporter-b"}, {"node", "gpu-a"}}),
            kPodOnOtherNode);
  EXPECT_EQ(j({{"namespace", "gpu-operator"}, {"pod", "dcgm-exporter-gone"}}), kUntrustedTarget);
}

TEST(QueryTarget, PinsAndTrustRulesPassAsForExporterPods) {
  Judge j;
  j.options.pod_pins = {{"a-team", "gpu-exporter", 9400, "a-team/gpu-exporter:9400"}};
  EXPECT_EQ(j({{"namespace", "a-team"}, {"pod", "gpu-exporter-x"}}), "");
  j.options.pod_pins.clear();
  j.options.exporter_trust.rules = {{"a-team", {}}};
  EXPECT_EQ(j({{"namespace", "a-team"}, {"pod", "gpu-exporter-x"}}), "");
  j.options.exporter_trust = {};
  j.options.exporter_trust.namespaces = {"a-team"};
  EXPECT_EQ(j({{"namespace", "a-team"}, {"pod", "gpu-exporter-x"}}), "");
  EXPECT_EQ(j({{"namespace", "gpu-operator"}, {"pod", "dcgm-exporter-b"}}), kUntrustedTarget);
}

}  // namespace
}  // namespace gpuattr::trust
