// --web.telemetry-path and --log.format on the real binary (docs/app.md#endpoints,
// docs/app.md#logs): the metrics move to the given path and /metrics answers 404; with
// --log.format json every stderr line is one JSON object, with the fields the logfmt line of the
// same event has.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "support/paths.h"
#include "support/subprocess.h"
#include "test_paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

struct Daemon {
  Child child;
  int port = 0;
};

// Starts gpuattr on an unreachable cluster (it serves its own series) and waits for "serving".
Daemon Start(const fs::path& dir, const std::vector<std::string>& extra) {
  fs::create_directories(dir);
  std::vector<std::string> args = {
      DaemonBinary(), "--kubeconfig", WriteUnreachableKubeconfig(dir), "--web.listen-address",
      "127.0.0.1:0",  "--state.file", (dir / "state.json").string()};
  args.insert(args.end(), extra.begin(), extra.end());
  Daemon d;
  d.child = SpawnChild(args, EnvironmentWithout({"KUBECONFIG"}), dir);
  static const std::regex port(R"(127\.0\.0\.1:([0-9]+))");
  for (int i = 0; i < 2000 && d.child.pid > 0; ++i) {
    std::istringstream err(SlurpFile(d.child.err));
    for (std::string line; std::getline(err, line);) {
      std::smatch m;
      if (line.find("serving") != std::string::npos && std::regex_search(line, m, port))
        d.port = std::stoi(m[1]);
    }
    if (d.port) break;
    std::this_thread::sleep_for(10ms);
  }
  return d;
}

void Stop(Daemon& d) {
  if (d.child.pid <= 0) return;
  kill(d.child.pid, SIGTERM);
  EXPECT_EQ(WaitChild(d.child.pid, 10s), 0) << SlurpFile(d.child.err);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

// The keys of a logfmt line, in order.
std::vector<std::string> LogfmtKeys(const std::string& line) {
  static const std::regex pair(R"re((^| )([a-z_]+)=("(?:[^"\\]|\\.)*"|[^ ]*))re");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(line.begin(), line.end(), pair); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[2]);
  return out;
}

TEST(TelemetryPath, MetricsMoveAndTheOldPath404s) {
  const fs::path dir =
      fs::temp_directory_path() / ("gpuattr-telemetry-" + std::to_string(getpid()));
  Daemon d = Start(dir, {"--web.telemetry-path", "/gpuattr/metrics"});
  ASSERT_GT(d.port, 0) << SlurpFile(d.child.err);
  httplib::Client cli("127.0.0.1", d.port);
  // The port is served before the first cycle publishes: until then the exposition holds only
  // the process family, so wait (bounded) for the cycle's families before judging the body.
  httplib::Result moved = cli.Get("/gpuattr/metrics");
  for (int i = 0; i < 300 && moved && moved->body.find("gpuattr_cluster_up") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(100ms);
    moved = cli.Get("/gpuattr/metrics");
  }
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->status, 200);
  EXPECT_THAT(moved->body, HasSubstr("# TYPE gpuattr_cluster_up gauge"));
  EXPECT_THAT(moved->body, HasSubstr("process_start_time_seconds"));
  auto old = cli.Get("/metrics");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->status, 404);
  auto page = cli.Get("/");
  ASSERT_TRUE(page);
  EXPECT_THAT(page->body, HasSubstr("<a href=\"/gpuattr/metrics\">"));
  Stop(d);
  std::error_code ec;
  if (!::testing::Test::HasFailure()) fs::remove_all(dir, ec);
}

TEST(TelemetryPath, RefusesAPathTakenByAnotherEndpoint) {
  const fs::path dir =
      fs::temp_directory_path() / ("gpuattr-telemetry-bad-" + std::to_string(getpid()));
  fs::create_directories(dir);
  Child c = SpawnChild({DaemonBinary(), "--web.telemetry-path", "/healthz"},
                       EnvironmentWithout({"KUBECONFIG"}), dir);
  EXPECT_EQ(WaitChild(c.pid, 10s), 2);
  EXPECT_THAT(SlurpFile(c.err), HasSubstr("web.telemetry-path"));
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST(LogFormat, JsonLinesParseAndCarryTheLogfmtLinesFields) {
  const fs::path dir =
      fs::temp_directory_path() / ("gpuattr-logformat-" + std::to_string(getpid()));
  Daemon json = Start(dir / "json", {"--log.format", "json", "--interval", "1s"});
  Daemon logfmt = Start(dir / "logfmt", {"--interval", "1s"});
  ASSERT_GT(json.port, 0) << SlurpFile(json.child.err);
  ASSERT_GT(logfmt.port, 0) << SlurpFile(logfmt.child.err);
  // A cycle in each (it fails: the cluster is unreachable); a fixed wait was too short at load 13.
  for (auto until = std::chrono::steady_clock::now() + 30s;
       std::chrono::steady_clock::now() < until &&
       (SlurpFile(json.child.err).find("\"cycle finished\"") == std::string::npos ||
        SlurpFile(logfmt.child.err).find("cycle finished") == std::string::npos);)
    std::this_thread::sleep_for(50ms);
  Stop(json);
  Stop(logfmt);

  // msg → keys of its first line.
  std::map<std::string, std::vector<std::string>> json_keys, logfmt_keys;
  const auto json_lines = Lines(SlurpFile(json.child.err));
  ASSERT_GE(json_lines.size(), 3u);
  for (const std::string& line : json_lines) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << "not a JSON object: " << line;
    for (const char* k : {"ts", "level", "msg"}) ASSERT_TRUE(j.contains(k)) << k << ": " << line;
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it) {
      EXPECT_TRUE(it.value().is_string()) << it.key() << ": " << line;
      keys.push_back(it.key());
    }
    std::sort(keys.begin(), keys.end());
    json_keys.emplace(j["msg"].get<std::string>(), keys);
  }
  static const std::regex msg(R"re( msg=("((?:[^"\\]|\\.)*)"|[^ ]*))re");
  for (const std::string& line : Lines(SlurpFile(logfmt.child.err))) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(line, m, msg)) << line;
    auto keys = LogfmtKeys(line);
    std::sort(keys.begin(), keys.end());
    logfmt_keys.emplace(m[2].matched ? m[2].str() : m[1].str(), keys);
  }
  size_t compared = 0;
  for (const auto& [m, keys] : logfmt_keys) {
    auto it = json_keys.find(m);
    if (it == json_keys.end()) continue;
    ++compared;
    EXPECT_EQ(it->second, keys) << "fields of \"" << m << "\"";
  }
  for (const char* m : {"started", "serving", "cycle finished"})
    EXPECT_TRUE(json_keys.count(m) && logfmt_keys.count(m)) << "no \"" << m << "\" line";
  EXPECT_GE(compared, 3u);
  std::error_code ec;
  if (!::testing::Test::HasFailure()) fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace gpuattr::testing
