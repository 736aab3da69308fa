// The Dockerfile builds (docs/deploy.md): with Debian's buildah on vfs storage, no daemon, where
// the machine allows it and GPUATTR_BUILD_IMAGE=1 asks for it; otherwise the test says why it
// skipped. Not in CI: the build compiles gpuattr from scratch in the container (no ccache), which
// does not fit CI's time budget next to the other builds.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "test_paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;

TEST(ImageBuild, DockerfileBuildsWithBuildah) {
  const char* asked = std::getenv("GPUATTR_BUILD_IMAGE");
  if (asked == nullptr || std::string(asked) != "1")
    GTEST_SKIP() << "set GPUATTR_BUILD_IMAGE=1 to build the image: it compiles gpuattr from "
                    "scratch in a container (no ccache), beyond CI's time budget";
  if (!fs::exists("/usr/bin/buildah"))
    GTEST_SKIP() << "/usr/bin/buildah is not installed (apt-get install buildah)";
  const std::string storage = "--storage-driver vfs";
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
