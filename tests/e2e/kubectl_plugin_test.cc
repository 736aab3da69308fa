// kubectl gpuattr (docs/install.md#kubectl-gpuattr): a folder holding kubectl-gpuattr, a link to
// the built gpuattr, put on PATH; the real kubectl finds the plugin (`kubectl plugin list`) and
// runs it (`kubectl gpuattr -o markdown`) against the fake apiserver; -n keeps one namespace.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/fake_apiserver.h"
#include "support/paths.h"
#include "support/scenario.h"
#include "support/subprocess.h"
#include "test_paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

class KubectlPluginE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuattr-kubectl-plugin-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "bin");
    fs::create_symlink(DaemonBinary(), dir_ / "bin/kubectl-gpuattr");
    auto scenario = LoadScenario(FixturePath("scenarios/basic"));
    ASSERT_TRUE(scenario.ok()) << scenario.error().message;
    server_ = std::make_unique<FakeApiServer>(std::move(*scenario));
    ASSERT_TRUE(server_->Start().ok());
    KubeconfigOptions lab;
    lab.context = "lab";
    ASSERT_TRUE(server_->WriteKubeconfig(dir_ / "kubeconfig", lab).ok());
  }
  void TearDown() override {
    if (server_) server_->Stop();
    fs::remove_all(dir_);
  }

  // Runs args with the plugin's folder first on PATH and KUBECONFIG set to the fake apiserver's.
  std::pair<int, std::string> Launch(const std::vector<std::string>& args) {
    std::vector<std::string> env = EnvironmentWithout({"KUBECONFIG", "PATH"});
    const char* path = std::getenv("PATH");
    env.push_back("PATH=" + (dir_ / "bin").string() + ":" + (path ? path : "/usr/bin:/bin"));
    env.push_back("KUBECONFIG=" + (dir_ / "kubeconfig").string());
    const fs::path out = dir_ / ("run" + std::to_string(runs_++));
    fs::create_directories(out);
    const Child c = SpawnChild(args, env, out);
    if (c.pid < 0) return {-1, "could not start " + args[0]};
    const int code = WaitChild(c.pid, 60s);
    err_ = SlurpFile(c.err);
    return {code, SlurpFile(c.out)};
  }

  static bool HaveKubectl() { return std::system("command -v kubectl >/dev/null 2>&1") == 0; }

  fs::path dir_;
  std::unique_ptr<FakeApiServer> server_;
  int runs_ = 0;
  std::string err_;
};

TEST_F(KubectlPluginE2e, KubectlListsAndRunsIt) {
  if (!HaveKubectl()) GTEST_SKIP() << "kubectl is not installed";
  auto [code, out] = Launch({"/bin/sh", "-c", "kubectl plugin list"});
  EXPECT_EQ(code, 0) << err_;
  EXPECT_THAT(out, HasSubstr((dir_ / "bin/kubectl-gpuattr").string())) << out << err_;

  auto [mcode, md] = Launch({"/bin/sh", "-c", "kubectl gpuattr -o markdown --log.level warn"});
  ASSERT_EQ(mcode, 0) << err_;
  EXPECT_EQ(md.rfind("# GPU snapshot: lab (", 0), 0u) << md;
  EXPECT_THAT(md, HasSubstr("GPU-equivalents in use"));
}

TEST_F(KubectlPluginE2e, TableByDefaultAndOneNamespaceWithN) {
  const std::string plugin = (dir_ / "bin/kubectl-gpuattr").string();
  auto [code, table] = Launch({plugin, "--log.level", "warn"});
  ASSERT_EQ(code, 0) << err_;
  EXPECT_THAT(table, HasSubstr("Whose GPUs\n----------\n"));

  auto [jcode, all] = Launch({plugin, "-o", "json", "--log.level", "warn"});
  ASSERT_EQ(jcode, 0) << err_;
  auto [ncode, one] =
      Launch({plugin, "-n", "ml", "-ojson", "--context", "lab", "--log.level", "warn"});
  ASSERT_EQ(ncode, 0) << err_;
  const auto every = nlohmann::json::parse(all), ml = nlohmann::json::parse(one);
  ASSERT_TRUE(every.contains("namespaces")) << all.substr(0, 400);
  EXPECT_GT(every["namespaces"].size(), 1u);
  ASSERT_EQ(ml["namespaces"].size(), 1u) << one.substr(0, 400);
  for (const auto& ns : ml["namespaces"]) EXPECT_EQ(ns.value("namespace", ""), "ml");
  for (const auto& pod : ml["pods"]) EXPECT_EQ(pod.value("namespace", ""), "ml") << pod.dump();

  auto [bad, ignored] = Launch({plugin, "-n"});
  EXPECT_EQ(bad, 2);
  EXPECT_THAT(err_, HasSubstr("kubectl gpuattr: -n/--namespace needs a namespace"));
}

}  // namespace
}  // namespace gpuattr::testing
