// Golden files of the human-facing outputs over every fixture scenario: one cycle of a real
// session against the fake apiserver (discovery, scraping and the stages as the daemon runs
// them), then the status view rendered as the terminal table, the JSON snapshot and the Markdown
// report, compared with tests/golden/snapshot_golden/NAME.{txt,json,md}. UPDATE_GOLDEN=1
// regenerates; review with `git diff`.
//
// What changes from run to run is pinned: the session's clock is set to 2026-12-01T00:00:00Z
// (pending ages, the ledger), the cycle's duration to 0.5 s, exporter scrape durations (real
// time) to 0, and the fake apiserver's port and gpuattr's version and revision are replaced by
// placeholders. The session lists
// every kind once and does not watch, so scripted watch events cannot race the cycle.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "gpuattr/app/config.h"
#include "gpuattr/app/session_factory.h"
#include "gpuattr/build_info.h"
#include "gpuattr/report/outputs.h"
#include "gpuattr/report/view.h"
#include "support/golden.h"
#include "support/paths.h"
#include "support/session_harness.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;

constexpr double kNow = 1796083200;  // 2026-12-01T00:00:00Z

std::vector<fs::path> ScenarioDirs() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(FixturePath("scenarios")))
    if (e.is_directory()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

void ReplaceAll(std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
}

std::string Pinned(std::string text, int port) {
  // Errors name the fake apiserver's address, a free port of the run.
  ReplaceAll(text, "127.0.0.1:" + std::to_string(port), "127.0.0.1:PORT");
  // The revision first: it may contain the version's digits.
  ReplaceAll(text, build::kRevision, "REVISION");
  ReplaceAll(text, std::string("gpuattr ") + build::kVersion, "gpuattr VERSION");
  ReplaceAll(text, std::string("\"version\": \"") + build::kVersion, "\"version\": \"VERSION");
  return text;
}

struct Outputs {
  std::string table, json, markdown;
};

Outputs RunScenario(const fs::path& dir) {
  auto scenario = LoadScenario(dir);
  EXPECT_TRUE(scenario.ok()) << scenario.error().message;
  if (!scenario.ok()) return {};
  SessionHarness h;
  h.clock.Advance(std::chrono::milliseconds(
      static_cast<int64_t>((kNow - UnixSeconds(h.clock.WallNow())) * 1000)));
  app::KubeSessionOptions options = app::SessionOptionsFromConfig(app::Config{});
  options.cache.keep_watching = false;
  EXPECT_TRUE(h.Start(std::move(*scenario), std::move(options)));
  if (!h.session) return {};
  auto cycle = h.Cycle();

  model::ClusterSnapshot c;
  c.cluster = h.session->Cluster();
  c.cycles = 1;
  c.cycle_duration_seconds = 0.5;
  c.last_attempt_unix_seconds = kNow;
  if (cycle->result.up) c.last_success_unix_seconds = kNow;
  c.latest = cycle->result;
  model::Snapshot s;
  s.complete = true;
  s.generated_unix_seconds = kNow;
  s.clusters.push_back(std::move(c));

  // Scrape durations vary from run to run: the goldens show 0.
  if (const auto& report = s.clusters[0].latest.discovery) {
    auto pinned = std::make_shared<discovery::DiscoveryReport>(*report);
    for (discovery::ExporterStatus& e : pinned->exporters) e.duration_seconds = 0;
    s.clusters[0].latest.discovery = std::move(pinned);
  }
  const report::StatusView v = report::BuildStatusView(s, kNow, {});
  const int port = h.server->port();
  return {Pinned(report::RenderTable(v), port), Pinned(report::RenderSnapshotJson(v), port),
          Pinned(report::RenderMarkdown(v), port)};
}

class SnapshotGolden : public ::testing::TestWithParam<fs::path> {};

TEST_P(SnapshotGolden, TableJsonAndMarkdownMatch) {
  const Outputs o = RunScenario(GetParam());
  ASSERT_FALSE(o.table.empty());
  const std::string name = GetParam().filename().string();
  const fs::path golden = SourceDir() / "tests" / "golden" / "snapshot_golden";
  for (const auto& [ext, text] : {std::pair<std::string, const std::string*>{".txt", &o.table},
                                  {".json", &o.json},
                                  {".md", &o.markdown}}) {
    auto r = CompareGolden(golden / (name + ext), *text);
    EXPECT_TRUE(r.ok) << r.message;
  }
  // The JSON is one valid object of the documented version (docs/snapshot.md).
  auto j = nlohmann::json::parse(o.json, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["schema_version"], report::kSnapshotSchemaVersion);
}

std::string Name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string n = info.param.filename().string();
  for (char& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, SnapshotGolden, ::testing::ValuesIn(ScenarioDirs()), Name);

}  // namespace
}  // namespace gpuattr::testing
