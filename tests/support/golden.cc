#include "support/golden.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace gpuattr::testing {
namespace {

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

struct Edit {
  char op;  // ' ', '-', '+'
  std::string_view line;
  size_t expected_line;  // 1-based line in the golden file (0 for '+')
};

// Longest-common-subsequence diff; golden files are small, so O(n·m) is fine. Larger inputs fall
// back to a positional comparison.
std::vector<Edit> Diff(const std::vector<std::string_view>& a,
                       const std::vector<std::string_view>& b) {
  std::vector<Edit> edits;
  const size_t n = a.size(), m = b.size();
  if (n * m > 16'000'000) {
    for (size_t i = 0; i < std::max(n, m); ++i) {
      if (i < n && i < m && a[i] == b[i]) {
        edits.push_back({' ', a[i], i + 1});
        continue;
      }
      if (i < n) edits.push_back({'-', a[i], i + 1});
      if (i < m) edits.push_back({'+', b[i], 0});
    }
    return edits;
  }
  std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (m + 1) + j]; };
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;) {
      at(i, j) = a[i] == b[j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    }
  }
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      edits.push_back({' ', a[i], i + 1});
      ++i, ++j;
    } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
      edits.push_back({'-', a[i], i + 1});  // deletions before insertions, as diff(1) does
      ++i;
    } else {
      edits.push_back({'+', b[j++], 0});
    }
  }
  return edits;
}

}  // namespace

bool UpdateGoldenRequested() {
  const char* v = std::getenv("UPDATE_GOLDEN");
  return v != nullptr && std::string_view(v) != "" && std::string_view(v) != "0";
}

std::string LineDiff(std::string_view expected, std::string_view actual, size_t max_lines) {
  if (expected == actual) return "";
  const auto edits = Diff(SplitLines(expected), SplitLines(actual));
  constexpr size_t kContext = 2;
  std::vector<bool> show(edits.size(), false);
  for (size_t k = 0; k < edits.size(); ++k) {
    if (edits[k].op == ' ') continue;
    const size_t lo = k >= kContext ? k - kContext : 0;
    const size_t hi = std::min(edits.size(), k + kContext + 1);
    for (size_t x = lo; x < hi; ++x) show[x] = true;
  }
  std::string out;
  size_t written = 0;
  bool gap = false;
  for (size_t k = 0; k < edits.size(); ++k) {
    if (!show[k]) {
      gap = true;
      continue;
    }
    if (written >= max_lines) {
      out += "... (diff truncated)\n";
      break;
    }
    if (gap || written == 0) {
      // Locate the hunk by the next golden line number.
      size_t line = 0;
      for (size_t x = k; x < edits.size() && line == 0; ++x) line = edits[x].expected_line;
      out += "@@ golden line " + (line ? std::to_string(line) : std::string("end")) + " @@\n";
      gap = false;
    }
    out += edits[k].op;
    out.append(edits[k].line);
    out += '\n';
    ++written;
  }
  if (!expected.empty() && !actual.empty() &&
      (expected.back() == '\n') != (actual.back() == '\n')) {
    out += "(the texts differ in their final newline)\n";
  }
  return out;
}

GoldenResult CompareGolden(const std::filesystem::path& golden_path, std::string_view actual) {
  if (UpdateGoldenRequested()) {
    std::error_code ec;
    std::filesystem::create_directories(golden_path.parent_path(), ec);
    std::ofstream outf(golden_path, std::ios::binary | std::ios::trunc);
    outf.write(actual.data(), static_cast<std::streamsize>(actual.size()));
    if (!outf) return {false, "cannot write golden file " + golden_path.string()};
    return {true, ""};
  }
  std::ifstream in(golden_path, std::ios::binary);
  if (!in) {
    return {false, "golden file " + golden_path.string() +
                       " is missing; run the test with UPDATE_GOLDEN=1 to create it"};
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string expected = ss.str();
  if (expected == actual) return {true, ""};
  return {false,
          "output differs from golden file " + golden_path.string() + " (-golden +actual):\n" +
              LineDiff(expected, actual) +
              "If the change is intended, rerun with UPDATE_GOLDEN=1 and review `git diff`."};
}

}  // namespace gpuattr::testing
