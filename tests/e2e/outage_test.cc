// docs/design.md#honest-status and docs/design.md#unknown-cycles, end to end: the real
// gpuattr binary in server mode against the fake apiserver, which from some moment on answers 503
// to everything (its open watches ended). Scraped as Prometheus would: cluster_up goes to 0 within
// 2 intervals, the last-success timestamp stops, the last good pod series stay served with their
// values, the idle pod's run survives the outage, SIGTERM exits within 2 s with open watches, and
// the shipped GpuattrClusterDown / GpuattrStale alerts fire on the series gpuattr produced.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
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
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using SteadyTime = std::chrono::steady_clock::time_point;

const std::string kBinary = DaemonBinary();
constexpr auto kInterval = 1s;
const std::string kIdlePod = "pod=\"notebook-alice\"";

double WallNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// "name{labels}" → value, for every sample line of an exposition.
std::map<std::string, double> Samples(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    out[line.substr(0, space)] = std::strtod(line.c_str() + space + 1, nullptr);
  }
  return out;
}

// The samples of every family starting with `prefix` (the attributed pod series).
std::map<std::string, double> WithPrefix(const std::map<std::string, double>& all,
                                         const std::string& prefix) {
  std::map<std::string, double> out;
  for (const auto& [k, v] : all)
    if (k.rfind(prefix, 0) == 0) out[k] = v;
  return out;
}

std::optional<double> Find(const std::map<std::string, double>& all, const std::string& family,
                           const std::string& label_part = "") {
  for (const auto& [k, v] : all)
    if (k.rfind(family + "{", 0) == 0 && k.find(label_part) != std::string::npos) return v;
  return std::nullopt;
}

class GpuattrProcess {
 public:
  GpuattrProcess(const std::vector<std::string>& args, const fs::path& log) : log_(log) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
  }
  ~GpuattrProcess() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  std::string Log() const { return ReadFile(log_); }
  // The port from the "msg=serving address=127.0.0.1:PORT" line; 0 after 20 s without it.
  int Port() const { return WaitForServingPort(log_, 20s); }
  // The exit code, or -1 when it did not exit within `limit` (then it is killed).
  int Wait(std::chrono::milliseconds limit) {
    auto end = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (std::chrono::steady_clock::now() < end) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(5ms);
    }
    return -1;
  }
  pid_t pid() const { return pid_; }

 private:
  fs::path log_;
  pid_t pid_ = -1;
  bool exited_ = false;
};

// The alert rules named `names`, taken from the shipped file as they are (expr, for, labels), so
// that the test runs the shipped expressions without copying their annotation texts.
std::string ShippedRules(const std::vector<std::string>& names) {
  YAML::Node file = YAML::LoadFile(GPUATTR_SOURCE_DIR "/config/prometheus/gpuattr-alerts.yml");
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "groups" << YAML::Value << YAML::BeginSeq;
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "shipped";
  out << YAML::Key << "rules" << YAML::Value << YAML::BeginSeq;
  for (const auto& group : file["groups"]) {
    for (const auto& rule : group["rules"]) {
      if (!rule["alert"]) continue;
      const std::string name = rule["alert"].as<std::string>();
      if (std::find(names.begin(), names.end(), name) == names.end()) continue;
      out << YAML::BeginMap << YAML::Key << "alert" << YAML::Value << name;
      out << YAML::Key << "expr" << YAML::Value << rule["expr"].as<std::string>();
      if (rule["for"]) out << YAML::Key << "for" << YAML::Value << rule["for"].as<std::string>();
      out << YAML::Key << "labels" << YAML::Value << rule["labels"];
      out << YAML::EndMap;
    }
  }
  out << YAML::EndSeq << YAML::EndMap << YAML::EndSeq << YAML::EndMap;
  return out.c_str();
}

// One sample per second of what gpuattr published.
struct Observed {
  double wall = 0;
  double cluster_up = 0;
  double last_cycle = 0;
  double interval = -1;  // gpuattr_cycle_interval_seconds as published
};

TEST(Outage, ApiserverDownIsReportedHonestlyAndTheLastGoodDataStays) {
  auto scenario = LoadScenario(FixturePath("scenarios/basic"));
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  FakeApiServerOptions so;
  so.bookmark_interval = 120s;  // quiet streams: SIGTERM must not wait for their next chunk
  FakeApiServer server(std::move(*scenario), so);
  ASSERT_TRUE(server.Start().ok());
  const fs::path dir = fs::temp_directory_path() / ("gpuattr-outage-" + std::to_string(getpid()));
  fs::create_directories(dir);
  ASSERT_TRUE(server.WriteKubeconfig(dir / "kubeconfig").ok());

  GpuattrProcess gpuattr(
      {kBinary, "--kubeconfig", (dir / "kubeconfig").string(), "--web.listen-address",
       "127.0.0.1:0", "--interval", "1s", "--state.file", (dir / "state.json").string()},
      dir / "gpuattr.log");
  ASSERT_GT(gpuattr.pid(), 0);
  const int port = gpuattr.Port();
  ASSERT_GT(port, 0) << gpuattr.Log();
  httplib::Client cli("127.0.0.1", port);
  auto scrape = [&] {
    auto r = cli.Get("/metrics");
    return r && r->status == 200 ? Samples(r->body) : std::map<std::string, double>{};
  };
  std::vector<Observed> seen;
  auto observe = [&](const std::map<std::string, double>& m) {
    seen.push_back({WallNow(), Find(m, "gpuattr_cluster_up").value_or(-1),
                    Find(m, "gpuattr_last_cycle_timestamp_seconds").value_or(-1),
                    Find(m, "gpuattr_cycle_interval_seconds").value_or(-1)});
  };

  // Healthy: the idle notebook's run grows over a few cycles.
  std::map<std::string, double> before;
  for (int i = 0; i < 600; ++i) {  // 60 s at most
    before = scrape();
    if (Find(before, "gpuattr_cluster_up") == 1.0 &&
        Find(before, "gpuattr_pod_idle_seconds", kIdlePod).value_or(0) >= 2)
      break;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_EQ(Find(before, "gpuattr_pod_idle", kIdlePod), 1.0) << gpuattr.Log();
  ASSERT_GE(Find(before, "gpuattr_pod_idle_seconds", kIdlePod).value_or(0), 2) << gpuattr.Log();
  for (int i = 0; i < 3; ++i) {
    observe(scrape());
    std::this_thread::sleep_for(1s);
  }
  const double idle_before = *Find(scrape(), "gpuattr_pod_idle_seconds", kIdlePod);
  const double wall_before = WallNow();
  const size_t pre_outage = seen.size();

  // The apiserver goes: 503 to everything, open watches end.
  FaultRule all;
  all.status = 503;
  all.message = "the apiserver is down (test)";
  server.AddFault(all);
  server.EndWatches();
  const SteadyTime outage = std::chrono::steady_clock::now();
  std::map<std::string, double> down;
  for (int i = 0; i < 200; ++i) {  // 10 s at most, polled as a fast scraper would
    down = scrape();
    if (Find(down, "gpuattr_cluster_up") == 0.0) break;
    std::this_thread::sleep_for(50ms);
  }
  const auto to_down = std::chrono::steady_clock::now() - outage;
  ASSERT_EQ(Find(down, "gpuattr_cluster_up"), 0.0) << gpuattr.Log();
  observe(down);
  EXPECT_LE(to_down, 2 * kInterval + 300ms) << "cluster_up took too long to say 0";
  RecordProperty(
      "cluster_up_0_after_ms",
      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(to_down).count()));
  const auto pods_down = WithPrefix(down, "gpuattr_pod_");
  const auto pods_before = WithPrefix(before, "gpuattr_pod_");
  ASSERT_FALSE(pods_down.empty());
  // The same series as before the outage (values may be one cycle newer than `before`).
  std::vector<std::string> keys_before, keys_down;
  for (const auto& [k, v] : pods_before) keys_before.push_back(k);
  for (const auto& [k, v] : pods_down) keys_down.push_back(k);
  EXPECT_EQ(keys_down, keys_before);

  // The outage goes on for 9 intervals: nothing moves.
  for (int i = 0; i < 9; ++i) {
    std::this_thread::sleep_for(1s);
    observe(scrape());
  }
  const auto later = scrape();
  EXPECT_EQ(Find(later, "gpuattr_cluster_up"), 0.0);
  EXPECT_EQ(WithPrefix(later, "gpuattr_pod_"), pods_down);  // served unchanged, values and all
  // The exporters were not read during the outage: they say so (ExporterDown is inhibited by
  // ClusterDown in the example Alertmanager config).
  const auto exporters = WithPrefix(later, "gpuattr_exporter_up{");
  ASSERT_FALSE(exporters.empty());
  for (const auto& [series, value] : exporters) EXPECT_EQ(value, 0) << series;
  const double frozen = *Find(down, "gpuattr_last_cycle_timestamp_seconds");
  EXPECT_EQ(Find(later, "gpuattr_last_cycle_timestamp_seconds"), frozen);
  EXPECT_LE(frozen, WallNow() - 8);
  auto ready = cli.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);  // still serving the last good data
  auto page = cli.Get("/");
  ASSERT_TRUE(page);
  EXPECT_THAT(page->body, HasSubstr("out of sync, no watch connected"));

  // Back: the idle run was not reset by the outage (it still counts from before it).
  server.ClearFaults();
  std::map<std::string, double> after;
  for (int i = 0; i < 600; ++i) {  // 60 s at most: the informers' backoff decides
    after = scrape();
    if (Find(after, "gpuattr_cluster_up") == 1.0 &&
        Find(after, "gpuattr_last_cycle_timestamp_seconds") > frozen &&
        Find(after, "gpuattr_pod_idle_seconds", kIdlePod))
      break;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_EQ(Find(after, "gpuattr_cluster_up"), 1.0) << gpuattr.Log();
  const double idle_after = Find(after, "gpuattr_pod_idle_seconds", kIdlePod).value_or(-1);
  EXPECT_GE(idle_after, idle_before + (WallNow() - wall_before) - 3)
      << "the idle run restarted after the outage";

  // SIGTERM with its watch streams open (and silent): out within 2 s.
  const SteadyTime term = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(gpuattr.pid(), SIGTERM), 0);
  EXPECT_EQ(gpuattr.Wait(10s), 0) << gpuattr.Log();
  const auto exit_took = std::chrono::steady_clock::now() - term;
  EXPECT_LT(exit_took, 2s) << gpuattr.Log();
  RecordProperty(
      "sigterm_exit_ms",
      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(exit_took).count()));
  server.Stop();

  // The shipped alerts, fed with what gpuattr published (one sample per interval, 1 s of the run
  // becoming 1 min of rule time): ClusterDown and Stale are quiet before the outage and fire
  // during it.
  if (!fs::exists("/usr/bin/promtool")) GTEST_SKIP() << "/usr/bin/promtool is not installed";
  ASSERT_GE(seen.size(), pre_outage + 9);
  // Rule time starts 10 min before the first sample (missing values "_"), so that timestamps a
  // little older than it stay positive.
  constexpr int kLead = 10;
  const double base = seen.front().wall - kLead;
  std::string up_values, ts_values, interval_values;
  for (int i = 0; i < kLead; ++i) {
    up_values += "_ ";
    ts_values += "_ ";
    interval_values += "_ ";
  }
  for (const Observed& o : seen) {
    ASSERT_EQ(o.interval, 1) << "gpuattr_cycle_interval_seconds is not the --interval";
    up_values += std::to_string(static_cast<int>(o.cluster_up)) + " ";
    ts_values += std::to_string(static_cast<long long>((o.last_cycle - base) * 60)) + " ";
    // The published interval, scaled as the timestamps are.
    interval_values += std::to_string(static_cast<long long>(o.interval * 60)) + " ";
  }
  // The series carry job="gpuattr", the label Prometheus's scrape adds and the rules select.
  std::ofstream(dir / "rules.yml") << ShippedRules({"GpuattrClusterDown", "GpuattrStale"});
  std::ofstream(dir / "test.yml")
      << "rule_files: [rules.yml]\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n"
      << "    input_series:\n"
      << "      - series: 'gpuattr_cluster_up{job=\"gpuattr\",cluster=\"fake\"}'\n        values: '"
      << up_values
      << "'\n      - series: "
         "'gpuattr_last_cycle_timestamp_seconds{job=\"gpuattr\",cluster=\"fake\"}'\n"
      << "        values: '" << ts_values << "'\n"
      << "      - series: 'gpuattr_cycle_interval_seconds{job=\"gpuattr\",cluster=\"fake\"}'\n     "
         "   values: '"
      << interval_values << "'\n    alert_rule_test:\n"
      << "      - {eval_time: " << kLead + pre_outage - 1 << "m, alertname: GpuattrClusterDown}\n"
      << "      - {eval_time: " << kLead + pre_outage - 1 << "m, alertname: GpuattrStale}\n"
      << "      - eval_time: " << kLead + seen.size() - 1
      << "m\n        alertname: GpuattrClusterDown\n"
      << "        exp_alerts: [{exp_labels: {severity: warning, job: gpuattr, cluster: fake}}]\n"
      << "      - eval_time: " << kLead + seen.size() - 1 << "m\n        alertname: GpuattrStale\n"
      << "        exp_alerts: [{exp_labels: {severity: warning, job: gpuattr, cluster: fake}}]\n";
  const std::string cmd = "cd '" + dir.string() + "' && /usr/bin/promtool test rules test.yml > '" +
                          (dir / "promtool.txt").string() + "' 2>&1";
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << ReadFile(dir / "promtool.txt") << "\n" << ReadFile(dir / "test.yml");
  std::error_code ec;
  if (!HasFailure()) fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace gpuattr::testing
