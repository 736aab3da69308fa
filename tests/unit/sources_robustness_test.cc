// The readers take whatever the parser accepted: mutated exporter bodies must never crash them
// and their counts must stay consistent. Deterministic (fixed seed) and bounded.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "gpuattr/expo/parser.h"
#include "gpuattr/sources/classify.h"
#include "gpuattr/sources/dcgm.h"
#include "gpuattr/sources/inference.h"
#include "gpuattr/sources/process.h"
#include "support/paths.h"
#include "support/readings_format.h"

namespace gpuattr::sources {
namespace {

namespace fs = std::filesystem;

std::string Mutate(const std::string& body, std::mt19937& rng) {
  std::string out = body;
  static const char kBytes[] = "{}\",=\n #\\ 0e+-.NaInf_:aZ\xff\x01";
  std::uniform_int_distribution<int> ops(1, 8);
  const int n = ops(rng);
  for (int i = 0; i < n && !out.empty(); ++i) {
    std::uniform_int_distribution<size_t> pos(0, out.size() - 1);
    std::uniform_int_distribution<size_t> byte(0, sizeof kBytes - 2);
    switch (rng() % 4) {
      case 0:  // flip a byte
        out[pos(rng)] = kBytes[byte(rng)];
        break;
      case 1:  // delete a span
        out.erase(pos(rng), rng() % 40);
        break;
      case 2:  // duplicate a span
      {
        const size_t p = pos(rng);
        out.insert(p, out.substr(p, rng() % 200));
        break;
      }
      default:  // truncate
        out.resize(pos(rng));
    }
  }
  return out;
}

void CheckStats(const ReadStats& s, size_t samples) {
  EXPECT_EQ(s.samples, samples);
  EXPECT_LE(s.samples_used + s.invalid_values + s.duplicate_samples + s.unkeyed_samples, samples);
  EXPECT_LE(s.ignored_family_names.size(), kMaxFamilyNamesKept);
  EXPECT_LE(s.unknown_family_names.size(), kMaxFamilyNamesKept);
}

TEST(SourcesRobustness, MutatedBodiesNeverBreakTheReaders) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(gpuattr::testing::FixturePath("exporters"))) {
    if (e.path().extension() == ".prom") files.push_back(e.path());
  }
  if (auto real = gpuattr::testing::RealFixturesDir()) {
    for (const auto& e : fs::directory_iterator(*real)) {
      if (e.path().extension() == ".prom") files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  std::mt19937 rng(20261130);
  for (const fs::path& f : files) {
    SCOPED_TRACE(f.filename().string());
    const std::string body = gpuattr::testing::ReadFile(f);
    for (int i = 0; i < 60; ++i) {
      const std::string mutated = Mutate(body, rng);
      Classification c = ClassifyBody(mutated);
      EXPECT_LE(c.reason.size(), 200u);
      expo::Exposition e;
      expo::Parse(mutated, e);
      DcgmReadings d = ReadDcgm(e);
      ProcessReadings p = ReadProcess(e);
      InferenceReadings inf = ReadInference(e);
      CheckStats(d.stats, e.samples.size());
      CheckStats(p.stats, e.samples.size());
      CheckStats(inf.stats, e.samples.size());
      for (const DcgmRecord& r : d.records) {
        EXPECT_TRUE(!r.device.gpu.empty() || !r.device.uuid.empty());
        if (r.pod) {
          EXPECT_TRUE(!r.pod->id.namespace_.empty() || !r.pod->id.name.empty());
        }
      }
      // The dumps never fail either (they feed logs and the status page).
      EXPECT_FALSE(FormatReadings(d).empty());
      EXPECT_FALSE(FormatReadings(p).empty());
      EXPECT_FALSE(FormatReadings(inf).empty());
    }
  }
}

}  // namespace
}  // namespace gpuattr::sources
