// Issue 25's critical and first high finding, end to end: the real binary against the fake
// apiserver serving fixtures/scenarios/forgery-tenant and forgery-query-api
// (tests/golden/forgery_tenant_scenario_gen.py lists the attacks; docs/design.md#trust).
//   (a) a per-process exporter DaemonSet in the tenant namespace zz-team claiming the victim
//       ml/train-1's node: nothing attributed to the attacker, the victim's numbers unchanged;
//   (b) a DaemonSet in a-team duplicating the genuine exporter's devices: the genuine one wins;
//   (c) invented GPUs 5 and 6 at 4,999 W on a 2-GPU node and a fake XID 79: untrusted (never
//       fetched) or, from an exporter in an exporter namespace, over_capacity; health unchanged;
//   (d) a ReplicaSet pod in a-team scraped by a trusted Prometheus raising a GPU to 4,999 W.
// Each compares the published stage series with those of the same cluster without the attacks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "support/fake_apiserver.h"
#include "support/once_run.h"
#include "support/paths.h"
#include "support/scenario.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

// A sample whose value is the forgers' 4,999 W (the exposition writes it "4999").
constexpr const char* kForgedWatts = "} 4999(\\.0+)?\n";

const std::set<std::string> kTenantExporters = {"gpu-process-exporter-zq7xk",
                                                "nvidia-dcgm-exporter-hand1", "gpu-health-x1",
                                                "dcgm-exporter-aa1b2", "dcgm-exporter-mmmmm"};

// The cluster without the attacks: the forgers' pods and bodies gone, the genuine exporters'
// bodies as they are (the scenario's genuine bodies carry nothing a rule drops).
Scenario TenantBaseline(Scenario s) {
  std::erase_if(s.objects, [](const nlohmann::json& o) {
    return kTenantExporters.count(o["metadata"].value("name", "")) > 0;
  });
  std::erase_if(s.exporter_bodies,
                [](const auto& kv) { return kv.first.rfind("gpu-operator/", 0) != 0; });
  return s;
}

// The query API's answer without the forged series (they follow the genuine exporter's).
Scenario QueryBaseline(Scenario s) {
  for (auto& [key, answers] : s.prometheus)
    for (PromAnswer& a : answers) {
      if (a.pattern.find("__name__=~") == std::string::npos) continue;
      auto doc = nlohmann::json::parse(a.body);
      auto& result = doc["data"]["result"];
      nlohmann::json kept = nlohmann::json::array();
      for (const auto& r : result)
        if (r["metric"].value("namespace", "") == "gpu-operator") kept.push_back(r);
      EXPECT_LT(kept.size(), result.size());
      result = kept;
      a.body = doc.dump();
    }
  return s;
}

std::map<std::string, double> StageSeries(const std::string& exposition) {
  std::map<std::string, double> out;
  for (const auto& [k, v] : ExpositionSeries(exposition))
    if (IsStageSeries(k)) out[k] = v;
  return out;
}

std::string Rejected(const std::string& ns, const std::string& pod, const std::string& node,
                     const std::string& reason, int n) {
  return "gpuattr_exporter_rejected_lines{cluster=\"lab\",kind=\"dcgm\",namespace=\"" + ns +
         "\",node=\"" + node + "\",pod=\"" + pod + "\",reason=\"" + reason + "\"} " +
         std::to_string(n) + "\n";
}

class ForgeryTenant : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuattr-forgery-tenant-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static Scenario Load(const std::string& name) {
    auto s = LoadScenario(FixturePath("scenarios/" + name));
    EXPECT_TRUE(s.ok()) << s.error().message;
    return s.ok() ? std::move(*s) : Scenario{};
  }

  // `gpuattr --once` against `scenario`, with the proxy GETs the fake apiserver saw.
  OnceRun Once(const Scenario& scenario, const std::string& name,
               std::vector<std::string> extra = {},
               std::vector<RequestRecord>* requests = nullptr) {
    FakeApiServer server(scenario);
    EXPECT_TRUE(server.Start().ok());
    const fs::path run = dir_ / name;
    fs::create_directories(run);
    KubeconfigOptions lab;
    lab.context = "lab";
    EXPECT_TRUE(server.WriteKubeconfig(run / "kubeconfig", lab).ok());
    std::vector<std::string> args = {"--kubeconfig", (run / "kubeconfig").string(), "--once",
                                     "--log.level", "warn"};
    args.insert(args.end(), extra.begin(), extra.end());
    OnceRun r = RunGpuattr(args, run);
    if (requests) *requests = server.Requests();
    return r;
  }

  fs::path dir_;
};

// (a), (b), (c): a tenant's DaemonSets, a forged owner reference and a non-controller one are
// never fetched; the exporter in an exporter namespace is read but loses the duplicated devices
// and the invented cards. Every stage series equals the baseline's.
TEST_F(ForgeryTenant, ATenantsExportersMoveNoNumber) {
  const Scenario scenario = Load("forgery-tenant");
  std::vector<RequestRecord> requests;
  OnceRun forged = Once(scenario, "forged", {}, &requests);
  ASSERT_EQ(forged.code, 0) << forged.err;
  OnceRun clean = Once(TenantBaseline(scenario), "baseline");
  ASSERT_EQ(clean.code, 0) << clean.err;

  const auto with = StageSeries(forged.out), without = StageSeries(clean.out);
  ASSERT_GT(without.size(), 50u);
  EXPECT_EQ(with, without);

  // (a) The victim keeps its 300 W and its dcgm attribution; the attacker's own pod is there.
  const std::string pod = "{cluster=\"lab\",namespace=\"";
  EXPECT_THAT(forged.out, HasSubstr("gpuattr_pod_power_watts" + pod +
                                    "ml\",node=\"gpu-b\",pod=\"train-1\"} 300\n"));
  EXPECT_THAT(forged.out, HasSubstr("gpuattr_pod_power_watts" + pod +
                                    "zz-team\",node=\"gpu-b\",pod=\"miner-0\"} 400\n"));
  EXPECT_THAT(forged.out, HasSubstr("gpuattr_pod_attribution{cluster=\"lab\",method=\"dcgm_pod\","
                                    "namespace=\"ml\",pod=\"train-1\"} 1\n"));
  // Never fetched: no proxy GET of a tenant's pod, whatever it would serve.
  for (const RequestRecord& r : requests)
    for (const char* ns : {"/namespaces/zz-team/", "/namespaces/a-team/"})
      EXPECT_EQ(r.path.find(ns), std::string::npos) << r.path;
  EXPECT_THAT(forged.out, HasSubstr("gpuattr_discovery_candidates{cluster=\"lab\","
                                    "outcome=\"untrusted\"} 4\n"));
  for (const char* p : {"gpu-process-exporter-zq7xk", "nvidia-dcgm-exporter-hand1", "gpu-health-x1",
                        "dcgm-exporter-aa1b2"})
    EXPECT_THAT(forged.out, Not(HasSubstr("pod=\"" + std::string(p) + "\""))) << p;

  // (b) The genuine exporter keeps its devices; the second exporter's copies are counted.
  EXPECT_THAT(forged.out, HasSubstr(Rejected("gpu-operator", "nvidia-dcgm-exporter-bbbbb", "gpu-b",
                                             "duplicate_device", 0)));
  EXPECT_THAT(forged.out, HasSubstr(Rejected("monitoring", "dcgm-exporter-mmmmm", "gpu-b",
                                             "duplicate_device", 12)));
  // (c) Its GPUs 5 and 6 (4,999 W each, XID 79 on GPU 5) are beyond gpu-b's two cards.
  EXPECT_THAT(forged.out, HasSubstr(Rejected("monitoring", "dcgm-exporter-mmmmm", "gpu-b",
                                             "over_capacity", 12)));
  EXPECT_THAT(forged.out, Not(HasSubstr("GPU-5757")));
  // No sample of the forged 4,999 W (the digits may well occur inside a timing or a
  // timestamp: CI once saw them there). The pattern does find such a sample:
  EXPECT_THAT("gpuattr_gpu_power_watts{gpu=\"5\"} 4999\n", ContainsRegex(kForgedWatts));
  EXPECT_THAT("x{} 4999.000\ny{} 1764824999.5\n", ContainsRegex(kForgedWatts));
  EXPECT_THAT("y{} 1764824999.5\nz{} 0.04999\n", Not(ContainsRegex(kForgedWatts)));
  EXPECT_THAT(forged.out, Not(ContainsRegex(kForgedWatts)));
  EXPECT_THAT(forged.out,
              HasSubstr("gpuattr_node_health{cluster=\"lab\",node=\"gpu-b\",state=\"ok\"} 1\n"));

  // The status page's reasons say why each forger may not speak, and how to trust it.
  OnceRun json = Once(scenario, "json", {"--output", "json"});
  ASSERT_EQ(json.code, 0) << json.err;
  std::map<std::string, std::string> probe;
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  for (const auto& p : doc["probes"]) probe[p["candidate"]] = p["reason"];
  EXPECT_THAT(probe["zz-team/gpu-process-exporter-zq7xk:9835"],
              HasSubstr("its DaemonSet gpu-process-exporter is in namespace zz-team, which is not "
                        "in discovery.trust.exporter_namespaces"));
  EXPECT_THAT(probe["zz-team/nvidia-dcgm-exporter-hand1:9400"],
              HasSubstr("apiVersion \"example.com/v1\", not apps/v1"));
  EXPECT_THAT(probe["zz-team/gpu-health-x1:9400"], HasSubstr("not the controller reference"));
  EXPECT_THAT(probe["a-team/dcgm-exporter-aa1b2:9400"], HasSubstr("--target a-team/"));
  for (const OnceRun* r : {&forged, &clean, &json}) {  // issue 14: "peak RSS under 150 MB"
    EXPECT_GT(r->max_rss_kib, 0);
    EXPECT_LT(r->max_rss_kib, 150'000'000 / 1024);
  }
}

// The operator who moves the exporters elsewhere says so (docs/security.md, migration): then that
// namespace's DaemonSet is read, and the order of docs/design.md#trust decides the duplicates.
TEST_F(ForgeryTenant, AConfiguredExporterNamespaceIsTrusted) {
  const fs::path cfg = dir_ / "a-team.yaml";
  std::ofstream(cfg) << "discovery:\n  trust:\n    exporter_namespaces: [a-team, gpu-operator]\n";
  OnceRun r = Once(Load("forgery-tenant"), "a-team", {"--config.file", cfg.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  // Both DaemonSets rank alike: a-team comes first by namespace and keeps gpu-b's devices.
  EXPECT_THAT(r.out, HasSubstr(Rejected("gpu-operator", "nvidia-dcgm-exporter-bbbbb", "gpu-b",
                                        "duplicate_device", 12)));
  // monitoring is no longer an exporter namespace: its exporter is not read.
  EXPECT_THAT(r.out, Not(HasSubstr("pod=\"dcgm-exporter-mmmmm\"")));
}

// (d) The query API's series from a tenant's pod (or from no identifiable pod) stand nowhere.
TEST_F(ForgeryTenant, ATrustedPrometheusScrapingATenantsPodMovesNoNumber) {
  const Scenario scenario = Load("forgery-query-api");
  OnceRun forged = Once(scenario, "forged");
  ASSERT_EQ(forged.code, 0) << forged.err;
  OnceRun clean = Once(QueryBaseline(scenario), "baseline");
  ASSERT_EQ(clean.code, 0) << clean.err;

  const auto with = StageSeries(forged.out), without = StageSeries(clean.out);
  ASSERT_GT(without.size(), 20u);
  EXPECT_EQ(with, without);
  EXPECT_THAT(forged.out, HasSubstr("gpuattr_pod_power_watts{cluster=\"lab\",namespace=\"ml\","
                                    "node=\"gpu-b\",pod=\"train-1\"} 300\n"));
  EXPECT_THAT(forged.out, Not(ContainsRegex(kForgedWatts)));
  const std::string rej =
      "gpuattr_exporter_rejected_lines{cluster=\"lab\",kind=\"prometheus\",namespace="
      "\"monitoring\","
      "node=\"\",pod=\"prometheus-k8s\",reason=\"";
  EXPECT_THAT(forged.out, HasSubstr(rej + "untrusted_target\"} 4\n"));
  EXPECT_THAT(forged.out, HasSubstr(rej + "no_target\"} 1\n"));

  // Pinned, the query API may give series that name no target; a named target must still pass.
  OnceRun pinned = Once(scenario, "pinned", {"--target", "monitoring/svc/prometheus-k8s:9090"});
  ASSERT_EQ(pinned.code, 0) << pinned.err;
  EXPECT_THAT(pinned.out, HasSubstr(rej + "untrusted_target\"} 4\n"));
  EXPECT_THAT(pinned.out, HasSubstr(rej + "no_target\"} 0\n"));
}

// HAMi's vGPU monitor is a per-pod memory source (docs/design.md#node-shapes) and so speaks for
// its node only from a trusted pod: attr-hami-monitor's genuine monitor is a DaemonSet pod in
// kube-system; a tenant's DaemonSet in `ml` and a bare pod in kube-system serving the monitor's
// names (claiming that ml/h-1 fills GPU 0 and inventing a pod) are never fetched, and every stage
// series equals the scenario's own.
TEST_F(ForgeryTenant, AnUntrustedHamiMonitorMovesNoNumber) {
  const Scenario clean = Load("attr-hami-monitor");
  Scenario forged = clean;
  const std::string body =
      "hami_vgpu_memory_used_bytes{container=\"c0\",device_uuid=\"GPU-hami-0000\","
      "namespace=\"ml\",pod=\"h-1\",vdevice_index=\"0\",zone=\"vGPU\"} 24152899584\n"
      "hami_vgpu_memory_used_bytes{container=\"c0\",device_uuid=\"GPU-hami-0001\","
      "namespace=\"ml\",pod=\"h-0\",vdevice_index=\"0\",zone=\"vGPU\"} 24152899584\n";
  auto monitor = [](const std::string& ns, const std::string& name, bool daemonset) {
    nlohmann::json p = {{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata",
                         {{"name", name},
                          {"namespace", ns},
                          {"uid", "uid-" + name},
                          {"labels", {{"app.kubernetes.io/component", "hami-device-plugin"}}}}},
                        {"spec",
                         {{"nodeName", "hami-1"},
                          {"containers",
                           {{{"name", "vgpu-monitor"},
                             {"image", "docker.io/projecthami/hami:v2.10.0"},
                             {"ports", {{{"name", "metrics"}, {"containerPort", 9394}}}}}}}}},
                        {"status", {{"phase", "Running"}}}};
    if (daemonset)
      p["metadata"]["ownerReferences"] = {{{"apiVersion", "apps/v1"},
                                           {"kind", "DaemonSet"},
                                           {"name", "hami-device-plugin"},
                                           {"controller", true}}};
    return p;
  };
  forged.objects.push_back(monitor("ml", "hami-device-plugin-t3n4n", true));
  forged.objects.push_back(monitor("kube-system", "hami-vgpu-monitor-bare", false));
  forged.exporter_bodies["ml/hami-device-plugin-t3n4n:9394"] = {body};
  forged.exporter_bodies["kube-system/hami-vgpu-monitor-bare:9394"] = {body};

  std::vector<RequestRecord> requests;
  OnceRun with = Once(forged, "hami-forged", {}, &requests);
  ASSERT_EQ(with.code, 0) << with.err;
  OnceRun without = Once(clean, "hami-clean");
  ASSERT_EQ(without.code, 0) << without.err;
  const auto a = StageSeries(with.out), b = StageSeries(without.out);
  ASSERT_GT(b.size(), 20u);
  EXPECT_EQ(a, b);
  for (const RequestRecord& r : requests) {
    EXPECT_EQ(r.path.find("hami-device-plugin-t3n4n"), std::string::npos) << r.path;
    EXPECT_EQ(r.path.find("hami-vgpu-monitor-bare"), std::string::npos) << r.path;
  }
  EXPECT_THAT(with.out, HasSubstr("gpuattr_discovery_candidates{cluster=\"lab\","
                                  "outcome=\"untrusted\"} 2\n"));
  // The genuine monitor is read: hami-1's pods come from it (the process tier).
  EXPECT_THAT(with.out, HasSubstr("gpuattr_pod_attribution{cluster=\"lab\",method=\"process\","
                                  "namespace=\"ml\",pod=\"h-1\"} 1\n"));
}

}  // namespace
}  // namespace gpuattr::testing
