// The jsonnet mixin (mixin/, docs/kube-prometheus-stack.md#2-the-mixin-with-your-own-values) built
// with Debian's jsonnet: its alerts and rules are the shipped config/prometheus/gpuattr-alerts.yml
// byte for byte (scripts/gen-mixin.py --check), its dashboards are grafana/dashboards/*.json as
// JSON values (the C++ jsonnet sorts keys and indents by three: not the bytes), and a user's
// _config retargets every query, every runbook_url and the thresholds. Skipped where jsonnet is not
// installed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "support/dashboards.h"
#include "support/paths.h"
#include "support/subprocess.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
constexpr const char* kJsonnet = "/usr/bin/jsonnet";
constexpr const char* kPromtool = "/usr/bin/promtool";

struct Ran {
  int code = -1;
  std::string out, err;
};

fs::path TempPath(const std::string& suffix) {
  static std::atomic<int> counter{0};
  return fs::temp_directory_path() / ("gpuattr-mixin-" + std::to_string(getpid()) + "-" +
                                      std::to_string(counter.fetch_add(1)) + suffix);
}

Ran Shell(const std::string& cmd) {
  const fs::path out = TempPath(".out"), err = TempPath(".err");
  const int status =
      std::system(("(" + cmd + ") >'" + out.string() + "' 2>'" + err.string() + "'").c_str());
  Ran r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, SlurpFile(out), SlurpFile(err)};
  fs::remove(out);
  fs::remove(err);
  return r;
}

// The value of a jsonnet program that imports 'mixin.libsonnet' (found through -J mixin/).
nlohmann::json Evaluate(const std::string& code) {
  const fs::path file = TempPath(".jsonnet");
  std::ofstream(file) << code;
  const Ran r = Shell(std::string(kJsonnet) + " -J '" + (SourceDir() / "mixin").string() + "' '" +
                      file.string() + "'");
  fs::remove(file);
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

// The override of docs/kube-prometheus-stack.md#2-the-mixin-with-your-own-values, thresholds too.
constexpr const char* kOverride = R"(
(import 'mixin.libsonnet') + {
  _config+:: {
    selector: 'job="gpu-team/gpuattr"',
    runbookURLBase: 'https://runbooks.example.com/gpuattr',
    podIdleHours: 2,
    namespaceIdleVramGiB: 16,
    staleIntervals: 5,
  },
}
)";

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class Mixin : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kJsonnet))
      GTEST_SKIP() << kJsonnet << " is not installed (apt-get install jsonnet)";
  }
};

TEST_F(Mixin, ShippedRulesAreTheMixinsBuildByteForByte) {
  const Ran r = Shell("/usr/bin/python3 '" + (SourceDir() / "scripts" / "gen-mixin.py").string() +
                      "' --check");
  EXPECT_EQ(r.code, 0) << r.err << "run scripts/gen-mixin.py and commit";
}

TEST_F(Mixin, DashboardsAreTheShippedFiles) {
  const nlohmann::json built = Evaluate("(import 'mixin.libsonnet').grafanaDashboards");
  ASSERT_TRUE(built.is_object());
  const std::vector<fs::path> files = DashboardFiles();
  ASSERT_EQ(built.size(), files.size());
  for (const fs::path& file : files) {
    const std::string key = "gpuattr-" + file.filename().string();
    ASSERT_TRUE(built.contains(key)) << key;
    EXPECT_EQ(built[key], nlohmann::json::parse(ReadFile(file))) << key;
  }
}

TEST_F(Mixin, OverrideRetargetsEveryRuleAndRunbook) {
  const nlohmann::json m = Evaluate(std::string("local m = ") + kOverride +
                                    "; { alerts: m.prometheusAlerts, rules: m.prometheusRules }");
  ASSERT_TRUE(m.is_object());
  int alerts = 0, records = 0;
  for (const char* kind : {"alerts", "rules"})
    for (const auto& group : m[kind]["groups"])
      for (const auto& rule : group["rules"]) {
        const std::string expr = rule["expr"];
        EXPECT_NE(expr.find("job=\"gpu-team/gpuattr\""), std::string::npos) << expr;
        EXPECT_EQ(expr.find("job=\"gpuattr\""), std::string::npos) << expr;
        if (!rule.contains("alert")) {
          ++records;
          continue;
        }
        ++alerts;
        const std::string name = rule["alert"];
        EXPECT_EQ(rule["annotations"]["runbook_url"],
                  "https://runbooks.example.com/gpuattr#" + Lower(name));
        const std::string summary = rule["annotations"]["summary"];
        const std::string description = rule["annotations"]["description"];
        if (name == "GpuattrPodIdleVram") {
          EXPECT_NE(expr.find(">= 2 * 3600"), std::string::npos) << expr;
          EXPECT_EQ(summary, "A pod holds GPU memory and has been idle for over 2 hours");
          EXPECT_NE(description.find("at least 2 h."), std::string::npos) << description;
        }
        if (name == "GpuattrNamespaceIdleVram") {
          EXPECT_NE(expr.find(">= 16 * 1073741824"), std::string::npos) << expr;
          EXPECT_NE(summary.find("over 16 GiB"), std::string::npos) << summary;
        }
        if (name == "GpuattrStale") {
          EXPECT_NE(expr.find("clamp_min(5 * gpuattr_cycle_interval_seconds"), std::string::npos)
              << expr;
        }
      }
  EXPECT_EQ(alerts, 15);
  EXPECT_EQ(records, 5);

  // What the override makes is a valid rule file (JSON is YAML).
  if (!fs::exists(kPromtool)) return;
  const fs::path rules = TempPath(".yml");
  nlohmann::json file{{"groups", m["alerts"]["groups"]}};
  for (const auto& g : m["rules"]["groups"]) file["groups"].push_back(g);
  std::ofstream(rules) << file.dump(1);
  const Ran check = Shell(std::string(kPromtool) + " check rules '" + rules.string() + "'");
  EXPECT_EQ(check.code, 0) << check.out << check.err;
  fs::remove(rules);
}

TEST_F(Mixin, OverrideRetargetsEveryDashboardQuery) {
  const nlohmann::json built = Evaluate(std::string("(") + kOverride + ").grafanaDashboards");
  ASSERT_TRUE(built.is_object());
  int queries = 0;
  for (const auto& [key, dashboard] : built.items()) {
    std::vector<PanelQuery> all = DashboardQueries(dashboard, key);
    for (PanelQuery& v : DashboardVariableQueries(dashboard, key)) all.push_back(std::move(v));
    for (PanelQuery& a : DashboardAnnotationQueries(dashboard, key)) {
      // ALERTS carries the alerts' labels, which mostly aggregate the job away: no selector.
      if (a.expr.starts_with("ALERTS{")) continue;
      all.push_back(std::move(a));
    }
    for (const PanelQuery& q : all) {
      ++queries;
      EXPECT_NE(q.expr.find("job=\"gpu-team/gpuattr\""), std::string::npos)
          << q.Where() << ": " << q.expr;
      EXPECT_EQ(q.expr.find("job=\"gpuattr\""), std::string::npos) << q.Where() << ": " << q.expr;
    }
    // Nothing else keeps the default selector either (descriptions, links).
    EXPECT_EQ(dashboard.dump().find(R"(job=\"gpuattr\")"), std::string::npos) << key;
  }
  EXPECT_GT(queries, 200);
}

// The example of docs/alerts.md#parameters, run as written (only its paths made absolute): the
// rule file it writes has the example's selector in every expression, its runbook base in every
// runbook_url, and promtool accepts it as a rule file.
TEST_F(Mixin, AlertsDocParametersExampleRetargetsTheRules) {
  const std::string doc = ReadFile(SourceDir() / "docs" / "alerts.md");
  const size_t section = doc.find("\n## Parameters\n");
  ASSERT_NE(section, std::string::npos) << "docs/alerts.md has no Parameters section";
  const size_t next = doc.find("\n## ", section + 1);
  const size_t open = doc.find("```sh\n", section);
  ASSERT_TRUE(open != std::string::npos && open < next) << "no sh example in #parameters";
  const size_t body = open + 6, close = doc.find("```", body);
  ASSERT_NE(close, std::string::npos);
  std::string cmd = doc.substr(body, close - body);

  std::smatch selector, base;
  ASSERT_TRUE(std::regex_search(cmd, selector, std::regex(R"(selector: 'job=\\"([^\\"]+)\\"')")))
      << cmd;
  ASSERT_TRUE(std::regex_search(cmd, base, std::regex(R"(runbookURLBase: '([^']+)')"))) << cmd;
  ASSERT_NE(selector[1], "gpuattr") << "the example keeps the default: it would show nothing";
  const std::string job = selector[1], runbook_base = base[1];

  const std::string run = "jsonnet -J mixin ", into = "> gpuattr-alerts.yml";
  ASSERT_EQ(cmd.rfind(run, 0), 0u) << cmd;
  const size_t out_at = cmd.find(into);
  ASSERT_NE(out_at, std::string::npos) << cmd;
  const fs::path out = TempPath(".yml");
  cmd.replace(out_at, into.size(), "> '" + out.string() + "'");
  cmd.replace(0, run.size(),
              std::string(kJsonnet) + " -J '" + (SourceDir() / "mixin").string() + "' ");
  const Ran r = Shell(cmd);
  ASSERT_EQ(r.code, 0) << cmd << "\n" << r.err;
  const nlohmann::json rules = nlohmann::json::parse(SlurpFile(out));

  int alerts = 0, records = 0;
  for (const auto& group : rules["groups"])
    for (const auto& rule : group["rules"]) {
      const std::string expr = rule["expr"];
      EXPECT_NE(expr.find("job=\"" + job + "\""), std::string::npos) << expr;
      EXPECT_EQ(expr.find("job=\"gpuattr\""), std::string::npos) << expr;
      if (!rule.contains("alert")) {
        ++records;
        continue;
      }
      ++alerts;
      EXPECT_EQ(rule["annotations"]["runbook_url"],
                runbook_base + "#" + Lower(rule["alert"].get<std::string>()));
    }
  EXPECT_GT(alerts, 10);
  EXPECT_GT(records, 0);
  if (fs::exists(kPromtool)) {
    const Ran check = Shell(std::string(kPromtool) + " check rules '" + out.string() + "'");
    EXPECT_EQ(check.code, 0) << check.out << check.err;
  }
  fs::remove(out);
}

}  // namespace
}  // namespace gpuattr::testing
