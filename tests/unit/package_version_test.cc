// The version packages and tarballs carry, from `git describe` (scripts/package-version.cmake,
// docs/install.md#versions): releases, commits after a release, no tag yet, no git, dirty trees.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "gpuattr/build_info.h"
#include "test_paths.h"

namespace gpuattr::testing {
namespace {

// What the script prints for `describe` with project version 0.1.0 (cmake -P writes to stderr).
std::string PackageVersion(const std::string& describe) {
  const std::string cmd = "cmake -DPROJECT=0.1.0 '-DDESCRIBE=" + describe + "' -P '" +
                          GPUATTR_SOURCE_DIR "/scripts/package-version.cmake' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "popen failed";
  std::string out;
  std::array<char, 256> buf{};
  while (fgets(buf.data(), buf.size(), p) != nullptr) out += buf.data();
  const int status = pclose(p);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "cmake failed: " + out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

TEST(PackageVersion, FromGitDescribe) {
  EXPECT_EQ(PackageVersion("v0.2.0"), "0.2.0");
  EXPECT_EQ(PackageVersion("v0.2.0-3-g0123456789ab"), "0.2.0+3.g0123456789ab");
  EXPECT_EQ(PackageVersion("v0.2.0-3-g0123456789ab-dirty"), "0.2.0+3.g0123456789ab.dirty");
  EXPECT_EQ(PackageVersion("0123456789ab"), "0.1.0~g0123456789ab");
  EXPECT_EQ(PackageVersion("0123456789ab-dirty"), "0.1.0~g0123456789ab.dirty");
  EXPECT_EQ(PackageVersion(""), "0.1.0");
  // A tag outside the scheme (not vMAJOR.MINOR.PATCH) leaves the project version.
  EXPECT_EQ(PackageVersion("release-7"), "0.1.0");
}

TEST(PackageVersion, BuiltIntoTheBinary) {
  const std::string v = build::kPackageVersion;
  EXPECT_FALSE(v.empty());
  EXPECT_EQ(
      v.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.+~"),
      std::string::npos)
      << v;
}

}  // namespace
}  // namespace gpuattr::testing
