#include "support/paths.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include "test_paths.h"

namespace gpuattr::testing {

std::filesystem::path SourceDir() { return GPUATTR_SOURCE_DIR; }

std::filesystem::path FixturePath(const std::string& relative) {
  return SourceDir() / "fixtures" / relative;
}

std::optional<std::filesystem::path> RealFixturesDir() {
  auto dir = SourceDir().parent_path() / "shared" / "fixtures-real";
  if (std::filesystem::is_directory(dir)) return dir;
  return std::nullopt;
}

std::string CMakeCacheEntry(const std::string& key, const std::string& fallback) {
  std::ifstream cache(std::filesystem::path(GPUATTR_BINARY_DIR) / "CMakeCache.txt");
  const std::string prefix = key + ":INTERNAL=";
  std::string line;
  while (std::getline(cache, line))
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  return fallback;
}

std::string DaemonBinary() {
  const char* daemon = std::getenv("GPUATTR_TEST_DAEMON");
  return daemon && *daemon ? daemon : GPUATTR_BINARY_DIR "/gpuattr";
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace gpuattr::testing
