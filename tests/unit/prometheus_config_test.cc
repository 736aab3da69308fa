// The bundled Prometheus files pass promtool: `check config` (scrape config and the rule files it
// loads), `check rules`, and `test rules` (each alert firing and not firing,
// config/prometheus/tests/*.yml). Skipped where promtool is not installed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>
#include <cstdlib>

#include <filesystem>
#include <set>
#include <string>

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

TEST_F(PrometheusConfig, EveryAlertHasSummaryDescriptionAndRunbook) {
  for (const auto& file : AlertRuleFiles()) {
    YAML::Node root = YAML::LoadFile(file.string());
    for (const auto& g : root["groups"])
      for (const auto& rule : g["rules"]) {
        if (!rule["alert"]) continue;
        const std::string name = rule["alert"].as<std::string>();
        for (const char* key : {"summary", "description", "runbook"})
          EXPECT_TRUE(rule["annotations"][key] &&
                      !rule["annotations"][key].as<std::string>().empty())
              << file.filename() << ": alert " << name << " has no annotation " << key;
        EXPECT_TRUE(rule["labels"]["severity"]) << name << " has no severity label";
      }
  }
}

// Every alert of the rule files appears in a unit test, firing at least once.
TEST_F(PrometheusConfig, EveryAlertIsUnitTested) {
  std::set<std::string> tested;
  for (const auto& e : fs::directory_iterator(SourceDir() / "config" / "prometheus" / "tests")) {
    if (e.path().extension() != ".yml") continue;
    YAML::Node root = YAML::LoadFile(e.path().string());
    for (const auto& t : root["tests"])
      for (const auto& a : t["alert_rule_test"])
        if (a["exp_alerts"] && a["exp_alerts"].size() > 0)
          tested.insert(a["alertname"].as<std::string>());
  }
  for (const auto& file : AlertRuleFiles()) {
    YAML::Node root = YAML::LoadFile(file.string());
    for (const auto& g : root["groups"])
      for (const auto& rule : g["rules"])
        if (rule["alert"]) {
          EXPECT_TRUE(tested.count(rule["alert"].as<std::string>()))
              << "alert " << rule["alert"].as<std::string>() << " never fires in a rule test";
        }
  }
}

}  // namespace
}  // namespace gpuattr::testing
