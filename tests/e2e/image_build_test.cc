// The Dockerfile builds (docs/deploy.md): with Debian's buildah on vfs storage, no daemon, where
// the machine allows it and GPUATTR_BUILD_IMAGE=1 asks for it; otherwise the test says why it
// skipped. Not in CI: the build compiles gpuattr from scratch in the container (no ccache), 12-17
// min on the 2-core machine, which does not fit CI's time budget next to the other builds.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>

#include "test_paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;

// The last line `cmd` printed (stdout and stderr), and whether it exited 0.
std::pair<bool, std::string> LastLine(const std::string& cmd) {
  FILE* p = popen(("(" + cmd + ") 2>&1").c_str(), "r");
  if (p == nullptr) return {false, "popen failed"};
  std::string last;
  std::array<char, 1024> buf{};
  while (fgets(buf.data(), buf.size(), p) != nullptr)
    if (buf[0] != '\n') last = buf.data();
  const int status = pclose(p);
  while (!last.empty() && last.back() == '\n') last.pop_back();
  return {WIFEXITED(status) && WEXITSTATUS(status) == 0, last};
}

TEST(ImageBuild, DockerfileBuildsWithBuildah) {
  const char* asked = std::getenv("GPUATTR_BUILD_IMAGE");
  if (asked == nullptr || std::string(asked) != "1")
    GTEST_SKIP() << "set GPUATTR_BUILD_IMAGE=1 to build the image: it compiles gpuattr from "
                    "scratch in a container (no ccache), beyond CI's time budget";
  if (!fs::exists("/usr/bin/buildah"))
    GTEST_SKIP() << "/usr/bin/buildah is not installed (apt-get install buildah)";
  const std::string storage = "--storage-driver vfs";
  // The FROM images: in the local storage, else pulled. Where no registry is reachable (where this
  // project is developed), scripts/image-base-from-debootstrap.sh makes them.
  for (const std::string base :
       {"docker.io/library/debian:12", "docker.io/library/debian:12-slim"}) {
    if (std::system(("buildah " + storage + " inspect --type image " + base + " >/dev/null 2>&1")
                        .c_str()) == 0)
      continue;
    const auto [pulled, last] = LastLine("buildah " + storage + " pull -q " + base);
    if (!pulled)
      GTEST_SKIP() << base << " is not in buildah's storage and cannot be pulled (" << last
                   << "); scripts/image-base-from-debootstrap.sh makes it from Debian's mirror";
  }
  const std::string tag = "localhost/gpuattr:image-build-test";
  const std::string build = "cd " GPUATTR_SOURCE_DIR " && buildah " + storage +
                            " bud --isolation chroot -t " + tag + " . >&2";
  ASSERT_EQ(std::system(build.c_str()), 0) << build;
  const std::string run = "ctr=$(buildah " + storage + " from " + tag + ") && buildah " + storage +
                          " run --isolation chroot \"$ctr\" -- /usr/local/bin/gpuattr --version; "
                          "rc=$?; buildah " +
                          storage + " rm \"$ctr\" >/dev/null; exit $rc";
  const int status = std::system(("bash -c '" + run + "'").c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << run;
}

}  // namespace
}  // namespace gpuattr::testing
