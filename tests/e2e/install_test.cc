// `cmake --install` of this build tree (docs/install.md): into a DESTDIR with the default prefix,
// as a package build would, and under another --prefix. The binary, the example config, the
// dashboards and their Grafana provisioning, the Prometheus config, the alert rules and their
// tests, the systemd user unit and the docs land in the usual places, nothing lands elsewhere,
// and every path written into an installed file names an installed file. Where promtool and
// systemd-analyze are installed, the installed rules pass their tests and the unit verifies.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <string>

#include "support/dashboards.h"
#include "support/paths.h"
#include "test_paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

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

std::string Lowered(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The cmake that configured this build, else the one on PATH.
std::string CMakeCommand() { return CMakeCacheEntry("CMAKE_COMMAND", "cmake"); }

class InstallTree : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = fs::temp_directory_path() / ("gpuattr-install-test-" + std::to_string(getpid()));
    fs::remove_all(scratch_);
    fs::create_directories(scratch_);
    ASSERT_TRUE(fs::exists(fs::path(GPUATTR_BINARY_DIR) / "gpuattr")) << "build gpuattr first";
  }
  void TearDown() override { fs::remove_all(scratch_); }

  // cmake --install with an optional DESTDIR; the output is returned for failure messages.
  Ran Install(const fs::path& prefix, const fs::path& destdir = {}) {
    std::string cmd;
    if (!destdir.empty()) cmd = "DESTDIR='" + destdir.string() + "' ";
    cmd += "'" + CMakeCommand() + "' --install '" + std::string(GPUATTR_BINARY_DIR) +
           "' --prefix '" + prefix.string() + "'";
    return Shell(cmd, scratch_);
  }

  fs::path scratch_;
};

std::set<std::string> FilesUnder(const fs::path& root) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    // lexically: fs::relative resolves links (bin/kubectl-gpuattr would read as bin/gpuattr).
    if (!e.is_directory()) out.insert(e.path().lexically_relative(root).string());
  return out;
}

// The mixin's files as installed (CMakeLists.txt: *.libsonnet, *.jsonnet, README.md), relative to
// mixin/.
std::set<std::string> MixinFiles() {
  std::set<std::string> out;
  const fs::path mixin = SourceDir() / "mixin";
  for (const auto& e : fs::recursive_directory_iterator(mixin)) {
    const fs::path& p = e.path();
    if (e.is_regular_file() && (p.extension() == ".libsonnet" || p.extension() == ".jsonnet" ||
                                p.filename() == "README.md"))
      out.insert(p.lexically_relative(mixin).string());
  }
  return out;
}

TEST_F(InstallTree, DestdirHoldsEverythingUnderThePrefixOnly) {
  const fs::path dest = scratch_ / "dest", root = dest / "usr" / "local";
  const Ran r = Install("/usr/local", dest);
  ASSERT_EQ(r.code, 0) << r.output;

  const auto files = FilesUnder(dest);
  for (const auto& f : files) {
    EXPECT_EQ(f.rfind("usr/local/", 0), 0u) << "installed outside the prefix: " << f;
    if (f.find("kubectl-gpuattr") != std::string::npos) continue;  // the plugin's links, below
    EXPECT_FALSE(fs::is_symlink(dest / f)) << f << " is a link (into the source tree?)";
  }

  std::set<std::string> want = {
      "bin/gpuattr",
      "bin/kubectl-gpuattr",
      "share/man/man1/gpuattr.1.gz",
      "share/man/man1/kubectl-gpuattr.1.gz",
      "share/gpuattr/gpuattr.example.yaml",
      "share/gpuattr/grafana/provisioning/datasources/gpuattr.yaml",
      "share/gpuattr/grafana/provisioning/dashboards/gpuattr.yaml",
      "share/gpuattr/prometheus/prometheus.yml",
      "share/gpuattr/prometheus/gpuattr-alerts.yml",
      "share/gpuattr/prometheus/tests/gpuattr-alerts-test.yml",
      "share/gpuattr/alertmanager/alertmanager.example.yml",
      "share/gpuattr/kubernetes/clusterrole.yaml",
      "share/systemd/user/gpuattr.service",
      "share/doc/gpuattr/LICENSE",
      "share/doc/gpuattr/README.md",
      "share/doc/gpuattr/CHANGELOG.md",
      "share/doc/gpuattr/install.md",
      "share/doc/gpuattr/alerts.md",
      "share/doc/gpuattr/dashboards.md",
  };
  for (const auto& d : DashboardFiles())
    want.insert("share/gpuattr/grafana/dashboards/" + d.filename().string());
  for (const auto& m : MixinFiles()) want.insert("share/gpuattr/mixin/" + m);
  for (const auto& f : want) EXPECT_TRUE(files.count("usr/local/" + f)) << "not installed: " << f;
  EXPECT_EQ(files.size(), want.size()) << "installed files: " << ::testing::PrintToString(files);

  // kubectl gpuattr: a relative link beside the binary (it survives a moved prefix).
  ASSERT_TRUE(fs::is_symlink(root / "bin/kubectl-gpuattr"));
  EXPECT_EQ(fs::read_symlink(root / "bin/kubectl-gpuattr"), fs::path("gpuattr"));

  struct stat st {};
  ASSERT_EQ(stat((root / "bin" / "gpuattr").c_str(), &st), 0);
  EXPECT_TRUE(st.st_mode & S_IXUSR) << "bin/gpuattr is not executable";
  // The dashboards as committed (their data source is a variable: no edit on the way).
  for (const auto& d : DashboardFiles())
    EXPECT_EQ(ReadFile(root / "share/gpuattr/grafana/dashboards" / d.filename()), ReadFile(d))
        << d.filename();
  EXPECT_EQ(ReadFile(root / "share/doc/gpuattr/LICENSE"), ReadFile(SourceDir() / "LICENSE"));
  for (const auto& m : MixinFiles())
    EXPECT_EQ(ReadFile(root / "share/gpuattr/mixin" / m), ReadFile(SourceDir() / "mixin" / m)) << m;
  ASSERT_TRUE(MixinFiles().count("mixin.libsonnet"));
  // The installed mixin builds where it lies: its dashboards import the installed dashboards.
  if (!fs::exists("/usr/bin/jsonnet")) {
    std::cout << "not built: /usr/bin/jsonnet is not installed (apt-get install jsonnet)\n";
    return;
  }
  const Ran built = Shell("/usr/bin/jsonnet -J '" + (root / "share").string() +
                              "' -e \"std.length(std.objectFields((import "
                              "'gpuattr/mixin/mixin.libsonnet').grafanaDashboards))\"",
                          scratch_);
  ASSERT_EQ(built.code, 0) << built.output;
  EXPECT_EQ(built.output, std::to_string(DashboardFiles().size()) + "\n");

  // The default prefix: the installed files name /usr/local, never the DESTDIR.
  const std::string unit = ReadFile(root / "share/systemd/user/gpuattr.service");
  EXPECT_THAT(unit, HasSubstr("\nExecStart=/usr/local/bin/gpuattr $GPUATTR_ARGS\n"));
  EXPECT_THAT(ReadFile(root / "share/gpuattr/grafana/provisioning/dashboards/gpuattr.yaml"),
              HasSubstr("path: /usr/local/share/gpuattr/grafana/dashboards\n"));
  for (const auto& f : files)
    EXPECT_EQ(ReadFile(dest / f).find(dest.string()), std::string::npos) << f << " names DESTDIR";
}

// Under another prefix, the unit, the provisioning and the alert rules name that prefix's files,
// and those files exist.
TEST_F(InstallTree, PrefixInstallNamesItsOwnFiles) {
  const fs::path prefix = scratch_ / "prefix";
  const Ran r = Install(prefix);
  ASSERT_EQ(r.code, 0) << r.output;

  const std::string unit = ReadFile(prefix / "share/systemd/user/gpuattr.service");
  EXPECT_THAT(unit, HasSubstr("\nExecStart=" + (prefix / "bin/gpuattr").string() + " "));
  EXPECT_THAT(unit, HasSubstr("\nDocumentation=file://" +
                              (prefix / "share/doc/gpuattr/install.md").string() + "\n"));
  // (Its PATH keeps /usr/local/bin: plugins live there whatever gpuattr's prefix.)
  for (const char* default_path :
       {"/usr/local/bin/gpuattr", "/usr/local/share/gpuattr", "/usr/local/share/doc/gpuattr"})
    EXPECT_EQ(unit.find(default_path), std::string::npos) << default_path << " in\n" << unit;

  const std::string provider =
      ReadFile(prefix / "share/gpuattr/grafana/provisioning/dashboards/gpuattr.yaml");
  const fs::path dashboards = prefix / "share/gpuattr/grafana/dashboards";
  EXPECT_THAT(provider, HasSubstr("path: " + dashboards.string() + "\n"));
  EXPECT_EQ(FilesUnder(dashboards).size(), DashboardFiles().size());

  // runbook_url stays the repository's https page (usable from Alertmanager, chat and pagers);
  // its sections are in the installed docs/alerts.md too.
  const std::string rules = ReadFile(prefix / "share/gpuattr/prometheus/gpuattr-alerts.yml");
  const std::string docs = ReadFile(prefix / "share/doc/gpuattr/alerts.md");
  const std::regex url(
      R"re(runbook_url: ["']https://github\.com/gpuattr/gpuattr/blob/main/docs/alerts\.md#([a-z]+)["'])re");
  size_t urls = 0;
  for (auto it = std::sregex_iterator(rules.begin(), rules.end(), url);
       it != std::sregex_iterator(); ++it, ++urls) {
    std::string section = (*it)[1].str();
    EXPECT_NE(Lowered(docs).find("\n### " + section + "\n"), std::string::npos) << section;
  }
  EXPECT_GE(urls, 14u) << "runbook_url of every alert";
  EXPECT_EQ(rules.find("/usr/local/"), std::string::npos);

  const Ran version = Shell("'" + (prefix / "bin/gpuattr").string() + "' --version", scratch_);
  EXPECT_EQ(version.code, 0) << version.output;
}

TEST_F(InstallTree, InstalledPrometheusFilesPassPromtool) {
  if (!fs::exists("/usr/bin/promtool")) GTEST_SKIP() << "/usr/bin/promtool is not installed";
  const fs::path prefix = scratch_ / "prefix";
  ASSERT_EQ(Install(prefix).code, 0);
  const fs::path dir = prefix / "share/gpuattr/prometheus";
  const Ran config =
      Shell("cd '" + dir.string() + "' && promtool check config prometheus.yml", scratch_);
  EXPECT_EQ(config.code, 0) << config.output;
  const Ran tests = Shell(
      "cd '" + dir.string() + "' && promtool test rules tests/gpuattr-alerts-test.yml", scratch_);
  EXPECT_EQ(tests.code, 0) << tests.output;
  EXPECT_THAT(tests.output, HasSubstr("SUCCESS"));
}

// systemd-analyze verify prints a line for every unknown key or bad value (and exits 0 anyway):
// a clean unit prints nothing. Checked as a user unit and as a plain unit file.
TEST_F(InstallTree, InstalledSystemdUserUnitVerifies) {
  if (!fs::exists("/usr/bin/systemd-analyze")) GTEST_SKIP() << "no systemd-analyze";
  const fs::path prefix = scratch_ / "prefix";
  ASSERT_EQ(Install(prefix).code, 0);
  const fs::path unit = prefix / "share/systemd/user/gpuattr.service";
  const fs::path runtime = scratch_ / "runtime";
  fs::create_directories(runtime);
  fs::permissions(runtime, fs::perms::owner_all);
  for (const std::string mode : {"--user ", ""}) {
    const Ran r = Shell("XDG_RUNTIME_DIR='" + runtime.string() + "' systemd-analyze " + mode +
                            "verify '" + unit.string() + "'",
                        scratch_);
    EXPECT_EQ(r.code, 0) << mode << r.output;
    EXPECT_EQ(r.output, "") << mode;
  }
}

}  // namespace
}  // namespace gpuattr::testing
