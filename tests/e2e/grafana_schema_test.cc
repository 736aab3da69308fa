// Every bundled dashboard against Grafana's published dashboard schema: the `Dashboard` type of
// the npm package @grafana/schema (pinned in tests/grafana-schema/package-lock.json), which ships
// the schema only as TypeScript types generated from Grafana's CUE dashboard kind (no JSON schema,
// no CUE files). tests/grafana-schema/check.mjs type-checks each file with TypeScript (also
// pinned); dashboard.ts says the two spelling adjustments it makes. A broken copy of a dashboard
// must fail. The packages are installed with `npm ci` into a cache outside the repository
// ($XDG_CACHE_HOME or ~/.cache, gpuattr/grafana-schema), reused while the lock file is the same;
// the test skips when npm is missing or its registry does not answer, and fails otherwise.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/dashboards.h"
#include "support/paths.h"
#include "support/subprocess.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;

struct Ran {
  int code = -1;
  std::string out;
};

// Runs a shell command with stdout and stderr together in `log`.
Ran Shell(const std::string& cmd, const fs::path& log) {
  const int status = std::system(("(" + cmd + ") >'" + log.string() + "' 2>&1").c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, SlurpFile(log)};
}

fs::path CacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return fs::path(xdg) / "gpuattr" / "grafana-schema";
  if (const char* home = std::getenv("HOME"); home && *home)
    return fs::path(home) / ".cache" / "gpuattr" / "grafana-schema";
  return fs::temp_directory_path() / ("gpuattr-cache-" + std::to_string(getuid())) /
         "grafana-schema";
}

class GrafanaSchema : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const fs::path src = SourceDir() / "tests" / "grafana-schema";
    work_ = CacheDir();
    if (std::system("command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1") != 0) {
      skip_ = "npm or node is not installed (Debian: apt-get install npm)";
      return;
    }
    const std::string lock = ReadFile(src / "package-lock.json");
    const bool cached =
        fs::exists(work_ / "node_modules" / "@grafana" / "schema" / "package.json") &&
        SlurpFile(work_ / "package-lock.json") == lock;
    if (cached) return;
    fs::create_directories(work_);
    fs::copy_file(src / "package.json", work_ / "package.json",
                  fs::copy_options::overwrite_existing);
    fs::copy_file(src / "package-lock.json", work_ / "package-lock.json",
                  fs::copy_options::overwrite_existing);
    const Ran ci = Shell(
        "cd '" + work_.string() + "' && timeout 180 npm ci --no-audit --no-fund --ignore-scripts",
        work_ / "npm-ci.log");
    if (ci.code == 0) return;
    fs::remove(work_ / "package-lock.json");  // not a usable cache
    const Ran ping = Shell("timeout 30 npm ping", work_ / "npm-ping.log");
    if (ping.code != 0)
      skip_ =
          "the npm registry is unreachable (npm ping: " + ping.out + "); npm ci said:\n" + ci.out;
    else
      install_error_ = "npm ci failed while the registry answers:\n" + ci.out;
  }

  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(install_error_.empty()) << install_error_;
  }

  // node check.mjs over `files`: its exit code and report.
  static Ran Check(const std::vector<fs::path>& files, const std::string& name) {
    std::string cmd = "node '" + (SourceDir() / "tests" / "grafana-schema" / "check.mjs").string() +
                      "' '" + work_.string() + "'";
    for (const fs::path& f : files) cmd += " '" + f.string() + "'";
    return Shell(cmd, work_ / (name + ".log"));
  }

  static inline fs::path work_;
  static inline std::string skip_, install_error_;
};

TEST_F(GrafanaSchema, EveryDashboardValidates) {
  const std::vector<fs::path> files = DashboardFiles();
  ASSERT_EQ(files.size(), 9u);
  const Ran r = Check(files, "dashboards");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("9 dashboard(s), 0 error(s) against @grafana/schema 13.2.3"),
            std::string::npos)
      << r.out;
}

// The check can fail: a copy of the pods dashboard with four faults, each reported.
TEST_F(GrafanaSchema, ABrokenCopyFails) {
  nlohmann::json d =
      nlohmann::json::parse(ReadFile(SourceDir() / "grafana" / "dashboards" / "pods.json"));
  d["graphTooltip"] = "shared";                                // a number (DashboardCursorSync)
  d["panels"][1]["gridPosition"] = d["panels"][1]["gridPos"];  // no such panel field
  d["links"][0].erase("icon");                                 // required
  d["templating"]["list"][1]["refresh"] = "on load";           // a number (VariableRefresh)
  const fs::path dir = work_ / "broken";
  fs::create_directories(dir);
  const fs::path broken = dir / "pods-broken.json";
  std::ofstream(broken) << d.dump(2);
  const Ran r = Check({broken}, "broken");
  EXPECT_EQ(r.code, 1) << r.out;
  for (const char* fault : {"graphTooltip", "gridPosition", "icon", "refresh"})
    EXPECT_NE(r.out.find(fault), std::string::npos) << fault << " not reported:\n" << r.out;
  EXPECT_NE(r.out.find("1 dashboard(s), 4 error(s)"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gpuattr::testing
