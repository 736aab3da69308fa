// Who may speak for what (trust/rules.h, docs/design.md#trust): pins, configured rules and pods
// controlled by an apps/v1 DaemonSet in an exporter namespace for device exporters (each owner
// reference variant of issue 25); GPU holders for inference servers; pins and trusted namespaces
// for query APIs. And the texts that say how to trust what is not.
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

kube::OwnerReference DaemonSet(std::string name = "nvidia-dcgm-exporter") {
  return {"DaemonSet", std::move(name), true, "apps/v1"};
}

kube::Pod DaemonSetPod(std::string ns = "gpu-operator") {
  kube::Pod p = Exporter(std::move(ns));
  p.owners = {DaemonSet()};
  return p;
}

const ExporterTrustConfig kDefaults;

TEST(TrustRules, ADaemonSetPodInAnExporterNamespaceSpeaksForItsNode) {
  const ExporterVerdict v = JudgeExporter(DaemonSetPod(), false, kDefaults);
  EXPECT_EQ(v.rank, Rank::kDaemonSet);
  EXPECT_EQ(v.why, "controlled by DaemonSet gpu-operator/nvidia-dcgm-exporter");
  for (const char* ns : {"gpu-operator", "nvidia-gpu-operator", "kube-system", "gpu-monitoring",
                         "monitoring", "dcgm-exporter"})
    EXPECT_TRUE(JudgeExporter(DaemonSetPod(ns), false, kDefaults).trusted()) << ns;
}

// Issue 25: tenants may create DaemonSets (the edit and admin roles allow it) and write any owner
// reference into a bare pod. Only a controller reference of an apps/v1 DaemonSet in an exporter
// namespace counts.
TEST(TrustRules, ADaemonSetInATenantNamespaceDoesNot) {
  for (const char* ns : {"zz-team", "a-team", "finance", "observability", "prometheus"}) {
    const kube::Pod p = DaemonSetPod(ns);
    EXPECT_FALSE(JudgeExporter(p, false, kDefaults).trusted()) << ns;
    EXPECT_THAT(HowToTrustExporter(p, 9400),
                HasSubstr("its DaemonSet nvidia-dcgm-exporter is in namespace " + std::string(ns) +
                          ", which is not in discovery.trust.exporter_namespaces"));
    EXPECT_THAT(HowToTrustExporter(p, 9400),
                HasSubstr("or add " + std::string(ns) + " to discovery.trust.exporter_namespaces"));
  }
}

TEST(TrustRules, AnOwnerReferenceOfAnotherGroupDoesNot) {
  for (const char* api : {"example.com/v1", "apps/v1beta2", "extensions/v1beta1", "v1", ""}) {
    kube::Pod p = DaemonSetPod();
    p.owners[0].api_version = api;
    EXPECT_FALSE(JudgeExporter(p, false, kDefaults).trusted()) << api;
    EXPECT_EQ(DaemonSetController(p), nullptr) << api;
    EXPECT_THAT(HowToTrustExporter(p, 9400), HasSubstr("not apps/v1")) << api;
  }
}

TEST(TrustRules, AnOwnerReferenceThatIsNotTheControllerDoesNot) {
  kube::Pod p = DaemonSetPod();
  p.owners[0].controller = false;  // `controller: false`, or absent (decoded as false)
  EXPECT_FALSE(JudgeExporter(p, false, kDefaults).trusted());
  EXPECT_THAT(HowToTrustExporter(p, 9400), HasSubstr("not the controller reference"));
  // Another controller beside a non-controller DaemonSet reference: the controller decides.
  p.owners.insert(p.owners.begin(), kube::OwnerReference{"ReplicaSet", "rs", true, "apps/v1"});
  EXPECT_FALSE(JudgeExporter(p, false, kDefaults).trusted());
  EXPECT_EQ(DaemonSetController(p), nullptr);
}

// A bare pod in an exporter namespace with a hand-written reference to a DaemonSet: it looks
// exactly like the DaemonSet's pod, which is why only administrators may create pods in an
// exporter namespace (docs/security.md); elsewhere the same pod proves nothing.
TEST(TrustRules, ABarePodWithAHandWrittenOwnerReference) {
  kube::Pod p = Exporter("zz-team", "gpu-exporter-x");
  p.owners = {{"DaemonSet", "nvidia-dcgm-exporter", true, "example.com/v1"}};
  EXPECT_FALSE(JudgeExporter(p, false, kDefaults).trusted());
  p.owners = {DaemonSet()};
  EXPECT_FALSE(JudgeExporter(p, false, kDefaults).trusted());
  EXPECT_EQ(JudgeExporter(Exporter(), false, kDefaults).rank, Rank::kNone);  // no owner at all
}

TEST(TrustRules, OtherControllersDoNot) {
  for (const char* kind : {"ReplicaSet", "StatefulSet", "Job", "Node"}) {
    kube::Pod p = Exporter();
    p.owners = {{kind, "x", true, kind == std::string("Job") ? "batch/v1" : "apps/v1"}};
    EXPECT_FALSE(JudgeExporter(p, false, kDefaults).trusted()) << kind;
    EXPECT_THAT(HowToTrustExporter(p, 9400), HasSubstr("not controlled by a DaemonSet")) << kind;
  }
}

TEST(TrustRules, TheConfiguredExporterNamespacesReplaceTheDefault) {
  ExporterTrustConfig config;
  config.namespaces = {"team-gpu-ops"};
  EXPECT_TRUE(JudgeExporter(DaemonSetPod("team-gpu-ops"), false, config).trusted());
  EXPECT_FALSE(JudgeExporter(DaemonSetPod("gpu-operator"), false, config).trusted());
  config.namespaces = {};  // pins and rules only
  EXPECT_FALSE(JudgeExporter(DaemonSetPod("team-gpu-ops"), false, config).trusted());
}

TEST(TrustRules, APinSpeaks) {
  const ExporterVerdict v = JudgeExporter(Exporter("zz-team"), true, kDefaults);
  EXPECT_EQ(v.rank, Rank::kPinned);
  EXPECT_EQ(v.why, "pinned");
}

TEST(TrustRules, ARuleMatchesNamespaceAndEveryLabelOfItsSelector) {
  ExporterTrustConfig config;
  config.rules = {{"monitoring", {{"app", "other"}}},
                  {"gpu-operator", {{"app", "nvidia-dcgm-exporter"}}}};
  const ExporterVerdict v = JudgeExporter(Exporter(), false, config);
  EXPECT_EQ(v.rank, Rank::kRule);
  EXPECT_EQ(v.why, "trust rule 2 (namespace gpu-operator, selector {app: nvidia-dcgm-exporter})");
  // A rule ranks above a DaemonSet: the pod matches both.
  EXPECT_EQ(JudgeExporter(DaemonSetPod(), false, config).rank, Rank::kRule);
  // Another namespace, a label value that differs, a label the pod lacks: no.
  EXPECT_FALSE(JudgeExporter(Exporter("tenant"), false, config).trusted());
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
       {"monitoring", "kube-prometheus-stack", "openshift-monitoring", "victoria-metrics"})
    EXPECT_TRUE(QueryApiTrusted(n, false, ns)) << n;
  // Generic names a tenant may be able to create are not trusted by default (issue 25).
  for (const char* n : {"prometheus", "observability", "thanos", "mimir", "gpu-operator"})
    EXPECT_FALSE(QueryApiTrusted(n, false, ns)) << n;
  EXPECT_FALSE(QueryApiTrusted("tenant-a", false, ns));
  EXPECT_TRUE(QueryApiTrusted("tenant-a", true, ns));
  EXPECT_FALSE(QueryApiTrusted("monitoring", false, {}));  // [] trusts pins only
  EXPECT_THAT(HowToTrustQueryApi("tenant-a", "prometheus", "9090"),
              HasSubstr("--target tenant-a/svc/prometheus:9090"));
}

}  // namespace
}  // namespace gpuattr::trust
