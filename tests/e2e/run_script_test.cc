// scripts/run.sh keeps stdout for gpuattr alone (README, Quick start): `scripts/run.sh --once
// --output json > snapshot.json` gives a JSON document, not build chatter. Run on this build
// folder, which ctest has already built, so the script rebuilds nothing (and installs nothing:
// GPUATTR_NO_INSTALL=1).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
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
using namespace std::chrono_literals;

TEST(RunScript, StdoutIsGpuattrsJsonAlone) {
  const fs::path dir = fs::temp_directory_path() / ("gpuattr-run-sh-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto scenario = LoadScenario(FixturePath("scenarios/basic"));
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  FakeApiServer server(std::move(*scenario));
  ASSERT_TRUE(server.Start().ok());
  KubeconfigOptions lab;
  lab.context = "lab";
  ASSERT_TRUE(server.WriteKubeconfig(dir / "kubeconfig", lab).ok());

  std::vector<std::string> env = EnvironmentWithout({"KUBECONFIG", "GPUATTR_BUILD_DIR"});
  env.push_back("GPUATTR_BUILD_DIR=" GPUATTR_BINARY_DIR);
  env.push_back("GPUATTR_NO_INSTALL=1");
  const Child c = SpawnChild(
      {"/bin/bash", (SourceDir() / "scripts/run.sh").string(), "--kubeconfig",
       (dir / "kubeconfig").string(), "--once", "--output", "json", "--log.level", "warn"},
      env, dir);
  ASSERT_GE(c.pid, 0);
  const int code = WaitChild(c.pid, 120s);
  const std::string out = SlurpFile(c.out), err = SlurpFile(c.err);
  server.Stop();
  ASSERT_EQ(code, 0) << err;
  EXPECT_EQ(out.find("ninja"), std::string::npos) << out;
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(out)) << "stdout is not one JSON document:\n" << out;
  EXPECT_TRUE(doc.is_object());
  // Nothing was rebuilt, so the build said nothing either.
  EXPECT_EQ(err.find("Entering directory"), std::string::npos) << err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpuattr::testing
