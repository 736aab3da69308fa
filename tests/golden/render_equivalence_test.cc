// prometheus-cpp stays the reference (docs/design.md#serving-at-scale): every golden
// snapshot is rendered through prometheus-cpp's TextSerializer (over FamilyCollector) and through
// the streaming TextWriter (RenderText, what /metrics serves); both texts must hold the same
// families in the same order, the same HELP and TYPE, the same series in the same order with the
// same labels, and the same values. prometheus-cpp writes values with printf's %.16g, which can
// round off the 17th digit; the streaming writer writes the exact shortest digits, so a value
// matches when %.16g of the streamed value is the reference's text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <prometheus/text_serializer.h>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "golden/attribution_harness.h"
#include "golden/rich_snapshot.h"
#include "gpuattr/expo/parser.h"
#include "gpuattr/metrics/families.h"
#include "gpuattr/metrics/text_writer.h"
#include "support/family_collector.h"
#include "support/promtool.h"
#include "test_paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;

struct Series {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
  std::string value_text;
};

struct Family {
  std::string name, help, type;
  bool has_help = false;
  std::vector<Series> series;
};

std::string UnescapeHelp(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == '\\' || s[i + 1] == 'n')) {
      out += s[i + 1] == 'n' ? '\n' : '\\';
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The text, family by family. Every line must be a HELP, a TYPE or a sample of the family of the
// TYPE line above it; anything else fails the test.
std::vector<Family> Read(const std::string& text, const std::string& what) {
  std::vector<Family> out;
  std::istringstream in(text);
  std::string line;
  std::string pending_help;
  bool have_help = false;
  size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.starts_with("# HELP ")) {
      std::string rest = line.substr(7);
      size_t sp = rest.find(' ');
      pending_help = UnescapeHelp(sp == std::string::npos ? "" : rest.substr(sp + 1));
      have_help = true;
      continue;
    }
    if (line.starts_with("# TYPE ")) {
      std::istringstream t(line.substr(7));
      Family f;
      t >> f.name >> f.type;
      f.help = pending_help;
      f.has_help = have_help;
      have_help = false;
      out.push_back(std::move(f));
      continue;
    }
    expo::Exposition ex;
    const std::string body = line + "\n";  // the samples are views into it
    expo::Parse(body, ex);
    if (ex.samples.size() != 1 || !ex.errors.empty() || out.empty()) {
      ADD_FAILURE() << what << " line " << n << " is not a sample of a declared family: " << line;
      continue;
    }
    const expo::Sample& s = ex.samples[0];
    Series series;
    series.name = std::string(s.name);
    for (const expo::Label& l : ex.LabelsOf(s))
      series.labels.emplace_back(std::string(l.name), std::string(l.value));
    series.value = s.value;
    series.value_text = line.substr(line.rfind(' ') + 1);
    EXPECT_EQ(series.name, out.back().name) << what << " line " << n << " outside its family";
    out.back().series.push_back(std::move(series));
  }
  return out;
}

std::string Percent16g(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.16g", v);
  return buf;
}

bool SameValue(const Series& reference, const Series& streamed) {
  if (std::isnan(reference.value) || std::isnan(streamed.value))
    return std::isnan(reference.value) && std::isnan(streamed.value);
  return reference.value == streamed.value ||
         std::strtod(Percent16g(streamed.value).c_str(), nullptr) == reference.value;
}

std::string Describe(const Series& s) {
  std::string out = s.name + "{";
  for (const auto& [k, v] : s.labels) out += k + "=\"" + v + "\",";
  return out + "} " + s.value_text;
}

// The whole comparison; returns the number of series compared.
size_t ExpectEquivalent(const model::Snapshot& snapshot, const std::string& what) {
  const std::string reference =
      prometheus::TextSerializer().Serialize(metrics::BuildFamilies(snapshot));
  const std::string streamed = metrics::RenderText(snapshot);
  const std::vector<Family> ref = Read(reference, what + " (prometheus-cpp)");
  const std::vector<Family> got = Read(streamed, what + " (streamed)");
  std::vector<std::string> ref_names, got_names;
  for (const Family& f : ref) ref_names.push_back(f.name);
  for (const Family& f : got) got_names.push_back(f.name);
  EXPECT_EQ(got_names, ref_names) << what << ": families or their order differ";
  if (got_names != ref_names) return 0;
  size_t compared = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const Family& r = ref[i];
    const Family& g = got[i];
    EXPECT_EQ(g.type, r.type) << what << ": TYPE of " << r.name;
    EXPECT_EQ(g.has_help, r.has_help) << what << ": HELP line of " << r.name;
    EXPECT_EQ(g.help, r.help) << what << ": HELP of " << r.name;
    EXPECT_EQ(g.series.size(), r.series.size()) << what << ": series of " << r.name;
    for (size_t k = 0; k < std::min(g.series.size(), r.series.size()); ++k) {
      const Series& rs = r.series[k];
      const Series& gs = g.series[k];
      EXPECT_EQ(gs.labels, rs.labels) << what << ": " << Describe(gs) << " vs " << Describe(rs);
      EXPECT_TRUE(SameValue(rs, gs)) << what << ": " << Describe(gs) << " vs " << Describe(rs);
      ++compared;
    }
  }
  return compared;
}

model::Snapshot OneCluster(model::ClusterSnapshot c) {
  model::Snapshot s;
  s.complete = true;
  s.clusters.push_back(std::move(c));
  return s;
}

// A cluster whose latest cycle is the scenario through the daemon's stages (all groups).
model::ClusterSnapshot ScenarioCluster(const fs::path& dir, const std::string& cluster) {
  auto c = LoadAttributionCase(dir);
  EXPECT_TRUE(c.ok()) << dir << ": " << (c.ok() ? "" : c.error().message);
  model::ClusterSnapshot cs;
  cs.cluster = cluster;
  cs.cycles = 7;
  cs.cycle_duration_seconds = 0.125;
  cs.last_success_unix_seconds = cs.last_attempt_unix_seconds = 1764460800;
  cs.latest.up = true;
  cs.latest.apiserver_requests[{"list", "pods", "200"}] = 1;
  if (c.ok()) cs.latest.output = std::make_shared<model::CycleOutput>(RunCase(*c, cluster));
  return cs;
}

class RenderEquivalence : public ::testing::TestWithParam<fs::path> {};

TEST_P(RenderEquivalence, StreamedTextEqualsPrometheusCpp) {
  const model::Snapshot s = OneCluster(ScenarioCluster(GetParam(), "test"));
  EXPECT_GT(ExpectEquivalent(s, GetParam().filename().string()), 10u);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, RenderEquivalence,
                         ::testing::ValuesIn(AttributionScenarioDirs()),
                         [](const ::testing::TestParamInfo<fs::path>& info) {
                           std::string n = info.param.filename().string();
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(RenderEquivalenceSuite, ThereAreGoldenScenarios) {
  if (!fs::is_directory(fs::path(GPUATTR_SOURCE_DIR) / "fixtures" / "scenarios"))
    GTEST_SKIP() << "no fixtures";
  EXPECT_GE(AttributionScenarioDirs().size(), 5u);
}

TEST(RenderEquivalenceSuite, RichSnapshotOfEveryFamily) {
  const model::Snapshot s = RichSnapshot();
  EXPECT_GT(ExpectEquivalent(s, "rich"), 50u);
}

// Several clusters: each group adds one cluster's families after the other, the writer must still
// put each family's series together, in table order, as the reference does.
TEST(RenderEquivalenceSuite, EveryScenarioAsOneClusterOfOneSnapshot) {
  model::Snapshot s;
  s.complete = true;
  for (const fs::path& dir : AttributionScenarioDirs())
    s.clusters.push_back(ScenarioCluster(dir, dir.filename().string()));
  for (model::ClusterSnapshot& c : RichSnapshot().clusters) s.clusters.push_back(c);
  EXPECT_GT(ExpectEquivalent(s, "all scenarios"), 100u);
}

TEST(RenderEquivalenceSuite, StreamedTextIsPromtoolClean) {
  model::Snapshot s = RichSnapshot();
  for (const fs::path& dir : AttributionScenarioDirs())
    s.clusters.push_back(ScenarioCluster(dir, dir.filename().string()));
  auto lint = PromtoolCheckMetrics(metrics::RenderText(s));
  if (!lint.available) GTEST_SKIP() << "/usr/bin/promtool is not installed";
  EXPECT_EQ(lint.exit_code, 0) << lint.printed;
  EXPECT_EQ(lint.printed, "");
}

}  // namespace
}  // namespace gpuattr::testing
