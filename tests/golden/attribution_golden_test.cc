// Every fixtures/scenarios/attr-* scenario → the attribution families' exposition, compared with
// tests/golden/attribution_golden/NAME.prom. UPDATE_GOLDEN=1 regenerates; review with `git diff`.
// The same text must pass `promtool check metrics` silently (skipped when promtool is absent).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "golden/attribution_harness.h"
#include "support/golden.h"
#include "support/promtool.h"
#include "test_paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;

class AttributionGolden : public ::testing::TestWithParam<fs::path> {};

TEST_P(AttributionGolden, MatchesExposition) {
  auto c = LoadAttributionCase(GetParam());
  ASSERT_TRUE(c.ok()) << c.error().message;
  std::string text = RenderAttribution(RunCase(*c));
  auto golden = fs::path(GPUATTR_SOURCE_DIR) / "tests" / "golden" / "attribution_golden" /
                (c->name + ".prom");
  auto r = CompareGolden(golden, text);
  EXPECT_TRUE(r.ok) << r.message;
}

TEST_P(AttributionGolden, PromtoolCheckMetricsPrintsNothing) {
  auto c = LoadAttributionCase(GetParam());
  ASSERT_TRUE(c.ok()) << c.error().message;
  std::string text = RenderAttribution(RunCase(*c));
  ASSERT_FALSE(text.empty());
  auto lint = gpuattr::testing::PromtoolCheckMetrics(text);
  if (!lint.available) GTEST_SKIP() << "/usr/bin/promtool is not installed";
  EXPECT_EQ(lint.exit_code, 0) << lint.printed;
  EXPECT_EQ(lint.printed, "");
}

TEST_P(AttributionGolden, EverySeriesHasClusterAndNoEmptyLabel) {
  auto c = LoadAttributionCase(GetParam());
  ASSERT_TRUE(c.ok()) << c.error().message;
  std::string text = RenderAttribution(RunCase(*c, "prod-eu"));
  size_t series = 0, pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty() || line[0] == '#') continue;
    ++series;
    EXPECT_NE(line.find("cluster=\"prod-eu\""), std::string::npos) << line;
    EXPECT_EQ(line.find("=\"\""), std::string::npos) << line;
    EXPECT_EQ(line.find("Nan"), std::string::npos) << line;
  }
  EXPECT_GT(series, 10u);
}

TEST(AttributionPublish, RichAttributionExercisesEveryFamilyOfTheGroups) {
  static const std::set<std::string_view> kGroups = {"devices", "pods", "namespaces", "node_power",
                                                     "health"};
  std::set<std::string> tabled;
  for (const metrics::FamilyGroup* g : metrics::FamilyGroups())
    if (kGroups.count(g->name))
      for (const metrics::FamilySpec& f : g->families) tabled.insert(std::string(f.name));
  std::string text = RenderAttribution(RichOutput());
  for (const std::string& name : tabled)
    EXPECT_NE(text.find("\n" + name + "{"), std::string::npos) << name;
  EXPECT_EQ(tabled.size(), 35u);
}

std::string Name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string n = info.param.filename().string();
  for (char& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, AttributionGolden,
                         ::testing::ValuesIn(AttributionScenarioDirs()), Name);

}  // namespace
}  // namespace gpuattr::testing
