// The packages of `cmake --build build --target package` (docs/install.md): cpack of this build
// tree into a scratch folder, the .deb extracted with dpkg-deb -x and its binary run from there
// (--version, and --once against the fake apiserver), its Depends from dpkg-shlibdeps, the
// tarball's layout, and lintian (where installed) with no error or warning left unexplained.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gpuattr/build_info.h"
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

struct Ran {
  int code = -1;
  std::string output;  // stdout and stderr
};

Ran Shell(const std::string& cmd, const fs::path& scratch) {
  const fs::path out = scratch / "command-output.txt";
  const int status = std::system(("(" + cmd + ") >'" + out.string() + "' 2>&1").c_str());
  Ran r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.output = fs::exists(out) ? ReadFile(out) : "";
  fs::remove(out);
  return r;
}

// The cpack next to the cmake that configured this build, else cpack on PATH.
std::string CPackCommand() { return CMakeCacheEntry("CMAKE_CPACK_COMMAND", "cpack"); }

// One cpack run for every test of the suite (stripping and dpkg-shlibdeps take seconds).
class Package : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = fs::temp_directory_path() / ("gpuattr-package-test-" + std::to_string(getpid()));
    fs::remove_all(scratch_);
    fs::create_directories(scratch_);
    if (!fs::exists("/usr/bin/dpkg-deb")) return;
    cpack_ = Shell("cd '" + scratch_.string() + "' && '" + CPackCommand() + "' --config '" +
                       GPUATTR_BINARY_DIR "/CPackConfig.cmake' -B '" + scratch_.string() + "/out'",
                   scratch_);
    if (!fs::is_directory(scratch_ / "out")) return;
    for (const auto& e : fs::directory_iterator(scratch_ / "out")) {
      const std::string name = e.path().filename().string();
      if (name.ends_with(".deb")) deb_ = e.path();
      if (name.ends_with(".tar.gz")) tarball_ = e.path();
    }
  }
  static void TearDownTestSuite() { fs::remove_all(scratch_); }
  void SetUp() override {
    if (!fs::exists("/usr/bin/dpkg-deb")) GTEST_SKIP() << "no dpkg-deb (not a Debian system)";
    ASSERT_EQ(cpack_.code, 0) << cpack_.output;
    ASSERT_FALSE(deb_.empty()) << cpack_.output;
    ASSERT_FALSE(tarball_.empty()) << cpack_.output;
  }

  static fs::path scratch_, deb_, tarball_;
  static Ran cpack_;
};
fs::path Package::scratch_, Package::deb_, Package::tarball_;
Ran Package::cpack_;

TEST_F(Package, NamesCarryTheVersion) {
  const std::string version = build::kPackageVersion;
  EXPECT_EQ(deb_.filename().string().rfind("gpuattr_" + version + "_", 0), 0u) << deb_;
  EXPECT_EQ(tarball_.filename().string().rfind("gpuattr-" + version + "-linux-", 0), 0u)
      << tarball_;
  const Ran fields = Shell("dpkg-deb -f '" + deb_.string() + "' Version Depends", scratch_);
  ASSERT_EQ(fields.code, 0) << fields.output;
  EXPECT_THAT(fields.output, HasSubstr("Version: " + version + "\n"));
  // From dpkg-shlibdeps: the libraries the binary loads, with versions.
  for (const char* lib : {"libssl3", "libyaml-cpp0.7", "libboost-program-options1.74.0", "libc6"})
    EXPECT_THAT(fields.output, HasSubstr(lib)) << fields.output;
}

TEST_F(Package, ExtractedDebRunsAgainstTheFakeApiserver) {
  const fs::path root = scratch_ / "root";
  const Ran x = Shell("dpkg-deb -x '" + deb_.string() + "' '" + root.string() + "'", scratch_);
  ASSERT_EQ(x.code, 0) << x.output;
  for (const char* f :
       {"usr/bin/gpuattr", "usr/bin/kubectl-gpuattr", "usr/share/man/man1/gpuattr.1.gz",
        "usr/share/gpuattr/gpuattr.example.yaml", "usr/share/systemd/user/gpuattr.service",
        "usr/share/gpuattr/prometheus/gpuattr-alerts.yml", "usr/share/doc/gpuattr/copyright",
        "usr/share/doc/gpuattr/changelog.gz", "usr/share/gpuattr/mixin/mixin.libsonnet",
        "usr/share/gpuattr/mixin/config.libsonnet",
        "usr/share/gpuattr/mixin/alerts/alerts.libsonnet",
        "usr/share/gpuattr/mixin/rules/rules.libsonnet",
        "usr/share/gpuattr/mixin/dashboards/dashboards.libsonnet"})
    EXPECT_TRUE(fs::exists(root / f)) << f;
  EXPECT_FALSE(fs::exists(root / "usr/share/doc/gpuattr/LICENSE")) << "copyright stands for it";
  EXPECT_THAT(ReadFile(root / "usr/share/systemd/user/gpuattr.service"),
              HasSubstr("\nExecStart=/usr/bin/gpuattr $GPUATTR_ARGS\n"));

  const std::string bin = (root / "usr/bin/gpuattr").string();
  const Ran version = Shell("'" + bin + "' --version", scratch_);
  EXPECT_EQ(version.code, 0) << version.output;
  EXPECT_EQ(version.output.rfind(std::string("gpuattr ") + build::kPackageVersion + " (", 0), 0u)
      << version.output;

  auto scenario = LoadScenario(FixturePath("scenarios/basic"));
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  FakeApiServer server(std::move(*scenario));
  ASSERT_TRUE(server.Start().ok());
  KubeconfigOptions lab;
  lab.context = "lab";
  ASSERT_TRUE(server.WriteKubeconfig(scratch_ / "kubeconfig", lab).ok());
  const fs::path run = scratch_ / "run";
  fs::create_directories(run);
  const Child c = SpawnChild(
      {bin, "--kubeconfig", (scratch_ / "kubeconfig").string(), "--once", "--log.level", "warn"},
      EnvironmentWithout({"KUBECONFIG"}), run);
  ASSERT_GE(c.pid, 0);
  const int code = WaitChild(c.pid, 60s);
  server.Stop();
  EXPECT_EQ(code, 0) << SlurpFile(c.err);
  EXPECT_THAT(SlurpFile(c.out), HasSubstr("gpuattr_cluster_up{cluster=\"lab\"} 1\n"));
}

TEST_F(Package, TarballHoldsTheUsrLocalTree) {
  const Ran list = Shell("tar -tzf '" + tarball_.string() + "'", scratch_);
  ASSERT_EQ(list.code, 0) << list.output;
  for (const char* f :
       {"usr/local/bin/gpuattr", "usr/local/bin/kubectl-gpuattr",
        "usr/local/share/man/man1/gpuattr.1.gz", "usr/local/share/doc/gpuattr/LICENSE",
        "usr/local/share/systemd/user/gpuattr.service"})
    EXPECT_THAT(list.output, HasSubstr(std::string(f) + "\n")) << f;
  EXPECT_EQ(list.output.find("doc/gpuattr/changelog.gz"), std::string::npos);
}

// lintian's errors and warnings, after config/debian/lintian-overrides (each override explained).
TEST_F(Package, LintianFindsNoErrorOrWarning) {
  if (!fs::exists("/usr/bin/lintian")) GTEST_SKIP() << "no lintian (scripts/install-deps.sh test)";
  const Ran lint = Shell("lintian --no-tag-display-limit '" + deb_.string() + "'", scratch_);
  std::string bad;
  std::istringstream lines(lint.output);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("E: ", 0) == 0 || line.rfind("W: ", 0) == 0) bad += line + "\n";
  EXPECT_EQ(bad, "") << lint.output;
}

}  // namespace
}  // namespace gpuattr::testing
