// gpuattr-peak-rss FILE PROGRAM [ARGS...]: runs PROGRAM and writes its peak resident set (KiB) to
// FILE; exits as PROGRAM did (128 + signal when it was killed).
//
// Why a process of its own: the kernel keeps a process's ru_maxrss across exec, starting from the
// address space it exec'ed from. A test that spawns gpuattr directly (posix_spawn shares the
// test's memory until exec) would read its own peak into gpuattr's. This program is small, and
// forks before exec, so what it reports is gpuattr's peak (or this program's few MiB, whichever
// is larger).
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: gpuattr-peak-rss FILE PROGRAM [ARGS...]\n");
    return 125;
  }
  const pid_t pid = fork();
  if (pid < 0) return 126;
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // a test that kills this program (timeout) kills it too
    execv(argv[2], argv + 2);
    _exit(127);
  }
  int status = 0;
  rusage ru{};
  while (wait4(pid, &status, 0, &ru) < 0)
    if (errno != EINTR) return 126;
  if (std::FILE* f = std::fopen(argv[1], "w")) {
    std::fprintf(f, "%ld\n", ru.ru_maxrss);
    std::fclose(f);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
