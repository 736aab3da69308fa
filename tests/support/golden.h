// Golden files: compare generated text with a checked-in expectation, or regenerate it.
//
//   auto r = gpuattr::testing::CompareGolden(FixturePath("exporters/golden/x.txt"), text);
//   EXPECT_TRUE(r.ok) << r.message;
//
// With UPDATE_GOLDEN=1 in the environment the file is (re)written instead and the comparison
// passes; review the change with `git diff`.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace gpuattr::testing {

struct GoldenResult {
  bool ok = false;
  std::string message;  // on mismatch: the file, a line diff (-golden +actual), how to update
};

bool UpdateGoldenRequested();  // UPDATE_GOLDEN is set to something other than "" or "0"

GoldenResult CompareGolden(const std::filesystem::path& golden_path, std::string_view actual);

// A line diff of two texts, "-" lines only in `expected`, "+" lines only in `actual`, with a
// little context; at most `max_lines` lines of output. Empty when equal.
std::string LineDiff(std::string_view expected, std::string_view actual, size_t max_lines = 60);

}  // namespace gpuattr::testing
