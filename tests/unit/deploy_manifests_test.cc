// The in-cluster deployment (docs/design.md#in-cluster, docs/deploy.md): `kubectl kustomize` builds
// the base and every overlay offline with the objects expected; the ClusterRole grants exactly the
// reads gpuattr makes and nothing that writes; the pods run hardened; the sharded StatefulSet
// keeps the Deployment's pod template; the PrometheusRule is what scripts/gen-prometheusrule.py
// makes from config/prometheus/gpuattr-alerts.yml; the Dockerfile runs as the manifests' user and
// installs every shared library the binary needs. Tests that need kubectl skip without it, the
// generator test without Debian's python3-yaml.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>
#include <cstdlib>

#include <atomic>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gpuattr/http/server.h"
#include "support/paths.h"
#include "test_paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const fs::path kKube = fs::path("config") / "kubernetes";
constexpr const char* kPython = "/usr/bin/python3";  // Debian's, with python3-yaml

struct Ran {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs a shell command; stdout and stderr go to private temporary files.
Ran Shell(const std::string& cmd) {
  static std::atomic<int> counter{0};
  const std::string stem =
      "gpuattr-deploy-" + std::to_string(getpid()) + "-" + std::to_string(counter.fetch_add(1));
  const fs::path out = fs::temp_directory_path() / (stem + ".out");
  const fs::path err = fs::temp_directory_path() / (stem + ".err");
  const std::string full = "(" + cmd + ") >'" + out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(full.c_str());
  Ran r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

// Why `kubectl kustomize` cannot check config/kubernetes here, or "" when it can: kubectl must
// exist and be 1.21 or newer (kustomize v4; Debian 12's kubernetes-client is 1.20 with kustomize
// v2.0.3, which knows neither folders in `resources` nor components).
std::string KubectlMissing() {
  if (Shell("command -v kubectl").code != 0) return "kubectl is not installed";
  Ran v = Shell("timeout 30 kubectl version --client -o json");
  if (v.code != 0) return "`kubectl version --client -o json` failed: " + v.err;
  try {
    const YAML::Node j = YAML::Load(v.out);
    const std::string major = j["clientVersion"]["major"].as<std::string>();
    const std::string minor = j["clientVersion"]["minor"].as<std::string>();  // "20", "27+"
    if (std::stoi(major) == 1 && std::stoi(minor) < 21)
      return "kubectl " + major + "." + minor + " is older than 1.21 (its kustomize is too old)";
  } catch (const std::exception& e) {
    return std::string("cannot read kubectl's version: ") + e.what();
  }
  return "";
}

std::string Quote(const fs::path& p) { return "'" + p.string() + "'"; }

// `kubectl kustomize DIR`, as a list of objects.
std::vector<YAML::Node> Kustomize(const fs::path& dir) {
  Ran r = Shell("timeout 120 kubectl kustomize " + Quote(dir));
  EXPECT_EQ(r.code, 0) << "kubectl kustomize " << dir << " failed:\n" << r.err;
  if (r.code != 0) return {};
  std::vector<YAML::Node> docs;
  for (const YAML::Node& d : YAML::LoadAll(r.out))
    if (d.IsMap()) docs.push_back(d);
  return docs;
}

std::multiset<std::string> Kinds(const std::vector<YAML::Node>& docs) {
  std::multiset<std::string> kinds;
  for (const auto& d : docs) kinds.insert(d["kind"].as<std::string>());
  return kinds;
}

// The one object of this kind (a test failure when there is not exactly one).
YAML::Node One(const std::vector<YAML::Node>& docs, const std::string& kind) {
  std::vector<YAML::Node> found;
  for (const auto& d : docs)
    if (d["kind"].as<std::string>() == kind) found.push_back(d);
  EXPECT_EQ(found.size(), 1u) << "objects of kind " << kind;
  return found.empty() ? YAML::Node() : found.front();
}

std::string Str(const YAML::Node& n) {
  return n && n.IsScalar() ? n.as<std::string>() : std::string();
}

// Structural equality of two YAML trees (scalars compared as text).
bool Same(const YAML::Node& a, const YAML::Node& b) {
  if (!a || !b) return !a && !b;
  if (a.Type() != b.Type()) return false;
  switch (a.Type()) {
    case YAML::NodeType::Scalar:
      return a.Scalar() == b.Scalar();
    case YAML::NodeType::Sequence:
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i)
        if (!Same(a[i], b[i])) return false;
      return true;
    case YAML::NodeType::Map:
      if (a.size() != b.size()) return false;
      for (const auto& kv : a) {
        const YAML::Node other = b[kv.first.as<std::string>()];
        if (!other || !Same(kv.second, other)) return false;
      }
      return true;
    default:
      return true;  // null, undefined
  }
}

std::string ToYaml(const YAML::Node& n) {
  YAML::Emitter e;
  e << n;
  return e.c_str();
}

// A Kubernetes quantity in bytes ("512Mi", "1Gi", "200M", "1048576").
double Bytes(const std::string& q) {
  static const std::map<std::string, double> units = {
      {"", 1},        {"k", 1e3},        {"M", 1e6},          {"G", 1e9},
      {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}};
  size_t end = 0;
  const double v = std::stod(q, &end);
  auto it = units.find(q.substr(end));
  return it == units.end() ? -1 : v * it->second;
}

// Millicores of a CPU quantity ("250m", "2", "0.5").
double Millicores(const std::string& q) {
  if (!q.empty() && q.back() == 'm') return std::stod(q.substr(0, q.size() - 1));
  return std::stod(q) * 1000;
}

std::vector<std::string> Args(const YAML::Node& container) {
  std::vector<std::string> args;
  for (const auto& a : container["args"]) args.push_back(a.as<std::string>());
  return args;
}

// The value of --NAME=VALUE in the arguments (nullopt when absent).
std::optional<std::string> Flag(const std::vector<std::string>& args, const std::string& name) {
  const std::string prefix = "--" + name + "=";
  for (const auto& a : args)
    if (a.rfind(prefix, 0) == 0) return a.substr(prefix.size());
  return std::nullopt;
}

// What the pods must look like, whether a Deployment's or the sharded StatefulSet's.
void ExpectHardenedPod(const YAML::Node& workload) {
  const std::string what = Str(workload["kind"]) + "/" + Str(workload["metadata"]["name"]);
  const YAML::Node spec = workload["spec"]["template"]["spec"];
  ASSERT_TRUE(spec.IsMap()) << what;
  EXPECT_EQ(Str(spec["serviceAccountName"]), "gpuattr") << what;
  for (const char* host : {"hostNetwork", "hostPID", "hostIPC"})
    EXPECT_NE(Str(spec[host]), "true") << what << " " << host;
  ASSERT_EQ(spec["containers"].size(), 1u) << what;
  const YAML::Node c = spec["containers"][0];
  const YAML::Node pod_sc = spec["securityContext"];
  const YAML::Node sc = c["securityContext"];
  // The container's setting wins over the pod's, as in the kubelet.
  auto effective = [&](const char* key) { return sc[key] ? sc[key] : pod_sc[key]; };

  EXPECT_EQ(Str(effective("runAsNonRoot")), "true") << what;
  const std::string uid = Str(effective("runAsUser"));
  ASSERT_FALSE(uid.empty()) << what << ": no fixed runAsUser";
  EXPECT_GT(std::stol(uid), 0) << what;
  EXPECT_EQ(Str(sc["readOnlyRootFilesystem"]), "true") << what;
  EXPECT_EQ(Str(sc["allowPrivilegeEscalation"]), "false") << what;
  EXPECT_NE(Str(sc["privileged"]), "true") << what;
  ASSERT_TRUE(sc["capabilities"]["drop"].IsSequence()) << what;
  std::set<std::string> dropped;
  for (const auto& d : sc["capabilities"]["drop"]) dropped.insert(d.as<std::string>());
  EXPECT_TRUE(dropped.count("ALL")) << what << ": capabilities not dropped";
  EXPECT_FALSE(sc["capabilities"]["add"]) << what << ": adds capabilities";
  EXPECT_EQ(Str(effective("seccompProfile")["type"]), "RuntimeDefault") << what;

  // ~200 MB at 1,000 nodes: the requests and limits leave room for it.
  const YAML::Node res = c["resources"];
  for (const char* side : {"requests", "limits"})
    for (const char* r : {"cpu", "memory"})
      EXPECT_TRUE(res[side][r]) << what << ": no " << side << "." << r;
  if (res["requests"]["memory"] && res["limits"]["memory"]) {
    EXPECT_GE(Bytes(Str(res["limits"]["memory"])), 400e6) << what;
    EXPECT_GE(Bytes(Str(res["requests"]["memory"])), 200e6) << what;
    EXPECT_LE(Bytes(Str(res["requests"]["memory"])), Bytes(Str(res["limits"]["memory"]))) << what;
  }
  if (res["requests"]["cpu"] && res["limits"]["cpu"]) {
    EXPECT_LE(Millicores(Str(res["requests"]["cpu"])), Millicores(Str(res["limits"]["cpu"])));
  }

  ASSERT_EQ(c["ports"].size(), 1u) << what;
  EXPECT_EQ(Str(c["ports"][0]["name"]), "metrics") << what;
  EXPECT_EQ(Str(c["ports"][0]["containerPort"]), "9787") << what;
  EXPECT_EQ(Str(c["livenessProbe"]["httpGet"]["path"]), "/healthz") << what;
  EXPECT_EQ(Str(c["livenessProbe"]["httpGet"]["port"]), "metrics") << what;
  EXPECT_EQ(Str(c["readinessProbe"]["httpGet"]["path"]), "/readyz") << what;
  EXPECT_EQ(Str(c["readinessProbe"]["httpGet"]["port"]), "metrics") << what;
  // A probe must wait longer than the server's request-head deadline: the kubelet must not
  // restart a server that answers within its own limits (docs/security.md#serving).
  const double head_deadline =
      std::chrono::duration<double>(http::ServerLimits{}.header_timeout).count();
  for (const char* probe : {"livenessProbe", "readinessProbe"})
    EXPECT_GT(c[probe]["timeoutSeconds"].as<double>(0), head_deadline) << what << ": " << probe;

  const auto args = Args(c);
  EXPECT_EQ(Flag(args, "web.listen-address"), "0.0.0.0:9787") << what;
  EXPECT_TRUE(Flag(args, "cluster.name")) << what;
  const auto state = Flag(args, "state.file");
  ASSERT_EQ(state, "/var/lib/gpuattr/state.json") << what;
  // The state file's folder is a writable volume (the root filesystem is read-only), an emptyDir
  // by default.
  std::string volume;
  for (const auto& m : c["volumeMounts"])
    if (Str(m["mountPath"]) == fs::path(*state).parent_path().string()) volume = Str(m["name"]);
  ASSERT_FALSE(volume.empty()) << what << ": nothing mounted at the state file's folder";
  bool empty_dir = false;
  for (const auto& v : spec["volumes"])
    if (Str(v["name"]) == volume) empty_dir = v["emptyDir"].IsDefined();
  EXPECT_TRUE(empty_dir) << what << ": the state volume is not an emptyDir";
}

class DeployManifests : public ::testing::Test {
 protected:
  void SetUp() override {
    static const std::string missing = KubectlMissing();
    if (!missing.empty()) GTEST_SKIP() << missing << ": `kubectl kustomize` is not checked";
  }
  static fs::path Dir(const std::string& sub = "") { return SourceDir() / kKube / sub; }

  // `kubectl kustomize` of a kustomization in a temporary folder that takes `resource` and adds
  // `components` (folders under config/kubernetes; kustomize wants them relative).
  static std::vector<YAML::Node> KustomizeWith(const std::string& resource,
                                               const std::vector<std::string>& components) {
    char tmpl[] = "/tmp/gpuattr-kustomize-XXXXXX";
    if (!mkdtemp(tmpl)) return {};
    const fs::path dir = tmpl;
    const fs::path rel = fs::relative(Dir(), dir);
    {
      std::ofstream k(dir / "kustomization.yaml");
      k << "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        << "resources:\n  - " << (rel / resource).string() << "\ncomponents:\n";
      for (const std::string& c : components) k << "  - " << (rel / c).string() << "\n";
    }
    auto docs = Kustomize(dir);
    fs::remove_all(dir);
    return docs;
  }
};

const std::multiset<std::string> kBaseKinds = {
    "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Deployment", "Service"};

TEST_F(DeployManifests, BaseBuildsWithTheExpectedObjects) {
  const auto docs = Kustomize(Dir());
  EXPECT_EQ(Kinds(docs), kBaseKinds);
  // config/kubernetes and config/kubernetes/base are the same base.
  const auto base = Kustomize(Dir("base"));
  ASSERT_EQ(base.size(), docs.size());
  for (size_t i = 0; i < docs.size(); ++i) EXPECT_TRUE(Same(docs[i], base[i])) << ToYaml(docs[i]);

  for (const auto& d : docs) {
    const std::string kind = Str(d["kind"]);
    if (kind == "Namespace" || kind == "ClusterRole" || kind == "ClusterRoleBinding") continue;
    EXPECT_EQ(Str(d["metadata"]["namespace"]), "gpuattr") << kind;
  }
  EXPECT_EQ(Str(One(docs, "Namespace")["metadata"]["name"]), "gpuattr");

  // The binding gives the ClusterRole to the service account the Deployment runs as.
  const YAML::Node binding = One(docs, "ClusterRoleBinding");
  EXPECT_EQ(Str(binding["roleRef"]["kind"]), "ClusterRole");
  EXPECT_EQ(Str(binding["roleRef"]["name"]), Str(One(docs, "ClusterRole")["metadata"]["name"]));
  ASSERT_EQ(binding["subjects"].size(), 1u);
  EXPECT_EQ(Str(binding["subjects"][0]["kind"]), "ServiceAccount");
  EXPECT_EQ(Str(binding["subjects"][0]["name"]),
            Str(One(docs, "ServiceAccount")["metadata"]["name"]));
  EXPECT_EQ(Str(binding["subjects"][0]["namespace"]), "gpuattr");
  EXPECT_EQ(Str(One(docs, "Deployment")["spec"]["template"]["spec"]["serviceAccountName"]),
            Str(One(docs, "ServiceAccount")["metadata"]["name"]));
}

// The workstation's ClusterRole and the in-cluster one are one file.
TEST_F(DeployManifests, BaseClusterRoleIsTheWorkstationFile) {
  const auto docs = Kustomize(Dir());
  const YAML::Node file = YAML::LoadFile((Dir() / "clusterrole.yaml").string());
  const YAML::Node built = One(docs, "ClusterRole");
  EXPECT_EQ(Str(built["metadata"]["name"]), Str(file["metadata"]["name"]));
  EXPECT_TRUE(Same(built["rules"], file["rules"])) << ToYaml(built["rules"]);
}

TEST_F(DeployManifests, DeploymentIsHardenedAndServesOnPort9787) {
  const auto docs = Kustomize(Dir());
  const YAML::Node deployment = One(docs, "Deployment");
  EXPECT_EQ(Str(deployment["spec"]["replicas"]), "1");
  ExpectHardenedPod(deployment);

  // The Service selects the pods and names the port `metrics`.
  const YAML::Node svc = One(docs, "Service");
  ASSERT_EQ(svc["spec"]["ports"].size(), 1u);
  EXPECT_EQ(Str(svc["spec"]["ports"][0]["name"]), "metrics");
  EXPECT_EQ(Str(svc["spec"]["ports"][0]["port"]), "9787");
  const YAML::Node pod_labels = deployment["spec"]["template"]["metadata"]["labels"];
  ASSERT_TRUE(svc["spec"]["selector"].IsMap());
  for (const auto& kv : svc["spec"]["selector"])
    EXPECT_EQ(Str(pod_labels[kv.first.as<std::string>()]), kv.second.as<std::string>())
        << "the Service's selector does not match the pods: " << kv.first.as<std::string>();
}

TEST_F(DeployManifests, ServiceMonitorOverlay) {
  const auto docs = Kustomize(Dir("overlays/servicemonitor"));
  auto kinds = kBaseKinds;
  kinds.insert("ServiceMonitor");
  EXPECT_EQ(Kinds(docs), kinds);
  const YAML::Node sm = One(docs, "ServiceMonitor");
  EXPECT_EQ(Str(sm["apiVersion"]), "monitoring.coreos.com/v1");
  EXPECT_EQ(Str(sm["metadata"]["namespace"]), "gpuattr");
  const YAML::Node svc = One(docs, "Service");
  for (const auto& kv : sm["spec"]["selector"]["matchLabels"])
    EXPECT_EQ(Str(svc["metadata"]["labels"][kv.first.as<std::string>()]),
              kv.second.as<std::string>())
        << "the ServiceMonitor does not select the Service";
  ASSERT_EQ(sm["spec"]["endpoints"].size(), 1u);
  EXPECT_EQ(Str(sm["spec"]["endpoints"][0]["port"]), Str(svc["spec"]["ports"][0]["name"]));
  EXPECT_EQ(Str(sm["spec"]["endpoints"][0]["honorLabels"]), "true");
  // The bundled GpuattrDown alert expects job="gpuattr": the job is the Service's name.
  EXPECT_EQ(Str(svc["metadata"]["name"]), "gpuattr");
}

TEST_F(DeployManifests, PrometheusRuleOverlayCarriesTheAlertFile) {
  const auto docs = Kustomize(Dir("overlays/prometheusrule"));
  auto kinds = kBaseKinds;
  kinds.insert("PrometheusRule");
  EXPECT_EQ(Kinds(docs), kinds);
  const YAML::Node rule = One(docs, "PrometheusRule");
  EXPECT_EQ(Str(rule["apiVersion"]), "monitoring.coreos.com/v1");
  const YAML::Node alerts =
      YAML::LoadFile((SourceDir() / "config" / "prometheus" / "gpuattr-alerts.yml").string());
  EXPECT_TRUE(Same(rule["spec"]["groups"], alerts["groups"]))
      << "the PrometheusRule's groups differ from config/prometheus/gpuattr-alerts.yml: run "
         "scripts/gen-mixin.py";
}

TEST_F(DeployManifests, ShardedOverlayRunsAStatefulSetOfShards) {
  const auto docs = Kustomize(Dir("overlays/sharded"));
  EXPECT_EQ(Kinds(docs),
            (std::multiset<std::string>{"Namespace", "ServiceAccount", "ClusterRole",
                                        "ClusterRoleBinding", "StatefulSet", "Service"}));
  const YAML::Node sts = One(docs, "StatefulSet");
  ExpectHardenedPod(sts);

  const YAML::Node c = sts["spec"]["template"]["spec"]["containers"][0];
  const auto args = Args(c);
  EXPECT_EQ(Flag(args, "pod"), "$(POD_NAME)");
  EXPECT_FALSE(Flag(args, "shard")) << "the shard comes from the pod's ordinal";
  ASSERT_TRUE(Flag(args, "total-shards"));
  EXPECT_EQ(*Flag(args, "total-shards"), Str(sts["spec"]["replicas"]))
      << "--total-shards must equal the StatefulSet's replicas";
  EXPECT_EQ(*Flag(args, "total-shards"), "3");
  bool pod_name = false;
  for (const auto& e : c["env"])
    if (Str(e["name"]) == "POD_NAME")
      pod_name = Str(e["valueFrom"]["fieldRef"]["fieldPath"]) == "metadata.name";
  EXPECT_TRUE(pod_name) << "POD_NAME does not come from the downward API";

  // Its governing Service is headless.
  const YAML::Node svc = One(docs, "Service");
  EXPECT_EQ(Str(sts["spec"]["serviceName"]), Str(svc["metadata"]["name"]));
  EXPECT_EQ(Str(svc["spec"]["clusterIP"]), "None");

  // One pod template: the StatefulSet's equals the base Deployment's apart from args and env.
  const auto base = Kustomize(Dir());
  YAML::Node want = YAML::Clone(One(base, "Deployment")["spec"]["template"]);
  YAML::Node got = YAML::Clone(sts["spec"]["template"]);
  for (YAML::Node t : {want, got}) {
    t["spec"]["containers"][0].remove("args");
    t["spec"]["containers"][0].remove("env");
  }
  EXPECT_TRUE(Same(want, got)) << "base Deployment's template:\n"
                               << ToYaml(want) << "\nStatefulSet's:\n"
                               << ToYaml(got);
  // And the same arguments besides the sharding ones.
  std::vector<std::string> base_args =
      Args(One(base, "Deployment")["spec"]["template"]["spec"]["containers"][0]);
  std::vector<std::string> sharded_args;
  for (const auto& a : args)
    if (!Flag({a}, "pod") && !Flag({a}, "total-shards")) sharded_args.push_back(a);
  EXPECT_EQ(sharded_args, base_args);
}

// docs/deploy.md: the components add to the sharded variant too (paths relative to the
// kustomization, as kustomize requires).
TEST_F(DeployManifests, ComponentsCombineWithTheShardedOverlay) {
  const auto docs =
      KustomizeWith("overlays/sharded", {"components/servicemonitor", "components/prometheusrule"});
  EXPECT_EQ(Kinds(docs), (std::multiset<std::string>{"Namespace", "ServiceAccount", "ClusterRole",
                                                     "ClusterRoleBinding", "StatefulSet", "Service",
                                                     "ServiceMonitor", "PrometheusRule"}));
}

// docs/deploy.md#grafana-dashboards: every dashboard as a ConfigMap the Grafana sidecar picks up,
// byte for byte the committed JSON, each small enough for `kubectl apply`'s annotation.
TEST_F(DeployManifests, GrafanaDashboardsComponentCarriesEveryDashboard) {
  const auto docs = KustomizeWith("base", {"components/grafana-dashboards"});
  std::map<std::string, YAML::Node> maps;
  for (const auto& d : docs)
    if (Str(d["kind"]) == "ConfigMap") maps[Str(d["metadata"]["name"])] = d;
  const fs::path dashboards = SourceDir() / "grafana" / "dashboards";
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dashboards)) {
    if (e.path().extension() != ".json") continue;
    ++files;
    const std::string name = e.path().stem().string();
    SCOPED_TRACE(name);
    auto it = maps.find("gpuattr-dashboard-" + name);
    ASSERT_NE(it, maps.end()) << "add it to grafana/kustomization.yaml";
    const YAML::Node& m = it->second;
    EXPECT_EQ(Str(m["metadata"]["namespace"]), "gpuattr");
    EXPECT_EQ(Str(m["metadata"]["labels"]["grafana_dashboard"]), "1");
    EXPECT_EQ(Str(m["metadata"]["annotations"]["grafana_folder"]), "gpuattr");
    ASSERT_EQ(m["data"].size(), 1u);
    const std::string text = Str(m["data"]["gpuattr-" + name + ".json"]);
    EXPECT_EQ(text, ReadFile(e.path())) << "the ConfigMap holds the committed file as it is";
    EXPECT_LT(text.size(), 128u * 1024) << "kubectl apply keeps the object in a 256 KiB annotation";
  }
  EXPECT_EQ(maps.size(), files) << "one ConfigMap per dashboard, no other";
  EXPECT_GE(files, 8u);
}

// docs/deploy.md#direct-scraping: the direct variant is the base with a ClusterRole that has no
// proxy rights; everything else is the base's. The component combines with the sharded overlay.
TEST_F(DeployManifests, DirectVariantDropsTheProxyRightsOnly) {
  const auto docs = Kustomize(Dir("overlays/direct"));
  EXPECT_EQ(Kinds(docs), kBaseKinds);
  const YAML::Node role = One(docs, "ClusterRole");
  const YAML::Node file =
      YAML::LoadFile((Dir() / "components" / "direct" / "clusterrole.yaml").string());
  EXPECT_TRUE(Same(role["rules"], file["rules"])) << ToYaml(role["rules"]);
  EXPECT_EQ(Str(role["metadata"]["name"]), Str(file["metadata"]["name"]));
  for (const auto& rule : role["rules"])
    for (const auto& res : rule["resources"])
      EXPECT_FALSE(res.as<std::string>().ends_with("/proxy")) << res.as<std::string>();
  // The base's rules but the proxy one, in the same order.
  const auto base = Kustomize(Dir());
  YAML::Node want(YAML::NodeType::Sequence);
  for (const auto& rule : One(base, "ClusterRole")["rules"]) {
    bool proxy = false;
    for (const auto& res : rule["resources"]) proxy |= res.as<std::string>().ends_with("/proxy");
    if (!proxy) want.push_back(rule);
  }
  EXPECT_TRUE(Same(role["rules"], want)) << "the direct role drifted from the base's:\n"
                                         << ToYaml(want);
  for (const auto& d : docs) {
    const std::string kind = Str(d["kind"]);
    if (kind == "ClusterRole") continue;
    EXPECT_TRUE(Same(d, One(base, kind))) << kind << " differs from the base's";
  }

  const auto sharded = KustomizeWith("overlays/sharded", {"components/direct"});
  EXPECT_TRUE(Same(One(sharded, "ClusterRole")["rules"], file["rules"]));
}

// --- The ClusterRole file itself (no kubectl needed).

std::set<std::string> Strings(const YAML::Node& seq) {
  std::set<std::string> out;
  for (const auto& s : seq) out.insert(s.as<std::string>());
  return out;
}

TEST(DeployClusterRole, GrantsNoWriteVerbAndNoWildcard) {
  const YAML::Node role = YAML::LoadFile((SourceDir() / kKube / "clusterrole.yaml").string());
  EXPECT_EQ(Str(role["kind"]), "ClusterRole");
  EXPECT_FALSE(role["aggregationRule"]) << "an aggregated role grants whatever it collects";
  ASSERT_TRUE(role["rules"].IsSequence());
  const std::set<std::string> read_verbs = {"get", "list", "watch"};
  for (const auto& rule : role["rules"]) {
    for (const auto& v : Strings(rule["verbs"]))
      EXPECT_TRUE(read_verbs.count(v)) << "verb " << v << " is not read-only:\n" << ToYaml(rule);
    for (const char* field :
         {"apiGroups", "resources", "verbs", "nonResourceURLs", "resourceNames"})
      for (const auto& s : Strings(rule[field]))
        EXPECT_TRUE(s.find('*') == std::string::npos)
            << field << " has a wildcard \"" << s << "\":\n"
            << ToYaml(rule);
  }
}

// Exactly the requests the daemon makes (src/kube/object_cache.cc, src/kube/dra_versions.h,
// src/discovery/probe.cc, src/discovery/query_api.cc): LIST then WATCH on the collections, GET
// through the pod and service proxies, GET of the DRA group's discovery document.
TEST(DeployClusterRole, GrantsExactlyWhatGpuattrRequests) {
  const YAML::Node role = YAML::LoadFile((SourceDir() / kKube / "clusterrole.yaml").string());
  using Grant = std::tuple<std::string, std::string, std::string>;  // group, resource, verb
  std::set<Grant> grants;
  std::set<std::pair<std::string, std::string>> urls;  // non-resource URL, verb
  for (const auto& rule : role["rules"]) {
    for (const auto& verb : Strings(rule["verbs"])) {
      for (const auto& url : Strings(rule["nonResourceURLs"])) urls.insert({url, verb});
      for (const auto& group : Strings(rule["apiGroups"]))
        for (const auto& resource : Strings(rule["resources"]))
          grants.insert({group, resource, verb});
    }
    EXPECT_FALSE(rule["resourceNames"]) << ToYaml(rule);
  }
  std::set<Grant> want;
  for (const char* r : {"pods", "nodes", "services", "namespaces"})
    for (const char* v : {"list", "watch"}) want.insert({"", r, v});
  want.insert({"", "pods/proxy", "get"});
  want.insert({"", "services/proxy", "get"});
  for (const char* r : {"resourceslices", "resourceclaims"})
    for (const char* v : {"list", "watch"}) want.insert({"resource.k8s.io", r, v});
  EXPECT_EQ(grants, want);
  EXPECT_EQ(urls,
            (std::set<std::pair<std::string, std::string>>{{"/apis/resource.k8s.io", "get"}}));
}

// --- The generated PrometheusRule.

TEST(DeployPrometheusRule, CommittedFileIsWhatTheGeneratorMakes) {
  if (Shell(std::string(kPython) + " -c 'import yaml'").code != 0)
    GTEST_SKIP() << kPython
                 << " cannot import yaml: install python3-yaml (scripts/install-deps.sh)";
  const fs::path committed =
      SourceDir() / kKube / "components" / "prometheusrule" / "prometheusrule.yaml";
  Ran r = Shell(std::string(kPython) + " " +
                Quote(SourceDir() / "scripts" / "gen-prometheusrule.py") + " --stdout");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("kind: PrometheusRule"));
  EXPECT_TRUE(r.out == ReadFile(committed))
      << committed << " is not what scripts/gen-prometheusrule.py makes from "
      << "config/prometheus/gpuattr-alerts.yml: run scripts/gen-prometheusrule.py and commit";
}

// The generator refuses what a PrometheusRule cannot carry, and its --check notices a stale file.
TEST(DeployPrometheusRule, GeneratorChecksItsInputAndOutput) {
  if (Shell(std::string(kPython) + " -c 'import yaml'").code != 0)
    GTEST_SKIP() << kPython
                 << " cannot import yaml: install python3-yaml (scripts/install-deps.sh)";
  char tmpl[] = "/tmp/gpuattr-genrule-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  const std::string gen =
      std::string(kPython) + " " + Quote(SourceDir() / "scripts" / "gen-prometheusrule.py");
  {
    std::ofstream(dir / "alerts.yml") << "groups:\n  - name: g\n    rules:\n      - alert: A\n"
                                      << "        expr: |\n          up == 0\n            and x\n"
                                      << "        annotations:\n          d: \"it's \\\"q\\\"\"\n";
    std::ofstream(dir / "bad.yml") << "groups: []\nextra: 1\n";
  }
  const std::string alerts = " --alerts " + Quote(dir / "alerts.yml");
  const std::string out = " --out " + Quote(dir / "rule.yaml");
  EXPECT_EQ(Shell(gen + alerts + out).code, 0);
  EXPECT_EQ(Shell(gen + alerts + out + " --check").code, 0);
  const YAML::Node rule = YAML::LoadFile((dir / "rule.yaml").string());
  EXPECT_EQ(Str(rule["spec"]["groups"][0]["rules"][0]["expr"]), "up == 0\n  and x\n");
  EXPECT_EQ(Str(rule["spec"]["groups"][0]["rules"][0]["annotations"]["d"]), "it's \"q\"");
  std::ofstream(dir / "rule.yaml", std::ios::app) << "# edited by hand\n";
  Ran stale = Shell(gen + alerts + out + " --check");
  EXPECT_EQ(stale.code, 1);
  EXPECT_THAT(stale.err, HasSubstr("out of date"));
  Ran bad = Shell(gen + " --alerts " + Quote(dir / "bad.yml") + " --stdout");
  EXPECT_NE(bad.code, 0);
  EXPECT_THAT(bad.err, HasSubstr("extra"));
  fs::remove_all(dir);
}

// The shipped rules retargeted without sed (docs/alerts.md#parameters): another scrape job and
// runbook base, as a PrometheusRule or a plain rule file; an alert off the one base is refused.
TEST(DeployPrometheusRule, GeneratorRetargetsJobAndRunbookBase) {
  if (Shell(std::string(kPython) + " -c 'import yaml'").code != 0)
    GTEST_SKIP() << kPython
                 << " cannot import yaml: install python3-yaml (scripts/install-deps.sh)";
  const std::string gen =
      std::string(kPython) + " " + Quote(SourceDir() / "scripts" / "gen-prometheusrule.py");
  Ran plain = Shell(gen + " --stdout --format rules --job gpu-team/gpuattr --runbook-url-base " +
                    "https://wiki.example/gpuattr");
  ASSERT_EQ(plain.code, 0) << plain.err;
  const YAML::Node rules = YAML::Load(plain.out);
  const YAML::Node shipped =
      YAML::LoadFile((SourceDir() / "config" / "prometheus" / "gpuattr-alerts.yml").string());
  ASSERT_EQ(rules["groups"].size(), shipped["groups"].size());
  size_t alerts = 0, job_rules = 0;
  for (const auto& g : rules["groups"])
    for (const auto& r : g["rules"]) {
      if (!r["alert"]) continue;
      ++alerts;
      std::string name = Str(r["alert"]);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      EXPECT_EQ(Str(r["annotations"]["runbook_url"]), "https://wiki.example/gpuattr#" + name);
      const std::string expr = Str(r["expr"]);
      EXPECT_EQ(expr.find("job=\"gpuattr\""), std::string::npos) << expr;
      if (expr.find("job=\"gpu-team/gpuattr\"") != std::string::npos) ++job_rules;
    }
  EXPECT_GE(alerts, 14u);
  EXPECT_EQ(job_rules, alerts) << "every alert selects the job (the mixin's _config.selector)";
  Ran wrapped = Shell(gen + " --stdout --runbook-url-base https://wiki.example/gpuattr");
  ASSERT_EQ(wrapped.code, 0) << wrapped.err;
  EXPECT_THAT(wrapped.out, HasSubstr("kind: PrometheusRule"));
  EXPECT_THAT(wrapped.out, HasSubstr("https://wiki.example/gpuattr#gpuattrstale"));

  char tmpl[] = "/tmp/gpuattr-genrule-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  std::ofstream(dir / "alerts.yml") << "groups:\n  - name: g\n    rules:\n      - alert: A\n"
                                    << "        expr: up == 0\n        annotations:\n"
                                    << "          runbook_url: https://elsewhere.example/a\n";
  Ran off_base = Shell(gen + " --stdout --alerts " + Quote(dir / "alerts.yml"));
  EXPECT_NE(off_base.code, 0);
  EXPECT_THAT(off_base.err, HasSubstr("alert A: runbook_url"));
  fs::remove_all(dir);
}

// --- The image.

std::string Dockerfile() { return ReadFile(SourceDir() / "Dockerfile"); }

TEST(DeployImage, RunsAsTheManifestsUserAndExposesTheMetricsPort) {
  const std::string df = Dockerfile();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(df, m, std::regex(R"((^|\n)USER (\d+)(:(\d+))?\s*\n)")))
      << "the Dockerfile has no numeric USER";
  const std::string uid = m[2];
  for (const fs::path& f :
       {fs::path("base/deployment.yaml"), fs::path("overlays/sharded/statefulset.yaml")}) {
    const YAML::Node w = YAML::LoadFile((SourceDir() / kKube / f).string());
    EXPECT_EQ(Str(w["spec"]["template"]["spec"]["securityContext"]["runAsUser"]), uid) << f;
    if (m[4].matched) {
      EXPECT_EQ(Str(w["spec"]["template"]["spec"]["securityContext"]["runAsGroup"]),
                std::string(m[4]))
          << f;
    }
  }
  EXPECT_THAT(df, HasSubstr("\nEXPOSE 9787\n"));
  EXPECT_TRUE(std::regex_search(df, std::regex(R"(\nENTRYPOINT \["[^"]*/gpuattr"\])")));
  // The build stage uses the project's own scripts, as CI does.
  EXPECT_THAT(df, HasSubstr("scripts/install-deps.sh"));
  EXPECT_THAT(df, HasSubstr("scripts/build.sh"));
}

// The packages between "# runtime-packages:begin" and ":end" of `text`.
std::set<std::string> RuntimePackages(const std::string& text) {
  const size_t begin = text.find("# runtime-packages:begin");
  const size_t end = text.find("# runtime-packages:end");
  std::set<std::string> listed;
  if (begin == std::string::npos || end == std::string::npos) return listed;
  const size_t first = text.find('\n', begin);  // past the marker's own comment
  std::istringstream in(text.substr(first, end - first));
  std::string word;
  while (in >> word)
    if (std::regex_match(word, std::regex("[a-z0-9][a-z0-9.+-]+"))) listed.insert(word);
  return listed;
}

// The image's runtime stage installs what `scripts/install-deps.sh runtime` does, no more: a
// package the binary stopped loading (libprometheus-cpp-core1.0 did) leaves both lists together.
TEST(DeployImage, RuntimeStageInstallsTheScriptsRuntimePackages) {
  const std::set<std::string> image = RuntimePackages(Dockerfile());
  const std::set<std::string> script =
      RuntimePackages(ReadFile(SourceDir() / "scripts/install-deps.sh"));
  ASSERT_FALSE(script.empty()) << "no runtime-packages list in scripts/install-deps.sh";
  EXPECT_EQ(image, script);
}

// The runtime stage and `scripts/install-deps.sh runtime` install the Debian package of every
// shared library build/gpuattr loads.
TEST(DeployImage, RuntimePackagesCoverTheBinarysLibraries) {
  const fs::path binary = fs::path(GPUATTR_BINARY_DIR) / "gpuattr";
  if (!fs::exists(binary)) GTEST_SKIP() << binary << " is not built";
  if (Shell("command -v ldd && command -v dpkg").code != 0) GTEST_SKIP() << "no ldd or dpkg";
  const std::set<std::string> listed = RuntimePackages(Dockerfile());
  ASSERT_FALSE(listed.empty()) << "no runtime-packages list in the Dockerfile";
  const std::set<std::string> script =
      RuntimePackages(ReadFile(SourceDir() / "scripts/install-deps.sh"));
  ASSERT_FALSE(script.empty()) << "no runtime-packages list in scripts/install-deps.sh";
  Ran ldd = Shell("ldd " + Quote(binary));
  ASSERT_EQ(ldd.code, 0) << ldd.err;
  // scripts/test.sh also runs the unit tests in an ASan+UBSan build, whose gpuattr loads the
  // sanitizer runtimes; the image is a Release build.
  if (std::regex_search(ldd.out, std::regex(R"(lib(a|ub|t|l)san\.so)")))
    GTEST_SKIP() << binary << " is a sanitizer build";
  std::istringstream lines(ldd.out);
  std::string line;
  size_t libraries = 0;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, std::regex(R"(=> (/\S+))"))) continue;
    ++libraries;
    Ran owner = Shell("dpkg -S " + Quote(fs::canonical(std::string(m[1]))) + " || dpkg -S " +
                      Quote(std::string(m[1])));
    ASSERT_EQ(owner.code, 0) << "no Debian package owns " << m[1] << ": " << owner.err;
    const std::string package = owner.out.substr(0, owner.out.find_first_of(":,"));
    EXPECT_TRUE(listed.count(package)) << m[1] << " comes from " << package
                                       << ", which the Dockerfile's runtime stage does not install";
    EXPECT_TRUE(script.count(package))
        << m[1] << " comes from " << package
        << ", which `scripts/install-deps.sh runtime` does not install";
  }
  EXPECT_GT(libraries, 3u) << ldd.out;
}

}  // namespace
}  // namespace gpuattr::testing
