// GpuattrStale on the series the binary really publishes (docs/alerts.md#gpuattrstale): gpuattr
// --once runs against the fake apiserver with --interval 20s and with --interval 10m; the test
// takes gpuattr_cycle_interval_seconds (name, labels and value) and the label set of
// gpuattr_last_cycle_timestamp_seconds from its output, and promtool runs the shipped rule on them
// for a healthy gpuattr (a cycle every interval) and a stale one (cycles stop). Nothing is fed by
// hand that the binary emits, but the timestamps' course in rule time.
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "support/once_run.h"
#include "support/paths.h"
#include "support/scenario.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
constexpr const char* kPromtool = "/usr/bin/promtool";

// "name{a="x",}" as ExpositionSeries keys it → a promtool series selector without the last comma,
// with the job="gpuattr" that Prometheus's scrape adds (the shipped rules select it).
std::string Selector(std::string key) {
  if (key.size() >= 2 && key[key.size() - 2] == ',') key.erase(key.size() - 2, 1);
  const std::size_t brace = key.find('{');
  if (brace == std::string::npos) return key + "{job=\"gpuattr\"}";
  return key.insert(brace + 1, key[brace + 1] == '}' ? "job=\"gpuattr\"" : "job=\"gpuattr\",");
}

struct Published {
  std::string interval_series, timestamp_series;
  double interval = 0;
};

// Runs gpuattr --once with `interval` and finds the two series the rule reads.
Published Publish(const fs::path& dir, const std::string& interval) {
  auto scenario = LoadScenario(FixturePath("scenarios/basic"));
  EXPECT_TRUE(scenario.ok()) << scenario.error().message;
  if (!scenario.ok()) return {};
  OnceRun run = RunOnceAgainst(*scenario, dir, "interval-" + interval, {"--interval", interval});
  EXPECT_EQ(run.code, 0) << run.err;
  Published p;
  for (const auto& [key, value] : ExpositionSeries(run.out)) {
    if (key.starts_with("gpuattr_cycle_interval_seconds{")) {
      p.interval_series = Selector(key);
      p.interval = value;
    }
    if (key.starts_with("gpuattr_last_cycle_timestamp_seconds{"))
      p.timestamp_series = Selector(key);
  }
  EXPECT_FALSE(p.interval_series.empty()) << "no gpuattr_cycle_interval_seconds:\n" << run.out;
  EXPECT_FALSE(p.timestamp_series.empty()) << "no gpuattr_last_cycle_timestamp_seconds";
  return p;
}

// One promtool test group: a sample per minute for `minutes` minutes; the data's timestamp
// follows a cycle every `interval` seconds until `stop_minute` (never when < 0).
std::string Group(const Published& p, int minutes, int stop_minute) {
  const long long interval = static_cast<long long>(p.interval);
  std::string ts, iv;
  long long last = 0;
  for (int m = 0; m <= minutes; ++m) {
    if (stop_minute < 0 || m <= stop_minute) last = (m * 60LL / interval) * interval;
    ts += std::to_string(last) + " ";
    iv += std::to_string(interval) + " ";
  }
  return "  - interval: 1m\n    input_series:\n      - series: '" + p.timestamp_series +
         "'\n        values: '" + ts + "'\n      - series: '" + p.interval_series +
         "'\n        values: '" + iv + "'\n    alert_rule_test:\n";
}

std::string Expect(int minute, bool firing) {
  return "      - eval_time: " + std::to_string(minute) +
         "m\n        alertname: GpuattrStale\n        exp_alerts: [" +
         (firing ? "{exp_labels: {severity: warning, job: gpuattr, cluster: lab}}" : "") + "]\n";
}

// GpuattrStale as shipped (expr, for, labels), without its annotations: the test checks when it
// fires, docs/alerts.md what it says.
std::string ShippedStaleRule() {
  YAML::Node file =
      YAML::LoadFile((SourceDir() / "config" / "prometheus" / "gpuattr-alerts.yml").string());
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "groups" << YAML::Value << YAML::BeginSeq << YAML::BeginMap
      << YAML::Key << "name" << YAML::Value << "shipped" << YAML::Key << "rules" << YAML::Value
      << YAML::BeginSeq;
  for (const auto& group : file["groups"])
    for (const auto& rule : group["rules"]) {
      if (!rule["alert"] || rule["alert"].as<std::string>() != "GpuattrStale") continue;
      out << YAML::BeginMap << YAML::Key << "alert" << YAML::Value << "GpuattrStale";
      out << YAML::Key << "expr" << YAML::Value << rule["expr"].as<std::string>();
      out << YAML::Key << "for" << YAML::Value << rule["for"].as<std::string>();
      out << YAML::Key << "labels" << YAML::Value << rule["labels"] << YAML::EndMap;
    }
  out << YAML::EndSeq << YAML::EndMap << YAML::EndSeq << YAML::EndMap;
  return out.c_str();
}

TEST(StaleAlert, FollowsThePublishedIntervalFor20sAnd10m) {
  if (!fs::exists(kPromtool)) GTEST_SKIP() << kPromtool << " is not installed";
  const fs::path dir = fs::temp_directory_path() / ("gpuattr-stale-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const Published fast = Publish(dir, "20s"), slow = Publish(dir, "10m");
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(fast.interval, 20);
  EXPECT_EQ(slow.interval, 600);

  std::ofstream(dir / "rules.yml") << ShippedStaleRule();
  std::string test = "rule_files: [rules.yml]\nevaluation_interval: 1m\ntests:\n";
  // 20 s, healthy: never stale.
  test += Group(fast, 60, -1) + Expect(10, false) + Expect(60, false);
  // 20 s, the last cycle at 5m: older than 60 s from 7m, fires 2 min later, at 9m (held to the
  // old 180 s fallback it fired at 11m).
  test += Group(fast, 20, 5) + Expect(8, false) + Expect(9, true) + Expect(20, true);
  // 10 min, healthy: data up to 10 min old is never stale (the 180 s fallback fired here).
  test += Group(slow, 90, -1) + Expect(9, false) + Expect(29, false) + Expect(89, false);
  // 10 min, the last cycle at 10m: older than 30 min from 41m, fires at 43m.
  test += Group(slow, 60, 10) + Expect(42, false) + Expect(43, true) + Expect(60, true);
  std::ofstream(dir / "test.yml") << test;

  const std::string cmd =
      "cd '" + dir.string() + "' && " + kPromtool + " test rules test.yml > promtool.txt 2>&1";
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << ReadFile(dir / "promtool.txt") << "\n" << test;
  std::error_code ec;
  if (!HasFailure()) fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace gpuattr::testing
