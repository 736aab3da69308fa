// docs/kube-prometheus-stack.md as a platform engineer would follow it, offline: every block marked
// <!-- file: PATH --> is written to PATH in a scratch "platform" folder where gpuattr/ is this
// checkout, every block marked <!-- run --> runs there (bash -e), and what the commands made is
// checked: the shipped kustomization's ServiceMonitor, PrometheusRule (release label, the shipped
// groups) and dashboard ConfigMaps; the mixin overlay's objects retargeted to its job, runbook base
// and threshold. Skipped without kubectl >= 1.21 (kustomize components), promtool or jsonnet.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "support/paths.h"
#include "support/subprocess.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;

struct Block {
  std::string file;  // empty: a command block
  std::string text;
};

std::vector<Block> Blocks(const std::string& doc) {
  static const std::regex re(R"(<!-- (file: (\S+)|run) -->\n```\w*\n([\s\S]*?)```)");
  std::vector<Block> out;
  for (std::sregex_iterator it(doc.begin(), doc.end(), re), end; it != end; ++it)
    out.push_back({(*it)[2].str(), (*it)[3].str()});
  return out;
}

int RunShell(const std::string& cmd) {
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::map<std::string, std::vector<YAML::Node>> ByKind(const fs::path& file) {
  std::map<std::string, std::vector<YAML::Node>> out;
  for (const YAML::Node& doc : YAML::LoadAllFromFile(file.string()))
    if (doc["kind"]) out[doc["kind"].as<std::string>()].push_back(doc);
  return out;
}

std::string Label(const YAML::Node& object, const std::string& key) {
  const YAML::Node v = object["metadata"]["labels"][key];
  return v ? v.as<std::string>() : "";
}

class KubePrometheusStackDoc : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunShell("kubectl kustomize --help >/dev/null 2>&1") != 0 ||
        RunShell("kubectl version --client 2>/dev/null | grep -Eq 'v1\\.(2[1-9]|[3-9][0-9])'") != 0)
      GTEST_SKIP() << "kubectl >= 1.21 is not installed (kustomize components)";
    for (const char* tool : {"/usr/bin/promtool", "/usr/bin/jsonnet"})
      if (!fs::exists(tool)) GTEST_SKIP() << tool << " is not installed";
    char tmpl[] = "/tmp/gpuattr-kps-doc-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directory_symlink(SourceDir(), dir_ / "gpuattr");
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_F(KubePrometheusStackDoc, EveryFileAndCommandWorks) {
  const std::vector<Block> blocks =
      Blocks(ReadFile(SourceDir() / "docs" / "kube-prometheus-stack.md"));
  int files = 0, runs = 0;
  std::string last_output;
  for (const Block& b : blocks) {
    if (!b.file.empty()) {
      ++files;
      fs::create_directories((dir_ / b.file).parent_path());
      std::ofstream(dir_ / b.file) << b.text;
      continue;
    }
    const fs::path script = dir_ / ("run-" + std::to_string(++runs) + ".sh");
    std::ofstream(script) << b.text;
    const fs::path log = dir_ / ("run-" + std::to_string(runs) + ".log");
    const int code = RunShell("cd '" + dir_.string() + "' && bash -e '" + script.string() + "' >'" +
                              log.string() + "' 2>&1");
    last_output = SlurpFile(log);
    ASSERT_EQ(code, 0) << b.text << "\n" << last_output;
  }
  EXPECT_EQ(files, 3);
  EXPECT_EQ(runs, 3);
  // The last block prints the alerts retargeted to job="x".
  EXPECT_NE(last_output.find(R"(job=\"x\")"), std::string::npos) << last_output;

  // 1. As shipped.
  auto shipped = ByKind(dir_ / "monitoring.yaml");
  ASSERT_EQ(shipped["ServiceMonitor"].size(), 1u);
  ASSERT_EQ(shipped["PrometheusRule"].size(), 1u);
  EXPECT_EQ(Label(shipped["ServiceMonitor"][0], "release"), "kube-prometheus-stack");
  EXPECT_EQ(Label(shipped["PrometheusRule"][0], "release"), "kube-prometheus-stack");
  const YAML::Node alerts =
      YAML::LoadFile((SourceDir() / "config" / "prometheus" / "gpuattr-alerts.yml").string());
  // The same rules (deploy_manifests_test.cc compares them whole).
  auto names = [](const YAML::Node& groups) {
    std::vector<std::string> out;
    for (const auto& g : groups)
      for (const auto& r : g["rules"])
        out.push_back((r["alert"] ? r["alert"] : r["record"]).as<std::string>());
    return out;
  };
  EXPECT_EQ(names(shipped["PrometheusRule"][0]["spec"]["groups"]), names(alerts["groups"]));
  EXPECT_EQ(names(alerts["groups"]).size(), 20u);
  EXPECT_EQ(shipped["Service"].at(0)["metadata"]["name"].as<std::string>(), "gpuattr");
  ASSERT_EQ(shipped["ConfigMap"].size(), 9u);
  for (const YAML::Node& cm : shipped["ConfigMap"]) EXPECT_EQ(Label(cm, "grafana_dashboard"), "1");

  // 2. The mixin with overrides.
  auto prod = ByKind(dir_ / "monitoring-prod.yaml");
  ASSERT_EQ(prod["Service"].size(), 1u);
  EXPECT_EQ(prod["Service"][0]["metadata"]["name"].as<std::string>(), "prod-gpuattr")
      << "the job the override selects";
  ASSERT_EQ(prod["ServiceMonitor"].size(), 1u);
  EXPECT_EQ(Label(prod["ServiceMonitor"][0], "release"), "kube-prometheus-stack");
  ASSERT_EQ(prod["PrometheusRule"].size(), 1u);
  const YAML::Node rule = prod["PrometheusRule"][0];
  EXPECT_EQ(Label(rule, "release"), "kube-prometheus-stack");
  int rules = 0;
  for (const auto& group : rule["spec"]["groups"])
    for (const auto& r : group["rules"]) {
      ++rules;
      const std::string expr = r["expr"].as<std::string>();
      EXPECT_NE(expr.find(R"(job="prod-gpuattr")"), std::string::npos) << expr;
      EXPECT_EQ(expr.find(R"(job="gpuattr")"), std::string::npos) << expr;
      if (!r["alert"]) continue;
      EXPECT_EQ(r["annotations"]["runbook_url"].as<std::string>().rfind(
                    "https://wiki.example.com/runbooks/gpuattr#", 0),
                0u);
      if (r["alert"].as<std::string>() == "GpuattrNamespaceIdleVram") {
        EXPECT_NE(expr.find(">= 16 * 1073741824"), std::string::npos) << expr;
      }
    }
  EXPECT_EQ(rules, 20);
  ASSERT_EQ(prod["ConfigMap"].size(), 9u);
  for (const YAML::Node& cm : prod["ConfigMap"]) {
    const std::string name = cm["metadata"]["name"].as<std::string>();
    EXPECT_EQ(name.rfind("prod-gpuattr-dashboard-", 0), 0u) << name;
    EXPECT_EQ(Label(cm, "grafana_dashboard"), "1") << name;
    ASSERT_EQ(cm["data"].size(), 1u) << name;
    const auto data = cm["data"].begin();
    const nlohmann::json dashboard = nlohmann::json::parse(data->second.as<std::string>());
    EXPECT_EQ("gpuattr-" + dashboard["uid"].get<std::string>().substr(8) + ".json",
              data->first.as<std::string>());
    const std::string text = dashboard.dump();
    EXPECT_NE(text.find(R"(job=\"prod-gpuattr\")"), std::string::npos) << name;
    EXPECT_EQ(text.find(R"(job=\"gpuattr\")"), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace gpuattr::testing
