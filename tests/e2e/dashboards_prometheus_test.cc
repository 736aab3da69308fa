// The whole user path with a real Prometheus: the fake apiserver serves the
// demo scenario, gpuattr reads it every second, Debian's /usr/bin/prometheus scrapes gpuattr every
// second and loads the bundled alert rules. Then every target of every bundled dashboard, with its
// template variables set to the values Prometheus holds, runs through /api/v1/query without error;
// the core panels return data; and every family the dashboards and rules query is live.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/dashboards.h"
#include "support/fake_apiserver.h"
#include "support/paths.h"
#include "support/scenario.h"
#include "test_paths.h"

extern char** environ;

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;

constexpr const char* kPrometheus = "/usr/bin/prometheus";
constexpr const char* kCluster = "demo";

// A child process with stdout and stderr in files; SIGTERM then SIGKILL on destruction.
class Child {
 public:
  Child(const std::vector<std::string>& args, const fs::path& log) : log_(log) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
  }
  ~Child() { Stop(); }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  bool started() const { return pid_ > 0; }
  bool Exited() {
    if (pid_ <= 0) return true;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return true;
    }
    return false;
  }
  std::string Log() const {
    try {
      return ReadFile(log_);
    } catch (const std::exception&) {
      return "";
    }
  }
  void Stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    for (int i = 0; i < 1000; ++i) {  // up to 10 s, then SIGKILL
      if (Exited()) return;
      std::this_thread::sleep_for(10ms);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  fs::path log_;
};

// A free loopback port from the OS (closed again: Prometheus binds it right after).
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

struct QueryResult {
  bool ok = false;
  std::string error;  // HTTP or Prometheus error
  json data;          // "data" of a successful answer
};

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
    std::unique_ptr<Child> gpuattr, prometheus;
    int gpuattr_port = 0, prometheus_port = 0;
    std::string error;  // why the environment could not start

    ~Env() {
      if (prometheus) prometheus->Stop();
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

      gpuattr = std::make_unique<Child>(
          std::vector<std::string>{
              DaemonBinary(), "--kubeconfig", (dir / "kubeconfig").string(), "--context", kCluster,
              // prices: the Chargeback dashboard's cost panels have data
              "--config.file", FixturePath("configs/demo-prices.yaml").string(),
              "--web.listen-address", "127.0.0.1:0", "--interval", "1s",
              // never the user's real state file
              "--state.file", (dir / "state.json").string()},
          dir / "gpuattr.log");
      if (!gpuattr->started()) return Fail("cannot start gpuattr");
      const std::regex serving("msg=serving address=127\\.0\\.0\\.1:([0-9]+)");
      for (int i = 0; i < 1000 && gpuattr_port == 0 && !gpuattr->Exited(); ++i) {  // ≤ 10 s
        std::smatch m;
        const std::string log = gpuattr->Log();
        if (std::regex_search(log, m, serving))
          gpuattr_port = std::stoi(m[1]);
        else
          std::this_thread::sleep_for(10ms);
      }
      if (gpuattr_port == 0) return Fail("gpuattr did not start serving:\n" + gpuattr->Log());

      // Scrape every second; load the bundled alert rules too (a real Prometheus must accept them).
      std::string rules;
      for (const auto& f : AlertRuleFiles()) rules += "  - '" + f.string() + "'\n";
      std::ofstream(dir / "prometheus.yml")
          << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n"
          << rules
          << "scrape_configs:\n  - job_name: gpuattr\n    honor_labels: true\n"
             "    static_configs: [{targets: ['127.0.0.1:"
          << gpuattr_port << "']}]\n";
      for (int attempt = 0; attempt < 3 && prometheus_port == 0; ++attempt) {
        const int port = FreePort();
        fs::remove_all(dir / "tsdb");
        prometheus = std::make_unique<Child>(
            std::vector<std::string>{
                kPrometheus, "--config.file=" + (dir / "prometheus.yml").string(),
                "--storage.tsdb.path=" + (dir / "tsdb").string(),
                "--web.listen-address=127.0.0.1:" + std::to_string(port), "--log.level=warn"},
            dir / "prometheus.log");
        if (!prometheus->started()) return Fail("cannot start " + std::string(kPrometheus));
        httplib::Client cli("127.0.0.1", port);
        cli.set_connection_timeout(1s);
        for (int i = 0; i < 300 && !prometheus->Exited(); ++i) {  // ≤ 30 s
          auto r = cli.Get("/-/ready");
          if (r && r->status == 200) {
            prometheus_port = port;
            break;
          }
          std::this_thread::sleep_for(100ms);
        }
        if (prometheus_port == 0) prometheus->Stop();  // the port was taken meanwhile: retry
      }
      if (prometheus_port == 0)
        return Fail("prometheus did not become ready:\n" + prometheus->Log());

      // Wait (≤ 60 s) until a few scrapes are stored (rate() over a window needs two samples)
      // and gpuattr has finished a few cycles (its rates need two; a loaded machine may serve
      // one cycle to several scrapes).
      for (int i = 0; i < 600; ++i) {
        auto r = Query(
            "count_over_time(gpuattr_last_cycle_timestamp_seconds[1m]) >= 4 and "
            "changes(gpuattr_last_cycle_timestamp_seconds[1m]) >= 3");
        if (r.ok && !r.data["result"].empty()) return;
        std::this_thread::sleep_for(100ms);
      }
      Fail("prometheus holds no gpuattr samples after 60 s:\n" + prometheus->Log() +
           "\ngpuattr:\n" + gpuattr->Log());
    }

    void Fail(std::string why) { error = std::move(why); }

    QueryResult Get(const std::string& path, const httplib::Params& params) const {
      httplib::Client cli("127.0.0.1", prometheus_port);
      cli.set_read_timeout(30s);
      QueryResult out;
      auto r = cli.Get(path, params, httplib::Headers{});
      if (!r) {
        out.error = "no answer from prometheus: " + httplib::to_string(r.error());
        return out;
      }
      json body = json::parse(r->body, nullptr, false);
      if (body.is_discarded()) {
        out.error = "HTTP " + std::to_string(r->status) + ": " + r->body;
      } else if (body.value("status", "") != "success") {
        out.error = "HTTP " + std::to_string(r->status) + ": " + body.value("errorType", "") +
                    ": " + body.value("error", "");
      } else {
        out.ok = true;
        out.data = body["data"];
      }
      return out;
    }
    QueryResult Query(const std::string& q) const { return Get("/api/v1/query", {{"query", q}}); }
  };

  // Values of the dashboard's variables, resolved as Grafana would with "All" selected: each
  // label_values(selector, label) query asks Prometheus for the label's values, and the
  // selection is formatted as a regex alternation of them. Built-ins get fixed values.
  static std::map<std::string, std::string> Variables(const json& dashboard, std::string* error) {
    std::map<std::string, std::string> vars = {{"__rate_interval", "1m"},
                                               {"__interval", "15s"},
                                               {"__range", "1h"},
                                               {"__range_s", "3600"},
                                               {"__interval_ms", "15000"}};
    const std::regex label_values(R"(^label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$)");
    for (const auto& v : dashboard["templating"]["list"]) {  // in order: later ones use earlier
      if (v.value("type", "") != "query") continue;          // the datasource picker
      const std::string name = v.value("name", ""), def = v.value("definition", "");
      std::smatch m;
      if (!std::regex_match(def, m, label_values)) {
        *error += "variable " + name + ": not a label_values query: " + def + "\n";
        continue;
      }
      const std::string selector = SubstituteVariables(m[1], vars);
      QueryResult r = env_->Get("/api/v1/label/" + m[2].str() + "/values", {{"match[]", selector}});
      std::vector<std::string> values;
      if (r.ok)
        for (const auto& x : r.data) values.push_back(x.get<std::string>());
      if (values.empty()) {
        *error += "variable " + name + " (" + def + ") has no values" +
                  (r.ok ? "" : ": " + r.error) + "\n";
        vars[name] = ".*";  // keep going: the other queries still get checked
      } else {
        vars[name] = GrafanaRegexAlternation(values);
      }
    }
    return vars;
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
