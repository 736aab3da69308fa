// Who may speak for what (trust/rules.h, docs/design.md#trust): DaemonSet pods, pins and configured
// rules for device exporters; GPU holders for inference servers; pins and trusted namespaces for
// query APIs. And the texts that say how to trust what is not.
#include "gpuattr/trust/rules.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/pods.h"

namespace gpuattr::trust {
namespace {

using ::testing::HasSubstr;

kube::Pod Exporter(std::string ns = "gpu-operator", std::string name = "nvidia-dcgm-exporter-x") {
  kube::Pod p = testing::MakeRunningPod(std::move(ns), std::move(name), "gpu-1", "dcgm-exporter");
  p.labels = {{"app", "nvidia-dcgm-exporter"}, {"tier", "gpu"}};
  return p;
}

TEST(TrustRules, ADaemonSetPodSpeaksForItsNode) {
  kube::Pod p = Exporter();
  p.owners = {{"DaemonSet", "nvidia-dcgm-exporter", true}};
  EXPECT_EQ(ExporterTrust(p, false, {}), "owned by DaemonSet gpu-operator/nvidia-dcgm-exporter");
}

TEST(TrustRules, OtherOwnersDoNot) {
  for (const char* kind : {"ReplicaSet", "StatefulSet", "Job", "Node"}) {
    kube::Pod p = Exporter();
    p.owners = {{kind, "x", true}};
    EXPECT_EQ(ExporterTrust(p, false, {}), "") << kind;
  }
  EXPECT_EQ(ExporterTrust(Exporter(), false, {}), "");  // a bare pod
}

TEST(TrustRules, APinSpeaks) { EXPECT_EQ(ExporterTrust(Exporter(), true, {}), "pinned"); }

TEST(TrustRules, ARuleMatchesNamespaceAndEveryLabelOfItsSelector) {
  const std::vector<ExporterRule> rules = {{"monitoring", {{"app", "other"}}},
                                           {"gpu-operator", {{"app", "nvidia-dcgm-exporter"}}}};
  EXPECT_EQ(ExporterTrust(Exporter(), false, rules),
            "trust rule 2 (namespace gpu-operator, selector {app: nvidia-dcgm-exporter})");
  // Another namespace, a label value that differs, a label the pod lacks: no.
  EXPECT_EQ(ExporterTrust(Exporter("tenant"), false, rules), "");
  EXPECT_FALSE((ExporterRule{"gpu-operator", {{"app", "dcgm"}}}.Matches(Exporter())));
  EXPECT_FALSE((ExporterRule{"gpu-operator", {{"app", "nvidia-dcgm-exporter"}, {"x", "y"}}}.Matches(
      Exporter())));
  // Both labels present; an empty selector matches the whole namespace.
  EXPECT_TRUE(
      (ExporterRule{"gpu-operator", {{"app", "nvidia-dcgm-exporter"}, {"tier", "gpu"}}}.Matches(
          Exporter())));
  EXPECT_TRUE((ExporterRule{"gpu-operator", {}}.Matches(Exporter())));
}

TEST(TrustRules, HowToTrustNamesThePinAndARule) {
  const std::string hint = HowToTrustExporter(Exporter("finance", "gpu-helper-0"), 9400);
  EXPECT_THAT(hint, HasSubstr("--target finance/gpu-helper-0:9400"));
  EXPECT_THAT(hint, HasSubstr("discovery.trust.exporters ({namespace: finance, selector: "
                              "{app: nvidia-dcgm-exporter}})"));
}

TEST(TrustRules, InferenceServersNeedAGpuOrAPin) {
  EXPECT_TRUE(InferenceTrusted(true, false));
  EXPECT_TRUE(InferenceTrusted(false, true));
  EXPECT_FALSE(InferenceTrusted(false, false));
  EXPECT_THAT(HowToTrustInference("ml", "router-0", 8000), HasSubstr("--target ml/router-0:8000"));
}

TEST(TrustRules, QueryApisInTrustedNamespacesOrPinned) {
  const std::vector<std::string> ns = DefaultQueryApiNamespaces();
  for (const char* n :
       {"monitoring", "prometheus", "kube-prometheus-stack", "observability", "victoria-metrics",
        "thanos", "mimir", "openshift-monitoring", "gpu-operator"})
    EXPECT_TRUE(QueryApiTrusted(n, false, ns)) << n;
  EXPECT_FALSE(QueryApiTrusted("tenant-a", false, ns));
  EXPECT_TRUE(QueryApiTrusted("tenant-a", true, ns));
  EXPECT_FALSE(QueryApiTrusted("monitoring", false, {}));  // [] trusts pins only
  EXPECT_THAT(HowToTrustQueryApi("tenant-a", "prometheus", "9090"),
              HasSubstr("--target tenant-a/svc/prometheus:9090"));
}

}  // namespace
}  // namespace gpuattr::trust
