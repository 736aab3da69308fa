// The bundled Prometheus files pass promtool: `check config` (scrape config and the rule files it
// loads), `check rules`, and `test rules` (each alert firing and not firing,
// config/prometheus/tests/*.yml); skipped where promtool is not installed. And the alert rules
// keep their contract (docs/alerts.md): static summaries, runbooks with their URL, no identity
// built on free text, the scrape job of the bundled config, every alert tested both ways; the
// example Alertmanager config passes amtool.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "support/dashboards.h"
#include "support/paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
constexpr const char* kPromtool = "/usr/bin/promtool";

struct Ran {
  int code = -1;
  std::string output;
};

// Runs promtool in config/prometheus (rule paths in the files are relative to it).
Ran Promtool(const std::string& args) {
  const fs::path out =
      fs::temp_directory_path() / ("gpuattr-promtool-" + std::to_string(getpid()) + ".txt");
  const std::string cmd = "cd '" + (SourceDir() / "config" / "prometheus").string() +
                          "' && timeout 120 " + kPromtool + " " + args + " >'" + out.string() +
                          "' 2>&1";
  int status = std::system(cmd.c_str());
  Ran r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.output = ReadFile(out);
  fs::remove(out);
  return r;
}

class PrometheusConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kPromtool)) GTEST_SKIP() << kPromtool << " is not installed";
  }
};

TEST_F(PrometheusConfig, CheckConfigPasses) {
  Ran r = Promtool("check config prometheus.yml");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr("SUCCESS"));
}

TEST_F(PrometheusConfig, CheckRulesPasses) {
  ASSERT_FALSE(AlertRuleFiles().empty());
  for (const auto& file : AlertRuleFiles()) {
    Ran r = Promtool("check rules " + file.filename().string());
    EXPECT_EQ(r.code, 0) << file << "\n" << r.output;
  }
}

TEST_F(PrometheusConfig, RuleUnitTestsPass) {
  const fs::path dir = SourceDir() / "config" / "prometheus" / "tests";
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".yml") continue;
    ++n;
    Ran r = Promtool("test rules tests/" + e.path().filename().string());
    EXPECT_EQ(r.code, 0) << e.path() << "\n" << r.output;
    EXPECT_THAT(r.output, ::testing::HasSubstr("SUCCESS"));
  }
  EXPECT_GT(n, 0u) << "no rule unit tests in " << dir;
}

struct Rule {
  std::string file, group, name;  // name: the alert's name ("" for a recording rule)
  YAML::Node node;
};

std::vector<Rule> AllRules() {
  std::vector<Rule> out;
  for (const auto& file : AlertRuleFiles()) {
    YAML::Node root = YAML::LoadFile(file.string());
    for (const auto& g : root["groups"])
      for (const auto& rule : g["rules"])
        out.push_back({file.filename().string(), g["name"].as<std::string>(),
                       rule["alert"] ? rule["alert"].as<std::string>() : "", rule});
  }
  return out;
}

std::vector<Rule> Alerts() {
  std::vector<Rule> out;
  for (auto& r : AllRules())
    if (!r.name.empty()) out.push_back(std::move(r));
  return out;
}

std::string Annotation(const Rule& r, const char* key) {
  return r.node["annotations"][key] ? r.node["annotations"][key].as<std::string>() : "";
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The one base of every runbook_url: the repository's docs/alerts.md over https, usable from
// Alertmanager, chat and pagers (docs/alerts.md#parameters; RUNBOOK_URL_BASE of
// scripts/gen-prometheusrule.py, which retargets it).
constexpr std::string_view kRunbookBase =
    "https://github.com/gpuattr/gpuattr/blob/main/docs/alerts.md#";

// These tests read files only: they run without promtool.
TEST(AlertRules, EveryAlertHasSeveritySummaryDescriptionRunbookAndUrl) {
  const auto alerts = Alerts();
  ASSERT_GE(alerts.size(), 14u);
  for (const auto& r : alerts) {
    for (const char* key : {"summary", "description", "runbook", "runbook_url"})
      EXPECT_FALSE(Annotation(r, key).empty())
          << r.file << ": alert " << r.name << " has no annotation " << key;
    EXPECT_TRUE(r.node["labels"]["severity"]) << r.name << " has no severity label";
  }
}

// A summary names the kind of problem; numbers and names go to the description (a templated
// summary defeats grouping and deduplication in Alertmanager and chat tools).
TEST(AlertRules, SummariesAreStatic) {
  for (const auto& r : Alerts()) {
    const std::string summary = Annotation(r, "summary");
    EXPECT_EQ(summary.find("{{"), std::string::npos)
        << r.name << ": templated summary: " << summary;
    EXPECT_EQ(summary.find('$'), std::string::npos) << r.name << ": templated summary: " << summary;
  }
}

// runbook_url points at the alert's own section of docs/alerts.md.
TEST(AlertRules, RunbookUrlsPointAtTheirSectionOfTheDocs) {
  const std::string docs = ReadFile(SourceDir() / "docs" / "alerts.md");
  for (const auto& r : Alerts()) {
    EXPECT_EQ(Annotation(r, "runbook_url"), std::string(kRunbookBase) + Lower(r.name)) << r.name;
    EXPECT_NE(docs.find("\n### " + r.name + "\n"), std::string::npos)
        << "docs/alerts.md has no section \"### " << r.name << "\"";
  }
}

// GpuattrDown and its absent() variant watch the scrape job of the bundled prometheus.yml (a
// documented parameter), which is also the Service name a ServiceMonitor makes the job.
TEST(AlertRules, GpuattrDownWatchesTheBundledScrapeJob) {
  YAML::Node config =
      YAML::LoadFile((SourceDir() / "config" / "prometheus" / "prometheus.yml").string());
  ASSERT_EQ(config["scrape_configs"].size(), 1u);
  const std::string job = config["scrape_configs"][0]["job_name"].as<std::string>();
  std::map<std::string, std::string> want = {
      {"GpuattrDown", "up{job=\"" + job + "\"} == 0"},
      {"GpuattrTargetMissing", "absent(up{job=\"" + job + "\"})"}};
  for (const auto& r : Alerts()) {
    auto it = want.find(r.name);
    if (it == want.end()) continue;
    EXPECT_NE(r.node["expr"].as<std::string>().find(it->second), std::string::npos)
        << r.name << " does not watch the scrape job \"" << job << "\" of prometheus.yml";
    want.erase(it);
  }
  EXPECT_TRUE(want.empty()) << want.begin()->first << " is missing";
}

// kube-prometheus-stack routes its InfoInhibitor to nowhere and lets it mute every severity=info
// alert whose `namespace` (missing = empty) has no warning or critical alert firing: an info
// alert about a workload namespace would never be delivered on its own
// (docs/alerts.md#severities-and-kube-prometheus-stack). gpuattr ships none.
TEST(AlertRules, NoAlertIsLeftToTheInfoInhibitor) {
  for (const auto& r : Alerts()) {
    const std::string severity = r.node["labels"]["severity"].as<std::string>();
    EXPECT_TRUE(severity == "warning" || severity == "critical") << r.name << ": " << severity;
  }
}

// The hint's message and a health issue's detail are display text that changes: no alert's
// identity may depend on them (they are aggregated away) and no annotation templates them as
// labels of the alert.
TEST(AlertRules, NoAlertDependsOnFreeTextLabels) {
  const std::map<std::string, std::string> free_text = {{"gpuattr_pending_pod_hint", "message"},
                                                        {"gpuattr_device_health_issue", "detail"}};
  const std::regex by(R"(\bby\s*\(([^)]*)\))");
  for (const auto& r : Alerts()) {
    const std::string expr = r.node["expr"].as<std::string>();
    for (const auto& [family, label] : free_text) {
      if (!GpuattrMetricNames(expr).count(family)) continue;
      std::smatch m;
      ASSERT_TRUE(std::regex_search(expr, m, by))
          << r.name << ": " << family << " is not aggregated, so " << label << " is in the alert";
      EXPECT_EQ(m[1].str().find(label), std::string::npos) << r.name << " keeps " << label;
    }
    for (const auto& a : r.node["annotations"])
      for (const char* label : {"$labels.message", "$labels.detail"})
        EXPECT_EQ(a.second.as<std::string>().find(label), std::string::npos)
            << r.name << " annotation " << a.first.as<std::string>() << " uses " << label;
  }
}

// Alerts about gpuattr itself (a workstation daemon: a sleeping laptop, a VPN that dropped) are
// never critical.
TEST(AlertRules, SelfAlertsPageNobody) {
  size_t self = 0;
  for (const auto& r : Alerts()) {
    if (r.group != "gpuattr-self") continue;
    ++self;
    EXPECT_NE(r.node["labels"]["severity"].as<std::string>(), "critical") << r.name;
  }
  EXPECT_GE(self, 4u);
}

TEST(AlertRules, StaleIsRelativeToTheConfiguredInterval) {
  size_t found = 0;
  for (const auto& r : Alerts()) {
    if (r.name != "GpuattrStale") continue;
    ++found;
    EXPECT_TRUE(GpuattrMetricNames(r.node["expr"].as<std::string>())
                    .count("gpuattr_cycle_interval_seconds"));
  }
  EXPECT_EQ(found, 1u);
}

// Every alert of the rule files appears in a unit test at least once firing and at least once
// expected silent (held back by its threshold or its `for`).
TEST(AlertRules, EveryAlertIsUnitTestedFiringAndNotFiring) {
  std::set<std::string> firing, silent;
  for (const auto& e : fs::directory_iterator(SourceDir() / "config" / "prometheus" / "tests")) {
    if (e.path().extension() != ".yml") continue;
    YAML::Node root = YAML::LoadFile(e.path().string());
    for (const auto& t : root["tests"])
      for (const auto& a : t["alert_rule_test"]) {
        const std::string name = a["alertname"].as<std::string>();
        (a["exp_alerts"] && a["exp_alerts"].size() > 0 ? firing : silent).insert(name);
      }
  }
  for (const auto& r : Alerts()) {
    EXPECT_TRUE(firing.count(r.name)) << "alert " << r.name << " never fires in a rule test";
    EXPECT_TRUE(silent.count(r.name)) << "alert " << r.name << " is never expected silent";
  }
}

// The example Alertmanager config: its inhibit rule names alerts that exist, docs/alerts.md shows
// it as it is, and amtool accepts it (where Debian's prometheus-alertmanager is installed).
TEST(AlertmanagerExample, InhibitRuleNamesExistingAlertsAndIsDocumented) {
  const fs::path file = SourceDir() / "config" / "alertmanager" / "alertmanager.example.yml";
  YAML::Node config = YAML::LoadFile(file.string());
  std::set<std::string> names;
  for (const auto& r : Alerts()) names.insert(r.name);
  ASSERT_GE(config["inhibit_rules"].size(), 1u);
  const std::regex alert_name(R"(Gpuattr[A-Za-z]+)");
  for (const auto& rule : config["inhibit_rules"]) {
    for (const char* side : {"source_matchers", "target_matchers"})
      for (const auto& m : rule[side]) {
        const std::string matcher = m.as<std::string>();
        for (auto it = std::sregex_iterator(matcher.begin(), matcher.end(), alert_name);
             it != std::sregex_iterator(); ++it)
          EXPECT_TRUE(names.count(it->str())) << "inhibit rule names unknown alert " << it->str();
      }
    EXPECT_EQ(rule["equal"][0].as<std::string>(), "cluster");
  }
  const std::string text = ReadFile(file);
  const std::string docs = ReadFile(SourceDir() / "docs" / "alerts.md");
  const size_t at = text.find("inhibit_rules:");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(docs.find(text.substr(at)), std::string::npos)
      << "docs/alerts.md does not show the inhibit rules of " << file.filename() << " as they are";
}

TEST(AlertmanagerExample, AmtoolAcceptsIt) {
  constexpr const char* kAmtool = "/usr/bin/amtool";
  if (!fs::exists(kAmtool))
    GTEST_SKIP() << kAmtool << " is not installed (prometheus-alertmanager)";
  const fs::path file = SourceDir() / "config" / "alertmanager" / "alertmanager.example.yml";
  const std::string cmd =
      std::string(kAmtool) + " check-config '" + file.string() + "' >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cmd;
}

}  // namespace
}  // namespace gpuattr::testing
