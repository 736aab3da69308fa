// Where tests find the project's fixtures and the read-only real captures beside the checkout.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace gpuattr::testing {

std::filesystem::path SourceDir();                               // the repository root
std::filesystem::path FixturePath(const std::string& relative);  // fixtures/<relative>
// ../shared/fixtures-real when it exists (tests must still pass without it).
std::optional<std::filesystem::path> RealFixturesDir();
std::string ReadFile(const std::filesystem::path& path);  // throws std::runtime_error if unreadable
// The value of `key` in this build's CMakeCache.txt (e.g. CMAKE_COMMAND, CMAKE_CPACK_COMMAND: the
// tools of the cmake that configured it), else `fallback`.
std::string CMakeCacheEntry(const std::string& key, const std::string& fallback);
// The daemon the tests start: $GPUATTR_TEST_DAEMON when set (the POSIX variant's e2e tests name
// build/posix/gpuattr, tests/CMakeLists.txt), else this build's gpuattr.
std::string DaemonBinary();

}  // namespace gpuattr::testing
