// The binary's human-facing outputs end to end, against the fake apiserver serving the demo:
// `--once --output table|json|markdown` and the daemon's /snapshot.json and /snapshot.md, with the
// same numbers as the exposition of the same run.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "support/fake_apiserver.h"
#include "support/paths.h"
#include "support/scenario.h"
#include "test_paths.h"

extern char** environ;

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

const std::string kBinary = DaemonBinary();

struct Ran {
  int code = -1;
  std::string out, err;
};

class SnapshotOutputs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuattr-outputs-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto scenario = LoadScenario(FixturePath("scenarios/demo"));
    ASSERT_TRUE(scenario.ok()) << scenario.error().message;
    server_ = std::make_unique<FakeApiServer>(std::move(*scenario));
    ASSERT_TRUE(server_->Start().ok());
    KubeconfigOptions kc;
    kc.context = "demo";
    ASSERT_TRUE(server_->WriteKubeconfig(dir_ / "kubeconfig", kc).ok());
  }
  void TearDown() override {
    if (server_) server_->Stop();
    fs::remove_all(dir_);
  }

  std::vector<std::string> Base() const {
    return {kBinary, "--kubeconfig", (dir_ / "kubeconfig").string(), "--context",
            "demo",  "--state.file", (dir_ / "state.json").string()};
  }

  pid_t Spawn(std::vector<std::string> args, const fs::path& out, const fs::path& err,
              const std::vector<std::string>& env = {}) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> vars = env;
    for (char** e = environ; *e; ++e) vars.push_back(*e);
    for (auto& v : vars) envp.push_back(v.data());
    envp.push_back(nullptr);
    pid_t pid = -1;
    EXPECT_EQ(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&fa);
    return pid;
  }

  static int Wait(pid_t pid, std::chrono::milliseconds limit = 60s) {
    auto end = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (std::chrono::steady_clock::now() < end) {
      if (waitpid(pid, &status, WNOHANG) == pid)
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      std::this_thread::sleep_for(10ms);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
  }

  Ran Once(std::vector<std::string> extra, const std::vector<std::string>& env = {}) {
    std::vector<std::string> args = Base();
    args.insert(args.end(), {"--once", "--log.level", "warn"});
    args.insert(args.end(), extra.begin(), extra.end());
    const fs::path out = dir_ / "out", err = dir_ / "err";
    Ran r;
    r.code = Wait(Spawn(args, out, err, env));
    r.out = ReadFile(out);
    r.err = ReadFile(err);
    return r;
  }

  fs::path dir_;
  std::unique_ptr<FakeApiServer> server_;
};

double Series(const std::string& text, const std::string& series) {
  size_t p = text.find("\n" + series + " ");
  EXPECT_NE(p, std::string::npos) << series;
  return p == std::string::npos ? -1 : std::stod(text.substr(p + series.size() + 2));
}

TEST_F(SnapshotOutputs, OnceOutputsAgreeWithTheExposition) {
  Ran prom = Once({});
  ASSERT_EQ(prom.code, 0) << prom.err;
  Ran json = Once({"--output", "json"});
  ASSERT_EQ(json.code, 0) << json.err;
  auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["schema_version"], 1);
  ASSERT_FALSE(j["namespaces"].empty());
  for (const auto& ns : j["namespaces"]) {
    if (ns["power_watts"].is_null()) continue;
    const std::string l =
        "{cluster=\"demo\",namespace=\"" + ns["namespace"].get<std::string>() + "\"}";
    EXPECT_NEAR(ns["power_watts"].get<double>(),
                Series(prom.out, "gpuattr_namespace_power_watts" + l), 1e-9);
    EXPECT_NEAR(ns["gpu_equivalents"].get<double>(),
                Series(prom.out, "gpuattr_namespace_gpu_equivalents" + l), 1e-9);
  }

  // A pipe is no terminal: no colour, nothing cut; COLUMNS narrows it, NO_COLOR is honoured.
  Ran table = Once({"--output", "table"});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("\nWhose GPUs\n"));
  EXPECT_THAT(table.out, HasSubstr("\nresearch "));
  EXPECT_THAT(table.out, Not(HasSubstr("\x1b[")));
  EXPECT_THAT(table.out, Not(HasSubstr("…")));
  Ran narrow = Once({"--output", "table"}, {"COLUMNS=80", "NO_COLOR=1"});
  ASSERT_EQ(narrow.code, 0) << narrow.err;
  std::istringstream lines(narrow.out);
  for (std::string line; std::getline(lines, line);) {
    size_t cols = 0;
    for (unsigned char ch : line) cols += (ch & 0xC0) != 0x80;
    EXPECT_LE(cols, 80u) << line;
  }

  Ran md = Once({"--output", "markdown"});
  ASSERT_EQ(md.code, 0) << md.err;
  EXPECT_THAT(md.out, HasSubstr("# GPU snapshot: demo"));
  EXPECT_LT(md.out.find("## Health problems"), md.out.find("## Whose GPUs"));

  Ran bad = Once({"--output", "yaml"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--output: unknown output format \"yaml\""));
}

TEST_F(SnapshotOutputs, DaemonServesSnapshotJsonAndMarkdown) {
  std::vector<std::string> args = Base();
  for (const char* a :
       {"--web.listen-address", "127.0.0.1:0", "--interval", "1h", "--log.level", "info"})
    args.push_back(a);
  const fs::path err = dir_ / "daemon.err";
  pid_t pid = Spawn(args, dir_ / "daemon.out", err);
  struct Stop {
    pid_t pid;
    ~Stop() {
      kill(pid, SIGTERM);
      SnapshotOutputs::Wait(pid, 10s);
    }
  } stop{pid};
  int port = 0;
  std::regex re("msg=serving address=127\\.0\\.0\\.1:([0-9]+)");
  for (int i = 0; i < 3000 && port == 0; ++i) {
    std::smatch m;
    std::string e = ReadFile(err);
    if (std::regex_search(e, m, re))
      port = std::stoi(m[1]);
    else
      std::this_thread::sleep_for(10ms);
  }
  ASSERT_GT(port, 0) << ReadFile(err);
  httplib::Client cli("127.0.0.1", port);
  int ready = 0;
  for (int i = 0; i < 3000 && ready != 200; ++i) {
    auto r = cli.Get("/readyz");
    ready = r ? r->status : 0;
    if (ready != 200) std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(ready, 200);
  auto metrics = cli.Get("/metrics");
  auto json = cli.Get("/snapshot.json");
  auto md = cli.Get("/snapshot.md");
  ASSERT_TRUE(metrics && json && md);
  EXPECT_EQ(json->status, 200);
  EXPECT_EQ(json->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(md->status, 200);
  EXPECT_EQ(md->get_header_value("Content-Type"), "text/markdown; charset=utf-8");
  auto j = nlohmann::json::parse(json->body);
  EXPECT_EQ(j["complete"], true);
  EXPECT_EQ(j["clusters"][0]["cluster"], "demo");
  EXPECT_EQ(j["clusters"][0]["state"], "up");
  // The one cycle of the hour: the same numbers as /metrics.
  for (const auto& n : j["nodes"])
    for (const auto& c : n["cards"])
      if (!c["power_watts"].is_null()) {
        std::regex card("\ngpuattr_card_power_watts\\{cluster=\"demo\",gpu=\"" +
                        c["gpu"].get<std::string>() + "\",model=\"[^\"]*\",node=\"" +
                        n["node"].get<std::string>() + "\",uuid=\"[^\"]*\"\\} ([^\n]+)");
        std::smatch m;
        ASSERT_TRUE(std::regex_search(metrics->body, m, card)) << n["node"] << "/" << c["gpu"];
        EXPECT_NEAR(c["power_watts"].get<double>(), std::stod(m[1]), 1e-9);
      }
  EXPECT_THAT(md->body, HasSubstr("## Idle holders"));
  EXPECT_THAT(md->body, HasSubstr("`team-b/worker-09`"));
  // The status page links both.
  auto page = cli.Get("/");
  ASSERT_TRUE(page);
  EXPECT_THAT(page->body, HasSubstr("href=\"/snapshot.json\""));
  EXPECT_THAT(page->body, HasSubstr("<meta http-equiv=\"refresh\" content=\"3600\">"));
}

}  // namespace
}  // namespace gpuattr::testing
