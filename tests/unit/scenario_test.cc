// Scenario loading: the fixture folders, YAML to JSON conversion, and errors that name the file
// and line at fault.
#include "support/scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "support/paths.h"

namespace gpuattr::testing {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// A fresh folder under the test temp dir, removed at the end of the test.
class TempScenario {
 public:
  TempScenario() {
    std::string tmpl = (fs::path(::testing::TempDir()) / "scenario-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
  }
  ~TempScenario() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void Write(const std::string& relative, const std::string& text) const {
    fs::create_directories((dir_ / relative).parent_path());
    std::ofstream(dir_ / relative, std::ios::binary) << text;
  }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

const nlohmann::json* FindObject(const Scenario& sc, const std::string& kind,
                                 const std::string& name) {
  for (const auto& o : sc.objects)
    if (o["kind"] == kind && o["metadata"]["name"] == name) return &o;
  return nullptr;
}

TEST(ScenarioTest, LoadsBasicScenario) {
  auto sc = LoadScenario(FixturePath("scenarios/basic"));
  ASSERT_TRUE(sc.ok()) << sc.error().message;
  EXPECT_EQ(sc->name, "basic");
  EXPECT_EQ(sc->git_version, "v1.30.4");
  EXPECT_TRUE(sc->dra_versions.empty());
  int pods = 0, nodes = 0, services = 0;
  for (const auto& o : sc->objects) {
    pods += o["kind"] == "Pod";
    nodes += o["kind"] == "Node";
    services += o["kind"] == "Service";
  }
  EXPECT_EQ(pods, 11);
  EXPECT_EQ(nodes, 3);
  EXPECT_EQ(services, 4);  // from a ServiceList

  const auto* node = FindObject(*sc, "Node", "gpu-node-1");
  ASSERT_NE(node, nullptr);
  // Quantities are quoted in the YAML and stay strings, as the apiserver serves them.
  EXPECT_EQ((*node)["status"]["allocatable"]["nvidia.com/gpu"], "4");
  const auto* exporter = FindObject(*sc, "Pod", "nvidia-dcgm-exporter-7xk2p");
  ASSERT_NE(exporter, nullptr);
  const auto& port = (*exporter)["spec"]["containers"][0]["ports"][0];
  EXPECT_EQ(port["name"], "metrics");
  EXPECT_EQ(port["containerPort"], 9400);  // plain scalars become numbers
  EXPECT_NE(FindObject(*sc, "Pod", "kube-apiserver-gpu-node-1"), nullptr);
  EXPECT_NE(FindObject(*sc, "Pod", "etcd-gpu-node-1"), nullptr);

  // Two cycles for one exporter (.1.prom, .2.prom), one body for the other.
  ASSERT_EQ(sc->exporter_bodies.count("gpu-operator/nvidia-dcgm-exporter-7xk2p:9400"), 1u);
  const auto& seq = sc->exporter_bodies.at("gpu-operator/nvidia-dcgm-exporter-7xk2p:9400");
  ASSERT_EQ(seq.size(), 2u);
  EXPECT_NE(seq[0], seq[1]);
  EXPECT_THAT(seq[0], HasSubstr("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\""));
  EXPECT_EQ(sc->exporter_bodies.at("gpu-operator/nvidia-dcgm-exporter-q9d4m:9400").size(), 1u);

  ASSERT_EQ(sc->prometheus.count("monitoring/prometheus-k8s:9090"), 1u);
  const auto& answers = sc->prometheus.at("monitoring/prometheus-k8s:9090");
  ASSERT_FALSE(answers.empty());
  auto body = nlohmann::json::parse(answers[0].body);
  EXPECT_EQ(body["status"], "success");
  EXPECT_EQ(body["data"]["resultType"], "vector");
  EXPECT_EQ(body["data"]["result"].size(), 6u);
  EXPECT_EQ(body["data"]["result"][0]["value"][1], "78");  // a bare value gets a timestamp
}

TEST(ScenarioTest, LoadsFaultsAndWatchScript) {
  auto sc = LoadScenario(FixturePath("scenarios/faults-and-watch"));
  ASSERT_TRUE(sc.ok()) << sc.error().message;
  // Items of a plain List without kind take it from the file name.
  ASSERT_NE(FindObject(*sc, "Pod", "trainer"), nullptr);
  ASSERT_EQ(sc->faults.size(), 3u);
  EXPECT_EQ(sc->faults[0].delay, std::chrono::milliseconds(300));
  EXPECT_EQ(sc->faults[0].truncate_at, 100);
  EXPECT_EQ(sc->faults[1].oversize_bytes, 2000000);
  EXPECT_FALSE(sc->faults[1].path_regex.empty());
  EXPECT_EQ(sc->faults[2].status, 429);
  EXPECT_EQ(sc->faults[2].retry_after, 1);
  EXPECT_EQ(sc->faults[2].times, 1);
  EXPECT_EQ(sc->faults[2].verb, "list");
  EXPECT_THAT(sc->faults[2].source, HasSubstr("faults.yaml:"));

  ASSERT_EQ(sc->watch_script.size(), 3u);
  EXPECT_EQ(sc->watch_script[0].type, "ADDED");
  EXPECT_EQ(sc->watch_script[0].resource, "pods");
  EXPECT_EQ(sc->watch_script[0].after_watch, 1);
  EXPECT_EQ(sc->watch_script[0].delay, std::chrono::milliseconds(200));
  EXPECT_EQ(sc->watch_script[1].type, "MODIFIED");
  EXPECT_EQ(sc->watch_script[1].patch["status"]["phase"], "Running");
  EXPECT_EQ(sc->watch_script[2].type, "DELETED");
  EXPECT_EQ(sc->watch_script[2].ref_namespace, "ml");
  EXPECT_EQ(sc->watch_script[2].ref_name, "trainer");
  EXPECT_EQ(sc->exporter_bodies.at("gpu-operator/dcgm-exporter-a:9400").size(), 3u);
}

TEST(ScenarioTest, LoadsDraScenario) {
  auto sc = LoadScenario(FixturePath("scenarios/dra"));
  ASSERT_TRUE(sc.ok()) << sc.error().message;
  EXPECT_EQ(sc->dra_versions, std::vector<std::string>{"v1"});
  EXPECT_EQ(sc->git_version, "v1.34.1");
  const auto* slice = FindObject(*sc, "ResourceSlice", "dgx-a-gpu.nvidia.com-x7r2q");
  ASSERT_NE(slice, nullptr);
  ASSERT_EQ((*slice)["spec"]["devices"].size(), 4u);
  EXPECT_EQ((*slice)["spec"]["devices"][2]["attributes"]["profile"]["string"], "3g.40gb");
  const auto* claim = FindObject(*sc, "ResourceClaim", "llm-dra-0-gpu-7kq2x");
  ASSERT_NE(claim, nullptr);
  const auto* pod = FindObject(*sc, "Pod", "llm-dra-0");
  ASSERT_NE(pod, nullptr);
  // The claim is reserved for the pod by uid: the fixture must keep them equal.
  EXPECT_EQ((*claim)["status"]["reservedFor"][0]["uid"], (*pod)["metadata"]["uid"]);
  const auto* pending = FindObject(*sc, "ResourceClaim", "eight-gpus");
  ASSERT_NE(pending, nullptr);
  EXPECT_EQ((*pending)["spec"]["devices"]["requests"][0]["exactly"]["count"], 8);
  EXPECT_FALSE(pending->contains("status"));
}

TEST(ScenarioTest, YamlScalarsFollowTheCoreSchema) {
  auto j = YamlTextToJson(
      "a: \"4\"\nb: 4\nc: true\nd:\ne: ~\nf: 1.5\ng: 'yes'\nh: yes\ni: 1e3\nj: -7\nk: v1.30\n"
      "l: [1, x]\nm: !!str 12\n");
  EXPECT_EQ(j["a"], "4");
  EXPECT_EQ(j["b"], 4);
  EXPECT_EQ(j["c"], true);
  EXPECT_TRUE(j["d"].is_null());
  EXPECT_TRUE(j["e"].is_null());
  EXPECT_DOUBLE_EQ(j["f"].get<double>(), 1.5);
  EXPECT_EQ(j["g"], "yes");
  EXPECT_EQ(j["h"], "yes");  // YAML 1.2: only true/false are booleans
  EXPECT_DOUBLE_EQ(j["i"].get<double>(), 1000.0);
  EXPECT_EQ(j["j"], -7);
  EXPECT_EQ(j["k"], "v1.30");
  EXPECT_EQ(j["l"], nlohmann::json::array({1, "x"}));
  EXPECT_EQ(j["m"], "12");
}

TEST(ScenarioTest, BadYamlNamesFileAndLine) {
  TempScenario t;
  t.Write("pods.yaml",
          "apiVersion: v1\n"
          "kind: Pod\n"
          "metadata:\n"
          "  name: [unclosed\n"
          "  namespace: x\n");
  auto sc = LoadScenario(t.dir());
  ASSERT_FALSE(sc.ok());
  EXPECT_EQ(sc.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(sc.error().message, HasSubstr((t.dir() / "pods.yaml").string() + ":"));
  EXPECT_THAT(sc.error().message, HasSubstr("invalid YAML"));
  // yaml-cpp reports the line where the flow sequence breaks; it must be one of these lines.
  EXPECT_THAT(sc.error().message, ::testing::ContainsRegex("pods\\.yaml:[45]:"));
}

TEST(ScenarioTest, ObjectWithoutNameNamesItsLine) {
  TempScenario t;
  t.Write("nodes.yaml",
          "apiVersion: v1\nkind: Node\nmetadata:\n  name: a\n"
          "---\n"
          "apiVersion: v1\nkind: Node\nmetadata:\n  labels: {x: y}\n");
  auto sc = LoadScenario(t.dir());
  ASSERT_FALSE(sc.ok());
  EXPECT_THAT(sc.error().message, HasSubstr("nodes.yaml:6"));
  EXPECT_THAT(sc.error().message, HasSubstr("Node has no metadata.name"));
}

TEST(ScenarioTest, UnservedKindIsRejected) {
  auto objs =
      ParseObjectsYaml("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n", "x.yaml");
  ASSERT_FALSE(objs.ok());
  EXPECT_THAT(objs.error().message, HasSubstr("x.yaml:1"));
  EXPECT_THAT(objs.error().message, HasSubstr("Deployment"));
}

TEST(ScenarioTest, FaultRuleUnknownKeyNamesKeyAndLine) {
  auto rules = ParseFaultsYaml("- path: /api/v1/pods\n  status: 500\n- path: /x\n  stauts: 500\n",
                               "faults.yaml");
  ASSERT_FALSE(rules.ok());
  EXPECT_THAT(rules.error().message, HasSubstr("faults.yaml:4"));
  EXPECT_THAT(rules.error().message, HasSubstr("`stauts`"));
}

TEST(ScenarioTest, FaultRuleValidation) {
  EXPECT_FALSE(ParseFaultsYaml("- path: /x\n", "f.yaml").ok());  // does nothing
  EXPECT_FALSE(ParseFaultsYaml("- path: /x\n  status: 42\n", "f.yaml").ok());
  EXPECT_FALSE(ParseFaultsYaml("- path: /x\n  verb: delete\n  status: 500\n", "f.yaml").ok());
  EXPECT_FALSE(ParseFaultsYaml("- path_regex: '('\n  status: 500\n", "f.yaml").ok());
  auto bad_delay = ParseFaultsYaml("- path: /x\n  delay: 20\n", "f.yaml");
  ASSERT_FALSE(bad_delay.ok());
  EXPECT_THAT(bad_delay.error().message, HasSubstr("f.yaml:2"));
  EXPECT_THAT(bad_delay.error().message, HasSubstr("delay"));
  auto ok = ParseFaultsYaml("- verb: watch\n  status: 410\n  query_contains: watch=1\n", "f.yaml");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ((*ok)[0].verb, "watch");
  EXPECT_EQ((*ok)[0].query_contains, "watch=1");
}

TEST(ScenarioTest, WatchScriptValidation) {
  auto bad_type = ParseWatchYaml("- type: CREATED\n  ref: {resource: pods, name: a}\n", "w.yaml");
  ASSERT_FALSE(bad_type.ok());
  EXPECT_THAT(bad_type.error().message, HasSubstr("w.yaml:1"));
  EXPECT_THAT(bad_type.error().message, HasSubstr("CREATED"));
  EXPECT_FALSE(ParseWatchYaml("- type: ADDED\n  ref: {resource: pods, name: a}\n", "w.yaml").ok());
  EXPECT_FALSE(
      ParseWatchYaml("- type: MODIFIED\n  ref: {resource: pods, name: a}\n", "w.yaml").ok());
  EXPECT_FALSE(
      ParseWatchYaml("- type: DELETED\n  ref: {resource: deployments, name: a}\n", "w.yaml").ok());
  auto by_kind = ParseWatchYaml("- type: DELETED\n  ref: {kind: Node, name: n1}\n", "w.yaml");
  ASSERT_TRUE(by_kind.ok()) << by_kind.error().message;
  EXPECT_EQ((*by_kind)[0].resource, "nodes");
  EXPECT_EQ((*by_kind)[0].after_watch, 0);
}

TEST(ScenarioTest, ExporterFileNamesAreChecked) {
  TempScenario t;
  t.Write("exporters/ns/podwithoutport.prom", "x 1\n");
  auto sc = LoadScenario(t.dir());
  ASSERT_FALSE(sc.ok());
  EXPECT_THAT(sc.error().message, HasSubstr("podwithoutport.prom"));

  TempScenario t2;
  t2.Write("exporters/ns/p:9400.0.prom", "x 1\n");
  EXPECT_FALSE(LoadScenario(t2.dir()).ok());  // sequences count from 1

  TempScenario t3;
  t3.Write("exporters/ns/p:9400.prom", "a 1\n");
  t3.Write("exporters/ns/p:9400.2.prom", "a 2\n");
  t3.Write("exporters/ns/p:9400.10.prom", "a 10\n");
  auto sc3 = LoadScenario(t3.dir());
  ASSERT_TRUE(sc3.ok()) << sc3.error().message;
  // The unnumbered body comes first, then numbers in numeric (not file name) order.
  EXPECT_EQ(sc3->exporter_bodies.at("ns/p:9400"),
            (std::vector<std::string>{"a 1\n", "a 2\n", "a 10\n"}));
}

TEST(ScenarioTest, UnknownEntryAndDuplicatesAreRejected) {
  TempScenario t;
  t.Write("deployments.yaml", "[]\n");
  auto sc = LoadScenario(t.dir());
  ASSERT_FALSE(sc.ok());
  EXPECT_THAT(sc.error().message, HasSubstr("deployments.yaml"));

  TempScenario t2;
  t2.Write("pods.yaml",
           "kind: Pod\nmetadata: {name: a, namespace: x}\n---\nkind: Pod\nmetadata: {name: a, "
           "namespace: x}\n");
  auto dup = LoadScenario(t2.dir());
  ASSERT_FALSE(dup.ok());
  EXPECT_THAT(dup.error().message, HasSubstr("duplicate object Pod x/a"));

  EXPECT_EQ(LoadScenario(t.dir() / "missing").error().code, ErrorCode::kNotFound);
}

TEST(ScenarioTest, DraFolderAndVersions) {
  TempScenario t;
  t.Write(
      "dra/slices.yaml",
      "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice\nmetadata: {name: gpu-a-slice}\n"
      "spec: {driver: gpu.nvidia.com, nodeName: gpu-a}\n");
  auto sc = LoadScenario(t.dir());
  ASSERT_TRUE(sc.ok()) << sc.error().message;
  EXPECT_EQ(sc->dra_versions, std::vector<std::string>{"v1"});  // default when dra/ exists
  ASSERT_NE(FindObject(*sc, "ResourceSlice", "gpu-a-slice"), nullptr);

  t.Write("cluster.yaml", "server_version: v1.32.1\ndra_versions: [v1beta1]\n");
  auto sc2 = LoadScenario(t.dir());
  ASSERT_TRUE(sc2.ok()) << sc2.error().message;
  EXPECT_EQ(sc2->dra_versions, std::vector<std::string>{"v1beta1"});
  EXPECT_EQ(sc2->git_version, "v1.32.1");

  t.Write("cluster.yaml", "dra_versions: [v2]\n");
  auto bad = LoadScenario(t.dir());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("cluster.yaml:1"));
}

TEST(ScenarioTest, BodySequencesRepeatTheLastOrLoop) {
  TempScenario t;
  t.Write("nodes.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: gpu-a}\n");
  auto plain = LoadScenario(t.dir());
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_FALSE(plain->loop_body_sequences);  // default: the last body repeats

  t.Write("cluster.yaml", "body_sequences: loop\n");
  auto loop = LoadScenario(t.dir());
  ASSERT_TRUE(loop.ok()) << loop.error().message;
  EXPECT_TRUE(loop->loop_body_sequences);

  t.Write("cluster.yaml", "body_sequences: forever\n");
  auto bad = LoadScenario(t.dir());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("cluster.yaml:1"));
  EXPECT_THAT(bad.error().message, HasSubstr("repeat_last or loop"));
}

TEST(ScenarioTest, PrometheusAnswers) {
  auto a = ParsePromAnswersYaml(
      "- query: up\n  result: [{metric: {job: x}, value: [1, \"1\"]}]\n"
      "- regex: '^sum\\('\n  body: '{\"status\":\"error\"}'\n  status: 422\n",
      "q.yaml");
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_EQ(a->size(), 2u);
  EXPECT_EQ((*a)[0].match, PromAnswer::Match::kExact);
  EXPECT_EQ(nlohmann::json::parse((*a)[0].body)["data"]["result"][0]["value"][1], "1");
  EXPECT_EQ((*a)[1].match, PromAnswer::Match::kRegex);
  EXPECT_EQ((*a)[1].status, 422);
  EXPECT_FALSE(ParsePromAnswersYaml("- query: a\n  contains: b\n", "q.yaml").ok());
}

}  // namespace
}  // namespace gpuattr::testing
