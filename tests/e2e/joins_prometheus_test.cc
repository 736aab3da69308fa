// docs/joins.md's PromQL recipes against a real Prometheus: it scrapes gpuattr on the demo cluster,
// kube-state-metrics series made from the demo's pod objects as kube-state-metrics 2.x writes them
// (kube_pod_info, kube_pod_owner, kube_pod_labels with label_app allowlisted,
// kube_pod_container_resource_requests with its resource spelling), and the demo's dcgm-exporter
// bodies as they are, one target per node, all served by a small HTTP server of this test. Every
// recipe is read from the doc (the blocks marked <!-- recipe: NAME -->), so the text a user copies
// is the text tested; each joined result is checked against what the sides hold on their own.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/fake_apiserver.h"
#include "support/local_prometheus.h"
#include "support/paths.h"
#include "support/scenario.h"
#include "support/temp_dir.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;

std::map<std::string, std::string> Recipes() {
  const std::string doc = ReadFile(SourceDir() / "docs" / "joins.md");
  static const std::regex re(R"(<!-- recipe: (\S+) -->\n```promql\n([\s\S]*?)```)");
  std::map<std::string, std::string> out;
  for (std::sregex_iterator it(doc.begin(), doc.end(), re), end; it != end; ++it)
    out[(*it)[1].str()] = (*it)[2].str();
  return out;
}

// kube-state-metrics' label-name sanitising (resource names and label keys): every character
// outside [a-zA-Z0-9_] becomes '_'.
std::string Sanitize(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  return s;
}

std::string Quoted(const std::string& v) { return "\"" + v + "\""; }

// What kube-state-metrics 2.x would publish for the scenario's pods (the families the recipes
// use), with --metric-labels-allowlist=pods=[app].
std::string KubeStateMetrics(const Scenario& scenario) {
  std::string out =
      "# TYPE kube_pod_info gauge\n# TYPE kube_pod_owner gauge\n# TYPE kube_pod_labels gauge\n"
      "# TYPE kube_pod_container_resource_requests gauge\n";
  for (const json& o : scenario.objects) {
    if (o.value("kind", "") != "Pod") continue;
    const json& md = o["metadata"];
    const std::string ns = md.value("namespace", ""), pod = md.value("name", ""),
                      uid = md.value("uid", ""), node = o["spec"].value("nodeName", "");
    const std::string id =
        "namespace=" + Quoted(ns) + ",pod=" + Quoted(pod) + ",uid=" + Quoted(uid);
    std::string owner_kind = "<none>", owner_name = "<none>", controller = "<none>";
    if (md.contains("ownerReferences") && !md["ownerReferences"].empty()) {
      const json& ref = md["ownerReferences"][0];
      owner_kind = ref.value("kind", "");
      owner_name = ref.value("name", "");
      controller = ref.value("controller", false) ? "true" : "false";
    }
    out += "kube_pod_info{" + id + ",host_ip=\"\",pod_ip=\"\",node=" + Quoted(node) +
           ",created_by_kind=" + Quoted(owner_kind) + ",created_by_name=" + Quoted(owner_name) +
           ",priority_class=\"\",host_network=\"false\"} 1\n";
    out += "kube_pod_owner{" + id + ",owner_kind=" + Quoted(owner_kind) +
           ",owner_name=" + Quoted(owner_name) + ",owner_is_controller=" + Quoted(controller) +
           "} 1\n";
    std::string labels;
    if (md.contains("labels") && md["labels"].contains("app"))
      labels = ",label_app=" + Quoted(md["labels"]["app"].get<std::string>());
    out += "kube_pod_labels{" + id + labels + "} 1\n";
    for (const json& c : o["spec"].value("containers", json::array())) {
      if (!c.contains("resources") || !c["resources"].contains("requests")) continue;
      for (const auto& [resource, value] : c["resources"]["requests"].items()) {
        if (resource.find('/') == std::string::npos) continue;  // cpu, memory: not needed here
        const std::string v = value.is_string() ? value.get<std::string>() : value.dump();
        out += "kube_pod_container_resource_requests{" + id +
               ",container=" + Quoted(c.value("name", "")) + ",node=" + Quoted(node) +
               ",resource=" + Quoted(Sanitize(resource)) + ",unit=\"integer\"} " + v + "\n";
      }
    }
  }
  return out;
}

using Series = std::map<std::string, std::string>;
// A label's value, "" when absent (a failed join shows as a mismatch, not an exception).
std::string At(const Series& s, const std::string& name) {
  auto it = s.find(name);
  return it == s.end() ? "" : it->second;
}

std::vector<std::pair<Series, double>> Vector(const QueryResult& r) {
  std::vector<std::pair<Series, double>> out;
  for (const auto& s : r.data["result"]) {
    Series labels;
    for (const auto& [k, v] : s["metric"].items()) labels[k] = v.get<std::string>();
    out.emplace_back(labels, std::stod(s["value"][1].get<std::string>()));
  }
  return out;
}

class JoinsAgainstPrometheus : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kPrometheusBinary)) GTEST_SKIP() << kPrometheusBinary << " is not installed";
  }
};

TEST_F(JoinsAgainstPrometheus, EveryDocumentedRecipeJoins) {
  const auto recipes = Recipes();
  ASSERT_EQ(recipes.size(), 8u) << "docs/joins.md's recipes changed: check each below";
  const gpuattr::testing::TempDir temp("gpuattr-joins");
  ASSERT_FALSE(temp.path().empty());
  const fs::path& dir = temp.path();

  auto scenario = LoadScenario(FixturePath("scenarios/demo"));
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  // The other exporters of the cluster Prometheus: KSM, and dcgm-exporter per node.
  const std::string ksm = KubeStateMetrics(*scenario);
  std::vector<std::string> dcgm;
  for (const auto& [key, bodies] : scenario->exporter_bodies)
    if (key.find("dcgm-exporter") != std::string::npos) dcgm.push_back(bodies.back());
  ASSERT_EQ(dcgm.size(), 4u);
  httplib::Server exporters;
  exporters.Get("/ksm", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(ksm, "text/plain; version=0.0.4");
  });
  exporters.Get(R"(/dcgm/(\d+))", [&](const httplib::Request& req, httplib::Response& res) {
    res.set_content(dcgm.at(std::stoul(req.matches[1].str())), "text/plain; version=0.0.4");
  });
  const int exporters_port = exporters.bind_to_any_port("127.0.0.1");
  ASSERT_GT(exporters_port, 0);
  std::thread serving([&] { exporters.listen_after_bind(); });
  struct Stop {
    httplib::Server& s;
    std::thread& t;
    ~Stop() {
      s.stop();
      t.join();
    }
  } stop{exporters, serving};

  FakeApiServer server(std::move(*scenario));
  ASSERT_TRUE(server.Start().ok());
  KubeconfigOptions ko;
  ko.context = "demo";
  ASSERT_TRUE(server.WriteKubeconfig(dir / "kubeconfig", ko).ok());
  int gpuattr_port = 0;
  auto gpuattr = StartDaemon({DaemonBinary(), "--kubeconfig", (dir / "kubeconfig").string(),
                              "--context", "demo", "--web.listen-address", "127.0.0.1:0",
                              "--interval", "1s", "--state.file", (dir / "state.json").string()},
                             dir / "gpuattr.log", &gpuattr_port);
  ASSERT_NE(gpuattr_port, 0) << gpuattr->Log();

  // As kube-prometheus-stack scrapes them: honorLabels for KSM (its namespace/pod are the pods')
  // and for dcgm-exporter (the GPU Operator's ServiceMonitor keeps the workload's pod labels).
  // Each dcgm-exporter target its own instance, as pod IPs would make them.
  std::string config = PrometheusConfig({{"gpuattr", {gpuattr_port}}}, false);
  const std::string target = "'127.0.0.1:" + std::to_string(exporters_port) + "'";
  config +=
      "  - job_name: kube-state-metrics\n    honor_labels: true\n    metrics_path: /ksm\n"
      "    static_configs: [{targets: [" +
      target +
      "]}]\n"
      "  - job_name: dcgm-exporter\n    honor_labels: true\n    static_configs:\n";
  for (size_t i = 0; i < dcgm.size(); ++i)
    config += "      - {targets: [" + target + "], labels: {__metrics_path__: '/dcgm/" +
              std::to_string(i) + "', instance: 'dcgm-" + std::to_string(i) + "'}}\n";
  LocalPrometheus prometheus;
  ASSERT_EQ(prometheus.Start(dir, config), "");
  ASSERT_TRUE(prometheus.WaitFor(
      "count(up == 1) == 6 and on () count(gpuattr_pod_power_watts) > 0 and on () "
      "count(DCGM_FI_DEV_FB_USED) > 0 and on () count(kube_pod_info) > 0",
      60s))
      << prometheus.Log();

  auto query = [&](const std::string& expr) {
    QueryResult r = prometheus.Query(expr);
    EXPECT_TRUE(r.ok) << r.error << "\n  query: " << expr;
    return Vector(r);
  };
  // The value of a one-series query (NaN when it has none).
  auto scalar = [&](const std::string& expr) {
    auto v = query(expr);
    return v.size() == 1 ? v[0].second : std::nan("");
  };

  {  // pod-uid-owner: every GPU pod, its UID and creator from kube_pod_info, its own power.
    const auto joined = query(recipes.at("pod-uid-owner"));
    EXPECT_EQ(joined.size(), query("gpuattr_pod_power_watts").size());
    for (const auto& [labels, value] : joined) {
      const std::string ns = At(labels, "namespace"), pod = At(labels, "pod");
      EXPECT_EQ(At(labels, "uid"), "uid-" + ns + "-" + pod) << ns << "/" << pod;
      EXPECT_EQ(At(labels, "created_by_kind"), "<none>") << ns << "/" << pod;
      EXPECT_EQ(At(labels, "cluster"), "demo");  // gpuattr's labels stay
      EXPECT_DOUBLE_EQ(
          value, scalar("gpuattr_pod_power_watts{namespace=\"" + ns + "\",pod=\"" + pod + "\"}"))
          << ns << "/" << pod;
    }
    EXPECT_GT(joined.size(), 10u);
  }
  // The demo's GPU pods have no controller (kube_pod_info above says "<none>"): each is its own
  // workload, kind Pod, as rightsizing has it (the Deployment and CronJob cases are unit-tested).
  {  // pod-workload: every GPU pod, its UID and workload from gpuattr_pod_info, its own power.
    const auto joined = query(recipes.at("pod-workload"));
    EXPECT_EQ(joined.size(), query("gpuattr_pod_power_watts").size());
    for (const auto& [labels, value] : joined) {
      const std::string ns = At(labels, "namespace"), pod = At(labels, "pod");
      EXPECT_EQ(At(labels, "uid"), "uid-" + ns + "-" + pod) << ns << "/" << pod;
      EXPECT_EQ(At(labels, "workload_kind"), "Pod") << ns << "/" << pod;
      EXPECT_EQ(At(labels, "workload"), pod) << ns << "/" << pod;
      EXPECT_EQ(At(labels, "cluster"), "demo");
      EXPECT_DOUBLE_EQ(
          value, scalar("gpuattr_pod_power_watts{namespace=\"" + ns + "\",pod=\"" + pod + "\"}"))
          << ns << "/" << pod;
    }
    EXPECT_GT(joined.size(), 10u);
  }
  {  // workload-power: one line per workload of the rightsizing series, the sum of its pods.
    const auto joined = query(recipes.at("workload-power"));
    EXPECT_GT(joined.size(), 10u);
    double total = 0;
    for (const auto& [labels, value] : joined) {
      const std::string sel = "{namespace=\"" + At(labels, "namespace") + "\",workload_kind=\"" +
                              At(labels, "workload_kind") + "\",workload=\"" +
                              At(labels, "workload") + "\"}";
      EXPECT_EQ(query("gpuattr_workload_pods" + sel).size(), 1u) << sel;
      // Each demo workload is one bare pod: its sum is that pod's power.
      EXPECT_DOUBLE_EQ(value,
                       scalar("gpuattr_pod_power_watts{namespace=\"" + At(labels, "namespace") +
                              "\",pod=\"" + At(labels, "workload") + "\"}"))
          << sel;
      total += value;
    }
    EXPECT_NEAR(total, scalar("sum(gpuattr_pod_power_watts)"), 1e-6);
  }
  {  // pod-uid-ksm: every gpuattr_pod_info finds the KSM pod of the same uid.
    const auto joined = query(recipes.at("pod-uid-ksm"));
    EXPECT_EQ(joined.size(), query("gpuattr_pod_info").size());
    for (const auto& [labels, value] : joined) {
      EXPECT_EQ(At(labels, "created_by_kind"), "<none>") << json(labels).dump();
      EXPECT_EQ(value, 1);
    }
    EXPECT_GT(joined.size(), 10u);
  }
  {  // pod-labels: the one pod labelled app=vllm, and everyone else under "".
    double vllm = -1, rest = -1;
    for (const auto& [labels, value] : query(recipes.at("pod-labels")))
      (labels.count("label_app") ? vllm : rest) = value;
    EXPECT_DOUBLE_EQ(vllm, scalar("gpuattr_pod_power_watts{pod=\"vllm-mistral-0\"}"));
    EXPECT_NEAR(rest, scalar("sum(gpuattr_pod_power_watts{pod!=\"vllm-mistral-0\"})"), 1e-6);
  }
  {  // ksm-requests: every pod's devices found in KSM under KSM's spelling, and equal.
    const auto joined = query(recipes.at("ksm-requests"));
    EXPECT_EQ(joined.size(), query("gpuattr_pod_requested_devices").size());
    std::set<std::string> resources;
    for (const auto& [labels, value] : joined) {
      EXPECT_EQ(value, 0) << At(labels, "namespace") << "/" << At(labels, "pod");
      resources.insert(At(labels, "resource"));
    }
    // A whole GPU and MIG profiles (four separators) among them.
    EXPECT_TRUE(resources.count("nvidia_com_gpu"));
    EXPECT_TRUE(resources.count("nvidia_com_mig_1g_10gb"));
  }
  {  // dcgm-device: every dcgm line finds its device; the profile and node agree with dcgm's.
    const auto joined = query(recipes.at("dcgm-device"));
    EXPECT_EQ(joined.size(), query("DCGM_FI_DEV_FB_USED").size());
    size_t mig = 0;
    for (const auto& [labels, value] : joined) {
      EXPECT_EQ(At(labels, "node"), At(labels, "Hostname")) << json(labels).dump();
      if (labels.count("GPU_I_PROFILE")) {
        EXPECT_EQ(At(labels, "mig_profile"), At(labels, "GPU_I_PROFILE")) << json(labels).dump();
        ++mig;
      }
      // gpuattr names the model where dcgm does not (GKE's exporter: from gke-accelerator).
      if (labels.count("modelName"))
        EXPECT_EQ(At(labels, "model"), At(labels, "modelName")) << json(labels).dump();
      else
        EXPECT_NE(At(labels, "model"), "") << json(labels).dump();
    }
    EXPECT_GT(mig, 10u);
  }
  {  // dcgm-card-power: one series per card gpuattr knows, all 0.
    const auto joined = query(recipes.at("dcgm-card-power"));
    EXPECT_EQ(joined.size(), query("count by (uuid) (gpuattr_card_power_watts)").size());
    for (const auto& [labels, value] : joined) EXPECT_EQ(value, 0) << At(labels, "uuid");
    // And the sum the recipe avoids counts a MIG card once per slice.
    EXPECT_GT(scalar("sum(DCGM_FI_DEV_POWER_USAGE)"), scalar("sum(gpuattr_card_power_watts)"));
  }
}

}  // namespace
}  // namespace gpuattr::testing
