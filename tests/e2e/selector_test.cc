// Every metric a shipped alert or recording rule (config/prometheus/*.yml) or dashboard
// (grafana/dashboards/*.json: panels, annotations, variables) selects is in what the binary
// serves on the demo (docs/dashboards.md#every-selector-is-served): the real gpuattr runs against
// the fake apiserver's demo scenario, /metrics is read after a few cycles, and a name the
// exposition lacks fails the test naming the file and the name, unless it is in the allow-list
// below with its reason.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>

#include "gpuattr/metrics/families.h"
#include "support/dashboards.h"
#include "support/fake_apiserver.h"
#include "support/paths.h"
#include "support/scenario.h"
#include "support/subprocess.h"
#include "test_paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Names a rule or dashboard may select that the demo's exposition lacks, each with its reason.
// Keep it short: an entry hides a broken panel or a rule that can never fire.
const std::map<std::string, std::string>& OptionalFamilies() {
  static const std::map<std::string, std::string> families = {
      {"up", "made by Prometheus for every scrape target (GpuattrDown, \"gpuattr itself\")"},
      {"ALERTS", "made by Prometheus for pending and firing alerts (the alert annotations)"},
      {"gpuattr_device_candidate_pod",
       "only for a device whose exporter has no pod labels; the demo's exporters have them"},
      {"gpuattr_pod_unrequested_gpu_use",
       "only for a pod on a GPU it did not request (process tier); the demo has none"},
  };
  return families;
}

// Made by Prometheus, not by gpuattr: the allow-list's other entries must be gpuattr families.
bool MadeByPrometheus(const std::string& name) { return name == "up" || name == "ALERTS"; }

// name → "file: where" of its first use.
std::map<std::string, std::string> SelectedNames() {
  std::map<std::string, std::string> used;
  for (const auto& file : DashboardFiles()) {
    auto d = LoadDashboard(file);
    EXPECT_TRUE(d.ok()) << d.error().message;
    if (!d.ok()) continue;
    const std::string name = file.filename().string();
    std::vector<PanelQuery> all = DashboardQueries(*d, name);
    for (auto more : {DashboardAnnotationQueries(*d, name), DashboardVariableQueries(*d, name)})
      all.insert(all.end(), more.begin(), more.end());
    for (const auto& q : all)
      for (const auto& n : MetricNames(q.expr)) used.emplace(n, "grafana/dashboards/" + q.Where());
  }
  for (const auto& file : AlertRuleFiles()) {
    auto exprs = RuleExpressions(file);
    EXPECT_TRUE(exprs.ok()) << exprs.error().message;
    if (!exprs.ok()) continue;
    for (const auto& e : *exprs)
      for (const auto& n : MetricNames(e))
        used.emplace(n, "config/prometheus/" + file.filename().string() + ": " + e);
  }
  return used;
}

// The metric names of an exposition's samples.
std::set<std::string> ExposedNames(const std::string& text) {
  std::set<std::string> out;
  static const std::regex sample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ])");
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    std::smatch m;
    if (!line.empty() && line[0] != '#' && std::regex_search(line, m, sample)) out.insert(m[1]);
    start = end + 1;
  }
  return out;
}

// The demo served by the daemon after its counters moved for a few cycles (rates need two).
std::string DemoExposition(const fs::path& dir) {
  auto scenario = LoadScenario(FixturePath("scenarios/demo"));
  EXPECT_TRUE(scenario.ok()) << scenario.error().message;
  if (!scenario.ok()) return "";
  FakeApiServer server(std::move(*scenario));
  EXPECT_TRUE(server.Start().ok());
  KubeconfigOptions demo;
  demo.context = "demo";
  EXPECT_TRUE(server.WriteKubeconfig(dir / "kubeconfig", demo).ok());
  Child gpuattr = SpawnChild(
      {DaemonBinary(), "--kubeconfig", (dir / "kubeconfig").string(), "--web.listen-address",
       "127.0.0.1:0", "--interval", "1s", "--state.file", (dir / "state.json").string(),
       // prices: the cost series the Chargeback dashboard selects
       "--config.file", FixturePath("configs/demo-prices.yaml").string()},
      EnvironmentWithout({"KUBECONFIG"}), dir);
  EXPECT_GT(gpuattr.pid, 0);
  const int port = WaitForServingPort(gpuattr.err);
  EXPECT_GT(port, 0) << SlurpFile(gpuattr.err);
  std::string text;
  if (port > 0) {
    httplib::Client cli("127.0.0.1", port);
    // Three cycles: a rate needs two, and the energy counters one more.
    for (int i = 0; i < 300; ++i) {
      auto r = cli.Get("/metrics");
      if (r && r->status == 200) text = r->body;
      static const std::regex third(R"(gpuattr_pod_energy_joules_total\{[^}]*\} [1-9])");
      if (i >= 30 && std::regex_search(text, third)) break;
      std::this_thread::sleep_for(100ms);
    }
  }
  if (gpuattr.pid > 0) {
    kill(gpuattr.pid, SIGTERM);
    WaitChild(gpuattr.pid, 10s);
  }
  return text;
}

TEST(Selectors, EveryRuleAndDashboardSelectorIsServedOnTheDemo) {
  const fs::path dir =
      fs::temp_directory_path() / ("gpuattr-selectors-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const auto used = SelectedNames();
  ASSERT_GT(used.size(), 40u) << "the rules and dashboards select suspiciously few metrics";
  const std::set<std::string> exposed = ExposedNames(DemoExposition(dir));
  ASSERT_GT(exposed.size(), 50u) << "the demo's exposition is suspiciously small";

  // Series the bundled recording rules make: their own selectors are checked here too.
  std::set<std::string> recorded;
  for (const auto& file : AlertRuleFiles())
    if (auto names = RecordedSeries(file); names.ok())
      recorded.insert(names->begin(), names->end());
  std::string missing;
  for (const auto& [name, where] : used)
    if (!exposed.count(name) && !OptionalFamilies().count(name) && !recorded.count(name))
      missing += "\n  " + name + " (" + where + ")";
  EXPECT_TRUE(missing.empty()) << "selected but not in gpuattr's exposition of the demo:"
                               << missing;

  // The allow-list stays current: each entry is selected somewhere, really absent from the demo,
  // and (but Prometheus' own) a family gpuattr can emit.
  std::set<std::string> table;
  for (const metrics::FamilyGroup* g : metrics::FamilyGroups())
    for (const metrics::FamilySpec& f : g->families) table.insert(std::string(f.name));
  for (const auto& [name, reason] : OptionalFamilies()) {
    EXPECT_TRUE(used.count(name)) << name << " is selected nowhere: drop it (" << reason << ")";
    EXPECT_FALSE(exposed.count(name)) << name << " is on the demo now: drop it (" << reason << ")";
    if (!MadeByPrometheus(name)) {
      EXPECT_TRUE(table.count(name)) << name << " is no family of gpuattr (" << reason << ")";
    }
  }
  std::error_code ec;
  if (!HasFailure()) fs::remove_all(dir, ec);
}

// The extractor the test relies on: metric names, not functions, keywords or label names.
TEST(Selectors, MetricNamesSkipsFunctionsKeywordsAndLabels) {
  EXPECT_EQ(MetricNames("sum by (cluster, namespace) (rate(gpuattr_x_total{pod=~\"a\"}[5m])) "
                        "/ on (cluster) group_left (node) max without (gpu) (up) > bool 0"),
            (std::set<std::string>{"gpuattr_x_total", "up"}));
  EXPECT_EQ(MetricNames("label_values(gpuattr_cluster_up{job=~\"$job\"}, cluster)"),
            (std::set<std::string>{"gpuattr_cluster_up"}));
  EXPECT_EQ(MetricNames("label_values(cluster)"), (std::set<std::string>{}));
  EXPECT_EQ(MetricNames("a unless b offset 5m and process_open_fds / ${x} * $__range_s"),
            (std::set<std::string>{"a", "b", "process_open_fds"}));
}

}  // namespace
}  // namespace gpuattr::testing
