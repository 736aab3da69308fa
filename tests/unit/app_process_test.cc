#include "gpuattr/app/process.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpuattr/util/platform.h"

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace gpuattr::app {
namespace {

// 1 when the process may still dump core after KeepSecretsOutOfCoreDumps(allow), 0 when not: the
// dumpable flag on Linux, the hard core file limit in the POSIX implementation (util/platform.h).
// Read in a child so that the test process itself keeps its own (sanitizers and debuggers rely on
// them).
int DumpableAfter(bool allow) {
  pid_t pid = fork();
  if (pid == 0) {
    const bool linux_calls = platform::Name() == "linux";
#if defined(__linux__)
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
#endif
    if (!KeepSecretsOutOfCoreDumps(allow).ok()) _exit(100);
    if (linux_calls) {
#if defined(__linux__)
      _exit(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
#else
      _exit(101);
#endif
    }
    rlimit core{};
    if (getrlimit(RLIMIT_CORE, &core) != 0) _exit(102);
    _exit(core.rlim_max != 0 ? 1 : 0);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(KeepSecretsOutOfCoreDumps, TurnsDumpsOffUnlessAllowed) {
  rlimit core{};
  ASSERT_EQ(getrlimit(RLIMIT_CORE, &core), 0);
  if (platform::Name() == "posix" && core.rlim_max == 0)
    GTEST_SKIP() << "the core file limit is 0 already (hard): nothing left to see change";
  EXPECT_EQ(DumpableAfter(false), 0);
  EXPECT_EQ(DumpableAfter(true), 1);
}

TEST(CoreDumpsAllowed, OnlyTheValueOne) {
  EXPECT_FALSE(CoreDumpsAllowed(nullptr));
  EXPECT_FALSE(CoreDumpsAllowed(""));
  EXPECT_FALSE(CoreDumpsAllowed("0"));
  EXPECT_FALSE(CoreDumpsAllowed("true"));
  EXPECT_TRUE(CoreDumpsAllowed("1"));
}

}  // namespace
}  // namespace gpuattr::app
