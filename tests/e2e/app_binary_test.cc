// The built gpuattr binary: --help, --version, bad flags and config, --once, serving and SIGTERM;
// and `promtool check metrics` on the rendered exposition.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "gpuattr/build_info.h"
#include "gpuattr/metrics/families.h"
#include "support/paths.h"
#include "support/subprocess.h"
#include "test_paths.h"

namespace {
using gpuattr::testing::WriteUnreachableKubeconfig;

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

const std::string kBinary = gpuattr::testing::DaemonBinary();

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = fs::temp_directory_path() /
            ("gpuattr-bin-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
             std::to_string(++counter));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  fs::path operator/(const std::string& f) const { return path_ / f; }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

struct Process {
  pid_t pid = -1;
  fs::path out, err;
};

Process Spawn(const std::vector<std::string>& args, const TempDir& dir,
              const std::string& stdin_file = "/dev/null") {
  Process p;
  p.out = dir / "stdout";
  p.err = dir / "stderr";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, stdin_file.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, p.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, p.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // The default state file goes under the test's own folder, never the user's: two tests (or
  // this test and its POSIX build's twin) running at once would otherwise share
  // ~/.local/state/gpuattr/state.json, and the second gpuattr exits 2 on its lock.
  std::vector<std::string> env_strings = gpuattr::testing::EnvironmentWithout({"XDG_STATE_HOME"});
  env_strings.push_back("XDG_STATE_HOME=" + (dir / "state").string());
  std::vector<char*> env;
  for (auto& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);
  int rc = posix_spawn(&p.pid, argv[0], &fa, nullptr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&fa);
  EXPECT_EQ(rc, 0) << "cannot start " << args[0];
  return p;
}

// Waits (bounded) for the process; returns its exit code, or -1 (after SIGKILL) on timeout.
int Wait(pid_t pid, std::chrono::milliseconds limit = 20s) {
  auto end = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (std::chrono::steady_clock::now() < end) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(10ms);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

struct Ran {
  int code;
  std::string out, err;
};

Ran RunBinary(std::vector<std::string> args) {
  TempDir dir;
  args.insert(args.begin(), kBinary);
  Process p = Spawn(args, dir);
  int code = Wait(p.pid);
  return {code, Slurp(p.out), Slurp(p.err)};
}

TEST(AppBinary, Help) {
  Ran r = RunBinary({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("Usage:"));
  EXPECT_THAT(r.out, HasSubstr("--web.listen-address"));
  EXPECT_THAT(r.out, HasSubstr("Exit codes"));
  EXPECT_EQ(r.err, "");
}

TEST(AppBinary, Version) {
  Ran r = RunBinary({"--version"});
  EXPECT_EQ(r.code, 0);
  const std::string describe = gpuattr::build::kDescribe;
  EXPECT_EQ(r.out, std::string("gpuattr ") + gpuattr::build::kPackageVersion + " (revision " +
                       gpuattr::build::kRevision + (describe.empty() ? "" : ", git " + describe) +
                       ")\n");
}

TEST(AppBinary, BadFlagExitsTwoNamingTheFlag) {
  Ran r = RunBinary({"--bogus-flag"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--bogus-flag"));
  EXPECT_THAT(r.err, HasSubstr("see --help"));
  EXPECT_EQ(r.out, "");

  Ran v = RunBinary({"--interval", "20"});
  EXPECT_EQ(v.code, 2);
  EXPECT_THAT(v.err, HasSubstr("--interval: invalid duration \"20\": missing unit"));
}

TEST(AppBinary, BadConfigExitsTwoNamingFileAndKey) {
  TempDir dir;
  fs::path cfg = dir / "gpuattr.yaml";
  std::ofstream(cfg) << "scrape:\n  timeout: 15\n";
  Ran r = RunBinary({"--config.file", cfg.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr(cfg.string() + ": scrape.timeout: invalid duration \"15\""));
}

TEST(AppBinary, ExampleConfigIsAccepted) {
  TempDir dir;
  Ran r =
      RunBinary({"--config.file", GPUATTR_SOURCE_DIR "/config/gpuattr.example.yaml", "--once",
                 "--kubeconfig", WriteUnreachableKubeconfig(dir.path()), "--log.level", "error"});
  // Loaded fine: the outcome is about clusters now (no usage error).
  EXPECT_NE(r.code, 2) << r.err;
  EXPECT_THAT(r.out, HasSubstr("gpuattr_build_info"));
}

TEST(AppBinary, ServesAndStopsOnSigterm) {
  TempDir dir;
  Process p = Spawn({kBinary, "--kubeconfig", WriteUnreachableKubeconfig(dir.path()),
                     "--web.listen-address", "127.0.0.1:0", "--interval", "1h"},
                    dir);
  // The log line "msg=serving address=127.0.0.1:PORT" tells the OS-chosen port.
  const int port = gpuattr::testing::WaitForServingPort(p.err, 10s);
  ASSERT_GT(port, 0) << Slurp(p.err);
  httplib::Client cli("127.0.0.1", port);
  auto health = cli.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  int ready = 0;
  for (int i = 0; i < 500 && ready != 200; ++i) {  // the first cycle ends quickly
    auto r = cli.Get("/readyz");
    ready = r ? r->status : 0;
    if (ready != 200) std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(ready, 200);
  auto metrics = cli.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body, HasSubstr("gpuattr_cluster_up{cluster="));

  ASSERT_EQ(kill(p.pid, SIGTERM), 0);
  EXPECT_EQ(Wait(p.pid, 10s), 0) << Slurp(p.err);
  EXPECT_THAT(Slurp(p.err), HasSubstr("msg=\"shutting down\""));
}

// docs/design.md#process-hygiene: two daemons on one state file would overwrite each other's
// counters; the second exits 2 naming the file, and the first keeps running.
TEST(AppBinary, ASecondDaemonOnTheSameStateFileExitsTwoNamingIt) {
  TempDir dir;
  const std::string state = (dir / "state.json").string();
  const std::string kubeconfig = WriteUnreachableKubeconfig(dir.path());
  TempDir first_dir;
  Process first = Spawn({kBinary, "--kubeconfig", kubeconfig, "--web.listen-address", "127.0.0.1:0",
                         "--interval", "1h", "--state.file", state},
                        first_dir);
  bool serving = false;
  for (int i = 0; i < 1000 && !serving; ++i) {
    serving = Slurp(first.err).find("msg=serving") != std::string::npos;
    if (!serving) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(serving) << Slurp(first.err);
  Ran second = RunBinary({"--kubeconfig", kubeconfig, "--web.listen-address", "127.0.0.1:0",
                          "--interval", "1h", "--state.file", state});
  EXPECT_EQ(second.code, 2);
  EXPECT_THAT(second.err, HasSubstr("state file \"" + state + "\" is in use by another gpuattr"));
  EXPECT_THAT(second.err, HasSubstr("(pid " + std::to_string(first.pid) + ")"));
  // --once only reads the file: it may run next to the daemon.
  Ran once = RunBinary(
      {"--kubeconfig", kubeconfig, "--once", "--state.file", state, "--log.level", "error"});
  EXPECT_EQ(once.code, 1);  // no cluster answers, but not a lock conflict
  EXPECT_THAT(once.err, Not(HasSubstr("in use by another gpuattr")));
  ASSERT_EQ(kill(first.pid, SIGTERM), 0);
  EXPECT_EQ(Wait(first.pid, 10s), 0) << Slurp(first.err);
}

TEST(AppBinary, OnceWithoutAnsweringClusterPrintsExpositionAndFails) {
  TempDir dir;
  Ran r = RunBinary({"--kubeconfig", WriteUnreachableKubeconfig(dir.path()), "--once", "--context",
                     "lab", "--log.level", "error"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.out, HasSubstr("gpuattr_cluster_up{cluster=\"lab\"} 0\n"));
  EXPECT_THAT(r.err, HasSubstr("gpuattr: no cluster answered"));
}

// docs/design.md#naming-labels-and-units: `promtool check metrics` on the output prints nothing.
TEST(AppPromtool, RenderedExpositionIsClean) {
  if (!fs::exists("/usr/bin/promtool")) GTEST_SKIP() << "/usr/bin/promtool is not installed";
  gpuattr::model::Snapshot s;
  s.complete = true;
  for (const char* name : {"kind-gpu", "prod \"eu\"\\x"}) {
    gpuattr::model::ClusterSnapshot c;
    c.cluster = name;
    c.latest.up = true;
    c.cycles = 2;
    c.cycle_duration_seconds = 1.5;
    c.last_success_unix_seconds = 1764460800.25;
    c.latest.apiserver_requests[{"list", "pods", "200"}] = 3;
    c.latest.apiserver_requests[{"get", "pods/proxy", "error"}] = 1;
    s.clusters.push_back(c);
  }
  TempDir dir;
  fs::path text = dir / "metrics.txt";
  std::ofstream(text) << gpuattr::metrics::RenderText(s);
  Process p = Spawn({"/usr/bin/promtool", "check", "metrics"}, dir, text.string());
  int code = Wait(p.pid);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(Slurp(p.out) + Slurp(p.err), "");
}

}  // namespace
