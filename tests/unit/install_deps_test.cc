// What scripts/install-deps.sh installs by purpose: after `scripts/run.sh` (build and runtime
// packages, the quick start), `cmake --build build --target package` (docs/install.md) works on a
// fresh Debian 12 machine. It did not: CPack's Debian generator needs `file`, then in the test
// list.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "support/paths.h"

namespace gpuattr::testing {
namespace {

// The words of the bash array `name=( ... )` in `script`, comments left out.
std::set<std::string> Packages(const std::string& script, const std::string& name) {
  std::set<std::string> words;
  const std::string open = "\n" + name + "=(";
  const size_t begin = script.find(open);
  if (begin == std::string::npos) return words;
  const size_t end = script.find("\n)", begin);
  if (end == std::string::npos) return words;
  std::istringstream lines(script.substr(begin + open.size(), end - begin - open.size()));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line.substr(0, line.find('#')));
    for (std::string word; in >> word;) words.insert(word);
  }
  return words;
}

TEST(InstallDeps, BuildPackagesMakeTheDebianPackage) {
  // The Depends come from dpkg-shlibdeps; with it on, CPackDeb stops with "file utility is not
  // available" where `file` is missing.
  ASSERT_NE(ReadFile(SourceDir() / "scripts/packaging.cmake")
                .find("set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)"),
            std::string::npos);
  const std::set<std::string> build =
      Packages(ReadFile(SourceDir() / "scripts/install-deps.sh"), "build");
  ASSERT_FALSE(build.empty()) << "no build=( ... ) in scripts/install-deps.sh";
  EXPECT_TRUE(build.count("file")) << "CPackDeb runs file";
  EXPECT_TRUE(build.count("build-essential"));  // dpkg-dev, which has dpkg-shlibdeps
  EXPECT_TRUE(build.count("cmake"));            // cpack
}

}  // namespace
}  // namespace gpuattr::testing
