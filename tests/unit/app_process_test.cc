#include "gpuattr/app/process.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace gpuattr::app {
namespace {

// The dumpable flag after KeepSecretsOutOfCoreDumps(allow), read in a child so that the test
// process itself keeps its own (sanitizers and debuggers rely on it).
int DumpableAfter(bool allow) {
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    if (!KeepSecretsOutOfCoreDumps(allow).ok()) _exit(100);
    _exit(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(KeepSecretsOutOfCoreDumps, TurnsDumpsOffUnlessAllowed) {
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
