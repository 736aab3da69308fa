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
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "support/fake_apiserver.h"
#include "support/paths.h"
#include "support/scenario.h"
#include "support/subprocess.h"
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

  // The daemon serving the demo (one cycle an hour), stopped when the handle goes.
  struct Daemon {
    pid_t pid = -1;
    int port = 0;
    ~Daemon() {
      if (pid <= 0) return;
      kill(pid, SIGTERM);
      SnapshotOutputs::Wait(pid, 10s);
    }
  };
  void StartDaemon(Daemon& d) {
    std::vector<std::string> args = Base();
    for (const char* a :
         {"--web.listen-address", "127.0.0.1:0", "--interval", "1h", "--log.level", "info"})
      args.push_back(a);
    const fs::path err = dir_ / "daemon.err";
    d.pid = Spawn(args, dir_ / "daemon.out", err);
    d.port = WaitForServingPort(err, 30s);
  }
  static int WaitReady(httplib::Client& cli) {
    int ready = 0;
    for (int i = 0; i < 3000 && ready != 200; ++i) {
      auto r = cli.Get("/readyz");
      ready = r ? r->status : 0;
      if (ready != 200) std::this_thread::sleep_for(10ms);
    }
    return ready;
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
  Daemon daemon;
  StartDaemon(daemon);
  ASSERT_GT(daemon.port, 0) << ReadFile(dir_ / "daemon.err");
  httplib::Client cli("127.0.0.1", daemon.port);
  ASSERT_EQ(WaitReady(cli), 200);
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

// The value of the one series of `family` carrying every label of `labels`; NaN when none does,
// and a test failure when several do.
double Labelled(const std::string& text, const std::string& family,
                const std::vector<std::pair<std::string, std::string>>& labels) {
  double found = std::nan("");
  int n = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(family + "{")) continue;
    const size_t close = line.rfind("} ");
    if (close == std::string::npos) continue;
    const std::string set = line.substr(0, close + 1);
    bool all = true;
    for (const auto& [k, v] : labels)
      all = all && (set.find("{" + k + "=\"" + v + "\"") != std::string::npos ||
                    set.find("," + k + "=\"" + v + "\"") != std::string::npos);
    if (!all) continue;
    ++n;
    found = std::stod(line.substr(close + 2));
  }
  EXPECT_LE(n, 1) << family << " has several series with those labels";
  return found;
}

// Issue 27: the demo's GKE time-shared node and HAMi node, on the status page and in /metrics.
// By hand (fixtures/scenarios/demo/README.md):
//   gke-l4-ts-1: nvidia.com/gpu 6, 3 clients per GPU → 2 physical L4s (capacity and allocatable
//     2 devices; the pods' 3 units are replicas, never devices). GPU 0 draws 60 W, GPU 1 16 W:
//     node 76 W. GPU 0's pods have per-pod FB_USED 6000, 3000, 2000 MiB of FB_TOTAL 23034 MiB, so
//     shares 0.26049, 0.13024, 0.08683 (time_sliced), power 60 × share = 15.629, 7.815, 5.210 W
//     (Σ 28.653 W), unattributed 76 − 28.653 = 47.347 W.
//   hami-l4-1: nvidia.com/gpu 20 in 10 slots per card → 2 physical L4s. GPU 0 60 W, GPU 1 40 W:
//     node 100 W. notebook-bob: 11517 MiB of 23034, no core limit → max(0.5, 0) = 0.5 → 30 W;
//     label-tool: max(4096/23034 = 0.178, 0.30) = 0.3 → 18 W; ocr-0: two containers of
//     max(2048/23034 = 0.089, 0.25) = 0.25 on GPU 1 → 0.5 → 20 W; all sharing="hami";
//     unattributed 100 − 68 = 32 W. GPU-equivalents are the shares (whole cards: 1 per card).
//   Conservation: Σ pods + unattributed = node power on both.
TEST_F(SnapshotOutputs, DemoShowsItsGkeTimeSharedAndHamiNodes) {
  Daemon daemon;
  StartDaemon(daemon);
  ASSERT_GT(daemon.port, 0) << ReadFile(dir_ / "daemon.err");
  httplib::Client cli("127.0.0.1", daemon.port);
  ASSERT_EQ(WaitReady(cli), 200);
  auto metrics = cli.Get("/metrics");
  auto page = cli.Get("/");
  ASSERT_TRUE(metrics && page);
  const std::string& m = metrics->body;
  auto pod = [&](const std::string& family, const std::string& node, const std::string& ns,
                 const std::string& name) {
    return Labelled(m, family, {{"node", node}, {"namespace", ns}, {"pod", name}});
  };

  const std::string gke = "gke-l4-ts-1";
  EXPECT_EQ(Labelled(m, "gpuattr_node_devices_capacity", {{"node", gke}}), 2);
  EXPECT_EQ(Labelled(m, "gpuattr_node_devices_allocatable", {{"node", gke}}), 2);
  EXPECT_EQ(Labelled(m, "gpuattr_node_power_watts", {{"node", gke}}), 76);
  struct Share {
    std::string ns, name;
    double mib;
  };
  double gke_pods = 0;
  for (const Share& p : {Share{"chat", "tutor-0", 6000}, Share{"chat", "tutor-1", 3000},
                         Share{"etl", "embed-0", 2000}}) {
    SCOPED_TRACE(p.name);
    EXPECT_EQ(pod("gpuattr_pod_device", gke, p.ns, p.name), 1);
    EXPECT_EQ(Labelled(m, "gpuattr_pod_device",
                       {{"node", gke}, {"pod", p.name}, {"gpu", "0"}, {"sharing", "time_sliced"}}),
              1);
    EXPECT_NEAR(pod("gpuattr_pod_power_watts", gke, p.ns, p.name), 60 * p.mib / 23034, 1e-9);
    EXPECT_NEAR(pod("gpuattr_pod_gpu_equivalents", gke, p.ns, p.name), p.mib / 23034, 1e-9);
    EXPECT_EQ(Labelled(m, "gpuattr_pod_requested_replicas",
                       {{"namespace", p.ns}, {"pod", p.name}, {"resource", "nvidia.com/gpu"}}),
              1);
    gke_pods += pod("gpuattr_pod_power_watts", gke, p.ns, p.name);
  }
  EXPECT_NEAR(gke_pods, 28.653295129, 1e-6);
  EXPECT_NEAR(Labelled(m, "gpuattr_node_unattributed_power_watts", {{"node", gke}}), 76 - gke_pods,
              1e-9);

  const std::string hami = "hami-l4-1";
  EXPECT_EQ(Labelled(m, "gpuattr_node_devices_capacity", {{"node", hami}}), 2);
  EXPECT_EQ(Labelled(m, "gpuattr_node_devices_allocatable", {{"node", hami}}), 2);
  EXPECT_EQ(Labelled(m, "gpuattr_node_power_watts", {{"node", hami}}), 100);
  struct Held {
    std::string ns, name, gpu;
    double share;
  };
  for (const Held& p :
       {Held{"research", "notebook-bob", "0", 0.5}, Held{"team-a", "label-tool", "0", 0.3},
        Held{"team-c", "ocr-0", "1", 0.5}}) {
    SCOPED_TRACE(p.name);
    EXPECT_EQ(Labelled(m, "gpuattr_pod_device",
                       {{"node", hami}, {"pod", p.name}, {"gpu", p.gpu}, {"sharing", "hami"}}),
              1);
    EXPECT_NEAR(pod("gpuattr_pod_gpu_equivalents", hami, p.ns, p.name), p.share, 1e-9);
    EXPECT_NEAR(pod("gpuattr_pod_power_watts", hami, p.ns, p.name),
                (p.gpu == "0" ? 60 : 40) * p.share, 1e-9);
  }
  EXPECT_NEAR(Labelled(m, "gpuattr_node_unattributed_power_watts", {{"node", hami}}), 32, 1e-9);

  // The status page: both nodes with their devices (physical cards, not replicas or slots) and
  // their pods.
  const std::string& h = page->body;
  for (const std::string& node : {gke, hami}) {
    const size_t at = h.find("data-node=\"" + node + "\"");
    ASSERT_NE(at, std::string::npos) << node;
    const std::string heading = h.substr(at, h.find("</p>", at) - at);
    EXPECT_THAT(heading, HasSubstr("devices: 2 capacity, 2 allocatable")) << node;
  }
  for (const char* p : {"chat/tutor-0, chat/tutor-1, etl/embed-0",
                        "research/notebook-bob, team-a/label-tool", "team-c/ocr-0"})
    EXPECT_THAT(h, HasSubstr(p));
  EXPECT_THAT(h, HasSubstr("76.0 W GPU power"));
  EXPECT_THAT(h, HasSubstr("100 W GPU power"));
}

}  // namespace
}  // namespace gpuattr::testing
