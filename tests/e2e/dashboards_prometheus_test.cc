// The whole user path with a real Prometheus: the fake apiserver serves the
// demo scenario, gpuattr reads it every second, Debian's /usr/bin/prometheus scrapes gpuattr every
// second and loads the bundled alert rules. Then every target of every bundled dashboard, with its
// template variables set to the values Prometheus holds, runs through /api/v1/query without error;
// the core panels return data; and every family the dashboards and rules query is live.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "support/dashboards.h"
#include "support/fake_apiserver.h"
#include "support/local_prometheus.h"
#include "support/paths.h"
#include "support/scenario.h"
#include "test_paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;

constexpr const char* kPrometheus = kPrometheusBinary;
constexpr const char* kCluster = "demo";

class DashboardsAgainstPrometheus : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!fs::exists(kPrometheus)) return;  // each test skips
    env_ = new Env();
    env_->Start();
  }
  static void TearDownTestSuite() {
    delete env_;
    env_ = nullptr;
  }
  void SetUp() override {
    if (!fs::exists(kPrometheus)) GTEST_SKIP() << kPrometheus << " is not installed";
    ASSERT_TRUE(env_->error.empty()) << env_->error;
  }

  struct Env {
    fs::path dir;
    std::unique_ptr<FakeApiServer> server;
    std::unique_ptr<LoggedProcess> gpuattr;
    LocalPrometheus prometheus;
    int gpuattr_port = 0;
    std::string error;  // why the environment could not start

    ~Env() {
      prometheus.Stop();
      if (gpuattr) gpuattr->Stop();
      if (server) server->Stop();
      if (!dir.empty()) fs::remove_all(dir);
    }

    void Start() {
      dir = fs::temp_directory_path() / ("gpuattr-dash-e2e-" + std::to_string(getpid()));
      fs::create_directories(dir);
      auto scenario = LoadScenario(FixturePath("scenarios/demo"));
      if (!scenario.ok()) return Fail("demo scenario: " + scenario.error().message);
      server = std::make_unique<FakeApiServer>(std::move(*scenario));
      if (auto s = server->Start(); !s.ok()) return Fail("fake apiserver: " + s.error().message);
      KubeconfigOptions ko;
      ko.context = kCluster;
      if (auto s = server->WriteKubeconfig(dir / "kubeconfig", ko); !s.ok())
        return Fail("kubeconfig: " + s.error().message);

      gpuattr = StartDaemon(
          {DaemonBinary(), "--kubeconfig", (dir / "kubeconfig").string(), "--context", kCluster,
           // prices: the Chargeback dashboard's cost panels have data
           "--config.file", FixturePath("configs/demo-prices.yaml").string(),
           "--web.listen-address", "127.0.0.1:0", "--interval", "1s",
           // never the user's real state file
           "--state.file", (dir / "state.json").string()},
          dir / "gpuattr.log", &gpuattr_port);
      if (gpuattr_port == 0) return Fail("gpuattr did not start serving:\n" + gpuattr->Log());

      // Scrape every second; load the bundled alert rules too (a real Prometheus must accept them).
      if (auto why = prometheus.Start(dir, PrometheusConfig({{"gpuattr", {gpuattr_port}}}, true));
          !why.empty())
        return Fail(why);

      // Wait (≤ 60 s) until a few scrapes are stored (rate() over a window needs two samples)
      // and gpuattr has finished a few cycles (its rates need two; a loaded machine may serve
      // one cycle to several scrapes).
      if (prometheus.WaitFor("count_over_time(gpuattr_last_cycle_timestamp_seconds[1m]) >= 4 and "
                             "changes(gpuattr_last_cycle_timestamp_seconds[1m]) >= 3",
                             60s))
        return;
      Fail("prometheus holds no gpuattr samples after 60 s:\n" + prometheus.Log() + "\ngpuattr:\n" +
           gpuattr->Log());
    }

    void Fail(std::string why) { error = std::move(why); }

    QueryResult Get(const std::string& path,
                    const std::map<std::string, std::string>& params) const {
      return prometheus.Get(path, params);
    }
    QueryResult Query(const std::string& q) const { return prometheus.Query(q); }
  };

  // The dashboard's variables with "All" selected (support/local_prometheus.h).
  static std::map<std::string, std::string> Variables(const json& dashboard, std::string* error) {
    return ResolveDashboardVariables(dashboard, env_->prometheus, {}, error);
  }

  static Env* env_;
};

DashboardsAgainstPrometheus::Env* DashboardsAgainstPrometheus::env_ = nullptr;

std::vector<PanelQuery> QueriesAndAnnotations(const json& dashboard, const std::string& file) {
  auto out = DashboardQueries(dashboard, file);
  for (auto& q : DashboardAnnotationQueries(dashboard, file)) out.push_back(std::move(q));
  return out;
}

// Families the issue "The answer at a glance" adds to the daemon (docs/design.md#metrics and
// docs/design.md#trust-limits-and-failure) while the dashboards and alerts already use them.
constexpr const char* kEmittedFromTheIssue = "emitted from the issue \"The answer at a glance\"";

TEST_F(DashboardsAgainstPrometheus, VariablesResolveToDemoValues) {
  for (const auto& file : DashboardFiles()) {
    auto d = LoadDashboard(file);
    ASSERT_TRUE(d.ok()) << d.error().message;
    std::string error;
    auto vars = Variables(*d, &error);
    EXPECT_TRUE(error.empty()) << file.filename() << ":\n" << error;
    EXPECT_EQ(vars["cluster"], "(demo)") << file.filename();
  }
}

TEST_F(DashboardsAgainstPrometheus, EveryPanelTargetRunsWithoutError) {
  size_t ran = 0;
  for (const auto& file : DashboardFiles()) {
    auto d = LoadDashboard(file);
    ASSERT_TRUE(d.ok()) << d.error().message;
    std::string ignored;
    const auto vars = Variables(*d, &ignored);
    for (const auto& q : QueriesAndAnnotations(*d, file.filename().string())) {
      const std::string expr = SubstituteVariables(q.expr, vars);
      EXPECT_EQ(expr.find('$'), std::string::npos)
          << q.Where() << ": unreplaced variable in " << expr;
      QueryResult r = env_->Query(expr);
      EXPECT_TRUE(r.ok) << q.Where() << ": " << r.error << "\n  query: " << expr;
      ++ran;
    }
  }
  EXPECT_GT(ran, 100u);
}

// The panels a newcomer looks at first must show the demo's data.
TEST_F(DashboardsAgainstPrometheus, CorePanelsReturnData) {
  const std::vector<std::pair<std::string, std::string>> core = {
      {"namespaces.json", "Power"},
      {"namespaces.json", "GPU memory held idle"},
      {"pods.json", "Pod power"},
      {"devices.json", "Device utilisation"},
      {"allocation.json", "Allocatable vs requested per resource"},
      {"pending.json", "Pending pods and why"},
      {"idle.json", "Idle pods"},
      {"pending.json", "Per resource: held idle, free, pending"},
      {"chargeback.json", "GPU-hours and cost per namespace"},
      {"chargeback.json", "GPU-hours and cost per team"},
      {"chargeback.json", "Cost per day per namespace"},
  };
  for (const auto& [file, title] : core) {
    auto d = LoadDashboard(SourceDir() / "grafana" / "dashboards" / file);
    ASSERT_TRUE(d.ok()) << d.error().message;
    std::string ignored;
    const auto vars = Variables(*d, &ignored);
    size_t targets = 0, with_data = 0;
    std::string tried;
    for (const auto& q : DashboardQueries(*d, file)) {
      if (q.panel_title != title) continue;
      ++targets;
      const std::string expr = SubstituteVariables(q.expr, vars);
      QueryResult r = env_->Query(expr);
      if (r.ok && !r.data["result"].empty()) ++with_data;
      tried += "\n  " + q.Where() + ": " + expr + (r.ok ? "" : " → " + r.error);
    }
    ASSERT_GT(targets, 0u) << file << " has no panel \"" << title << "\"";
    EXPECT_GT(with_data, 0u) << file << " \"" << title << "\" returns no data:" << tried;
  }
}

// Every family a dashboard or rule queries has series in Prometheus, except those the demo
// cannot produce (listed with the reason).
TEST_F(DashboardsAgainstPrometheus, EveryQueriedFamilyIsLive) {
  const std::map<std::string, std::string> not_in_demo = {
      {"gpuattr_device_candidate_pod", "needs an exporter without pod labels"},
      {"gpuattr_pod_unrequested_gpu_use", "needs a pod on a GPU it did not request"},
  };
  std::map<std::string, std::string> used;
  for (const auto& file : DashboardFiles()) {
    auto d = LoadDashboard(file);
    ASSERT_TRUE(d.ok()) << d.error().message;
    for (const auto& q : DashboardQueries(*d, file.filename().string()))
      for (const auto& n : GpuattrMetricNames(q.expr)) used.emplace(n, q.Where());
  }
  for (const auto& file : AlertRuleFiles()) {
    auto exprs = RuleExpressions(file);
    ASSERT_TRUE(exprs.ok()) << exprs.error().message;
    for (const auto& e : *exprs)
      for (const auto& n : GpuattrMetricNames(e)) used.emplace(n, file.filename().string());
  }
  QueryResult live =
      env_->Get("/api/v1/label/__name__/values", {{"match[]", "{cluster=\"demo\"}"}});
  ASSERT_TRUE(live.ok) << live.error;
  std::set<std::string> names;
  for (const auto& n : live.data) names.insert(n.get<std::string>());
  std::string missing;
  for (const auto& [name, where] : used)
    if (!names.count(name) && !not_in_demo.count(name))
      missing += "\n  " + name + " (used by " + where + ")";
  EXPECT_TRUE(missing.empty()) << "queried but not live in gpuattr's output on the demo:"
                               << missing;
}

// No panel target (or annotation) returns nothing on the demo, unless it is listed here with the
// reason. Keys: "file|panel title" (every target of the panel) or "file|panel title|refId";
// file "*" is any dashboard.
const std::map<std::string, std::string>& MayBeEmpty() {
  static const std::map<std::string, std::string> panels = {
      {"*|annotation: gpuattr alerts",
       "alerts fire only after their for: (1 min at the least); the run may be shorter"},
      {"devices.json|Possible owners of devices without pod labels",
       "needs a dcgm-exporter without pod labels; the demo's have them"},
      {"pods.json|Pods using a GPU they did not request",
       "needs a pod on a GPU it did not request (process tier); not in the demo"},
      {"self.json|Rejected lines by reason",
       "the demo's exporters send no line to reject (the panel shows counts > 0)"},
      {"self.json|CPU", std::string("process_* self-metrics: ") + kEmittedFromTheIssue},
      {"self.json|Resident memory", std::string("process_* self-metrics: ") + kEmittedFromTheIssue},
      {"self.json|Open file descriptors",
       std::string("process_* self-metrics: ") + kEmittedFromTheIssue},
      {"self.json|Uptime", std::string("process_* self-metrics: ") + kEmittedFromTheIssue},
  };
  return panels;
}

const std::string* MayBeEmptyReason(const PanelQuery& q) {
  for (const std::string& file : {q.dashboard, std::string("*")}) {
    for (const std::string& key :
         {file + "|" + q.panel_title + "|" + q.ref_id, file + "|" + q.panel_title}) {
      auto it = MayBeEmpty().find(key);
      if (it != MayBeEmpty().end()) return &it->second;
    }
  }
  return nullptr;
}

TEST_F(DashboardsAgainstPrometheus, NoQueryReturnsEmptyUnlessListed) {
  std::set<std::string> listed_and_seen;
  std::string empty, notes;
  size_t ran = 0;
  for (const auto& file : DashboardFiles()) {
    auto d = LoadDashboard(file);
    ASSERT_TRUE(d.ok()) << d.error().message;
    std::string ignored;
    const auto vars = Variables(*d, &ignored);
    for (const auto& q : QueriesAndAnnotations(*d, file.filename().string())) {
      const std::string expr = SubstituteVariables(q.expr, vars);
      QueryResult r = env_->Query(expr);
      ASSERT_TRUE(r.ok) << q.Where() << ": " << r.error;  // EveryPanelTargetRunsWithoutError
      ++ran;
      const bool is_empty = r.data["result"].empty();
      const std::string* reason = MayBeEmptyReason(q);
      if (reason) listed_and_seen.insert(q.dashboard + "|" + q.panel_title);
      if (is_empty && !reason) empty += "\n  " + q.Where() + ": " + expr;
      if (!is_empty && reason)
        notes += "\n  " + q.Where() + " returns data although listed (" + *reason + ")";
    }
  }
  EXPECT_GT(ran, 100u);
  EXPECT_TRUE(empty.empty()) << "empty on the demo and not listed in MayBeEmpty() with a reason:"
                             << empty;
  // Every entry names a panel that exists (a typo would let an empty panel through).
  for (const auto& [key, reason] : MayBeEmpty()) {
    const std::string panel = key.substr(0, key.find('|', key.find('|') + 1));
    bool found = false;
    for (const auto& seen : listed_and_seen)
      found = found || seen == panel ||
              (panel.rfind("*|", 0) == 0 && seen.substr(seen.find('|')) == panel.substr(1));
    EXPECT_TRUE(found) << "MayBeEmpty() lists \"" << key << "\", which names no panel";
  }
  if (!notes.empty()) std::cout << "may-be-empty entries that returned data:" << notes << "\n";
}

// The numbers the issue fixed, checked on the demo: the card with an XID 48 is MIG-partitioned
// into six slices, and it is one critical card (the old per-slice count said 6); a node with
// nothing allocatable gives no Inf or NaN share.
TEST_F(DashboardsAgainstPrometheus, CriticalCardsCountCardsNotSlices) {
  auto d = LoadDashboard(SourceDir() / "grafana" / "dashboards" / "devices.json");
  ASSERT_TRUE(d.ok()) << d.error().message;
  std::string ignored;
  const auto vars = Variables(*d, &ignored);
  // The first value of a panel's query, and how many series it returned (-1: none).
  auto panel_value = [&](const std::string& title, size_t* series) {
    for (const auto& q : DashboardQueries(*d, "devices.json")) {
      if (q.panel_title != title) continue;
      QueryResult r = env_->Query(SubstituteVariables(q.expr, vars));
      if (!r.ok || r.data["result"].empty()) return -1.0;
      *series = r.data["result"].size();
      return std::stod(r.data["result"][0]["value"][1].get<std::string>());
    }
    return -1.0;
  };
  // The slices of the critical card (its health is the card's series, without gpu_instance).
  QueryResult slices = env_->Query(
      "count(gpuattr_device_info{cluster=\"demo\", gpu_instance!=\"\"} and on (cluster, node, gpu) "
      "(gpuattr_device_health{cluster=\"demo\", state=\"critical\"} == 1))");
  ASSERT_TRUE(slices.ok && !slices.data["result"].empty())
      << "the demo has no critical MIG card: this test checks nothing";
  EXPECT_GT(std::stod(slices.data["result"][0]["value"][1].get<std::string>()), 1.0)
      << "the demo's critical card is no longer MIG-partitioned: this test checks nothing";
  const double slice_count = std::stod(slices.data["result"][0]["value"][1].get<std::string>());
  // The Devices table's health column gives every slice of that card the card's state.
  size_t critical_slices = 0, health_queries = 0;
  for (const auto& q : DashboardQueries(*d, "devices.json")) {
    if (q.panel_title != "Devices" || q.expr.find("gpuattr_device_health") == std::string::npos)
      continue;
    ++health_queries;
    QueryResult r = env_->Query(SubstituteVariables(q.expr, vars));
    ASSERT_TRUE(r.ok) << q.expr;
    for (const auto& s : r.data["result"])
      critical_slices += s["metric"].value("cluster", "") == "demo" &&
                         s["metric"].value("state", "") == "critical" &&
                         !s["metric"].value("gpu_instance", "").empty();
  }
  EXPECT_EQ(health_queries, 1u);
  EXPECT_EQ(static_cast<double>(critical_slices), slice_count);
  size_t series = 0;
  EXPECT_EQ(panel_value("Critical cards", &series), 1.0);
  EXPECT_EQ(series, 1u);
  EXPECT_EQ(panel_value("Cards with a warning", &series), 1.0);
}

TEST_F(DashboardsAgainstPrometheus, RequestedShareIsFiniteOnNodesWithNothingAllocatable) {
  QueryResult zero = env_->Query("gpuattr_node_devices_allocatable{cluster=\"demo\"} == 0");
  ASSERT_TRUE(zero.ok && !zero.data["result"].empty())
      << "the demo has no node with 0 allocatable devices: this test checks nothing";
  auto d = LoadDashboard(SourceDir() / "grafana" / "dashboards" / "allocation.json");
  ASSERT_TRUE(d.ok()) << d.error().message;
  std::string ignored;
  const auto vars = Variables(*d, &ignored);
  size_t checked = 0;
  for (const auto& q : DashboardQueries(*d, "allocation.json")) {
    if (q.panel_title != "Requested share per node") continue;
    QueryResult r = env_->Query(SubstituteVariables(q.expr, vars));
    ASSERT_TRUE(r.ok) << r.error;
    for (const auto& s : r.data["result"]) {
      const std::string v = s["value"][1].get<std::string>();
      EXPECT_TRUE(std::isfinite(std::stod(v))) << s["metric"].dump() << " = " << v;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0u);
}

// Prometheus loaded the bundled rules and evaluates them without errors.
TEST_F(DashboardsAgainstPrometheus, AlertRulesLoadAndEvaluate) {
  QueryResult r = env_->Get("/api/v1/rules", {});
  ASSERT_TRUE(r.ok) << r.error;
  size_t rules = 0;
  for (const auto& g : r.data["groups"])
    for (const auto& rule : g["rules"]) {
      ++rules;
      EXPECT_EQ(rule.value("health", ""), "ok")
          << rule.value("name", "") << ": " << rule.value("lastError", "");
    }
  EXPECT_GE(rules, 13u);
}

}  // namespace
}  // namespace gpuattr::testing
