// Each fixtures/exporters/*.prom → classification + the matching reader's readings, compared with
// fixtures/exporters/golden/NAME.txt. UPDATE_GOLDEN=1 regenerates; review with `git diff`.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "gpuattr/expo/parser.h"
#include "gpuattr/sources/classify.h"
#include "gpuattr/sources/dcgm.h"
#include "gpuattr/sources/inference.h"
#include "gpuattr/sources/process.h"
#include "support/golden.h"
#include "support/paths.h"
#include "support/readings_format.h"

namespace gpuattr::sources {
namespace {

namespace fs = std::filesystem;
using gpuattr::testing::CompareGolden;
using gpuattr::testing::FixturePath;
using gpuattr::testing::ReadFile;

// Our own exporter fixtures (the parser's `parser-*` files live there too and are not ours).
std::vector<fs::path> ExporterFixtures() {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(FixturePath("exporters"))) {
    const fs::path& p = entry.path();
    if (p.extension() != ".prom" || p.filename().string().starts_with("parser-")) continue;
    out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The whole pipeline this module owns, as text: classification, parse damage, readings.
std::string Describe(std::string_view body) {
  Classification c = ClassifyBody(body);
  expo::Exposition e;
  expo::Parse(body, e);
  std::string out = "kind " + std::string(BodyKindName(c.kind)) + "\nreason " + c.reason + "\n";
  out += "parse_errors " + std::to_string(e.error_count);
  for (const expo::ParseError& err : e.errors) out += " line" + std::to_string(err.line);
  out += "\n";
  switch (c.kind) {
    case BodyKind::kDcgm:
      out += FormatReadings(ReadDcgm(e));
      break;
    case BodyKind::kProcess:
      out += FormatReadings(ReadProcess(e));
      break;
    case BodyKind::kVllm:
    case BodyKind::kSglang:
      out += FormatReadings(ReadInference(e));
      break;
    case BodyKind::kUnrecognised:
      break;
  }
  return out;
}

TEST(SourcesGolden, EveryExporterFixtureMatchesItsGolden) {
  const auto fixtures = ExporterFixtures();
  ASSERT_GE(fixtures.size(), 12u) << "fixtures/exporters lost files";
  for (const fs::path& p : fixtures) {
    SCOPED_TRACE(p.filename().string());
    const std::string body = ReadFile(p);
    const fs::path golden = p.parent_path() / "golden" / (p.stem().string() + ".txt");
    auto r = CompareGolden(golden, Describe(body));
    EXPECT_TRUE(r.ok) << r.message;
  }
}

TEST(SourcesGolden, NoGoldenWithoutAFixture) {
  std::set<std::string> stems;
  for (const fs::path& p : ExporterFixtures()) stems.insert(p.stem().string());
  for (const auto& entry : fs::directory_iterator(FixturePath("exporters/golden"))) {
    const std::string stem = entry.path().stem().string();
    if (stem.starts_with("parser-")) continue;
    EXPECT_TRUE(stems.count(stem)) << "orphan golden file " << entry.path().string();
  }
}

TEST(SourcesGolden, DescribeIsDeterministic) {
  for (const fs::path& p : ExporterFixtures()) {
    const std::string body = ReadFile(p);
    EXPECT_EQ(Describe(body), Describe(body)) << p;
  }
}

}  // namespace
}  // namespace gpuattr::sources
