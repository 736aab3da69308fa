#include "gpuattr/util/memory_limit.h"

#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

#include "gpuattr/util/strings.h"

namespace gpuattr {
namespace {

namespace fs = std::filesystem;

// v1 writes "no limit" as the largest page-aligned signed 64-bit value; anything this large is
// none.
constexpr uint64_t kUnlimited = uint64_t{1} << 60;

std::optional<uint64_t> ReadLimit(const fs::path& file) {
  std::ifstream in(file);
  std::string text;
  if (!in || !std::getline(in, text)) return std::nullopt;
  text = std::string(Trim(text));
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v >= kUnlimited) return std::nullopt;
  return v;
}

// The least of `file` in `dir` and in each of its parents up to `root`.
std::optional<uint64_t> LeastOnTheWay(const fs::path& root, std::string_view cgroup,
                                      std::string_view file) {
  std::optional<uint64_t> least;
  fs::path rel = fs::path(std::string(cgroup)).relative_path();
  for (;;) {
    if (auto v = ReadLimit(root / rel / file); v && (!least || *v < *least)) least = v;
    if (rel.empty()) break;
    rel = rel.parent_path();
  }
  return least;
}

}  // namespace

std::optional<uint64_t> CgroupMemoryLimit(std::string_view proc_self_cgroup, const fs::path& root) {
  std::optional<uint64_t> least;
  auto keep = [&](std::optional<uint64_t> v) {
    if (v && (!least || *v < *least)) least = v;
  };
  std::istringstream lines{std::string(proc_self_cgroup)};
  for (std::string line; std::getline(lines, line);) {
    // "hierarchy-ID:controller-list:cgroup-path"; v2's line is "0::/path".
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string_view controllers = std::string_view(line).substr(a + 1, b - a - 1);
    const std::string_view path = std::string_view(line).substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty()) {
      keep(LeastOnTheWay(root, path, "memory.max"));
      continue;
    }
    for (std::string_view rest = controllers; !rest.empty();) {
      const size_t comma = rest.find(',');
      if (rest.substr(0, comma) == "memory")
        keep(LeastOnTheWay(root / "memory", path, "memory.limit_in_bytes"));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  return least;
}

std::optional<uint64_t> ProcessMemoryLimit() {
  std::ifstream in("/proc/self/cgroup");
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return CgroupMemoryLimit(text.str(), "/sys/fs/cgroup");
}

}  // namespace gpuattr
