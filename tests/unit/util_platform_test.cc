// util/platform.h: the same tests for both implementations. The unit tests link the one the build
// chose; gpuattr_platform_tests_posix links the POSIX one next to Linux's (tests/CMakeLists.txt).
#include "gpuattr/util/platform.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <future>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace gpuattr::platform {
namespace {

using namespace std::chrono_literals;

bool CloseOnExec(int fd) { return (::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0; }
bool NonBlocking(int fd) { return (::fcntl(fd, F_GETFL) & O_NONBLOCK) != 0; }

bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

TEST(Platform, NameIsOneOfTheTwo) { EXPECT_TRUE(Name() == "linux" || Name() == "posix") << Name(); }

TEST(PlatformPipe, BothEndsCloseOnExecAndNonBlockingOnlyWhenAsked) {
  for (bool nonblocking : {false, true}) {
    auto pipe = OpenPipe(nonblocking);
    ASSERT_TRUE(pipe.ok()) << pipe.error().message;
    for (int fd : {pipe->read_fd, pipe->write_fd}) {
      EXPECT_TRUE(CloseOnExec(fd));
      EXPECT_EQ(NonBlocking(fd), nonblocking);
    }
    ASSERT_EQ(::write(pipe->write_fd, "x", 1), 1);
    char c = 0;
    EXPECT_EQ(::read(pipe->read_fd, &c, 1), 1);
    EXPECT_EQ(c, 'x');
    ::close(pipe->read_fd);
    ::close(pipe->write_fd);
  }
}

TEST(PlatformSocket, CloseOnExecAndNonBlocking) {
  auto fd = OpenSocket(AF_INET, SOCK_STREAM, 0);
  ASSERT_TRUE(fd.ok()) << fd.error().message;
  EXPECT_TRUE(CloseOnExec(*fd));
  EXPECT_TRUE(NonBlocking(*fd));
  ::close(*fd);
}

TEST(PlatformSocket, AnUnknownFamilyIsAnError) {
  auto fd = OpenSocket(-1, SOCK_STREAM, 0);
  ASSERT_FALSE(fd.ok());
  EXPECT_NE(fd.error().message.find("socket: "), std::string::npos) << fd.error().message;
}

// A listening socket on 127.0.0.1 (an ephemeral port) and its address.
struct Listener {
  int fd = -1;
  sockaddr_in addr{};
  ~Listener() {
    if (fd >= 0) ::close(fd);
  }
};

void Listen(Listener& l) {
  auto fd = OpenSocket(AF_INET, SOCK_STREAM, 0);
  ASSERT_TRUE(fd.ok()) << fd.error().message;
  l.fd = *fd;
  l.addr.sin_family = AF_INET;
  l.addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof l.addr;
  ASSERT_EQ(::bind(l.fd, reinterpret_cast<sockaddr*>(&l.addr), len), 0);
  ASSERT_EQ(::listen(l.fd, 4), 0);
  ASSERT_EQ(::getsockname(l.fd, reinterpret_cast<sockaddr*>(&l.addr), &len), 0);
}

TEST(PlatformAccept, NoConnectionIsEagainAndAConnectionComesCloseOnExecAndNonBlocking) {
  Listener l;
  ASSERT_NO_FATAL_FAILURE(Listen(l));
  sockaddr_storage from{};
  Accepted none = Accept(l.fd, from);
  EXPECT_EQ(none.fd, -1);
  EXPECT_TRUE(none.error == EAGAIN || none.error == EWOULDBLOCK) << none.error;

  // A blocking client: connect returns once the connection is in the backlog.
  int client = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(client, 0);
  ASSERT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&l.addr), sizeof l.addr), 0);
  pollfd p{l.fd, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  Accepted got = Accept(l.fd, from);
  ASSERT_GE(got.fd, 0) << got.error;
  EXPECT_EQ(got.error, 0);
  EXPECT_TRUE(CloseOnExec(got.fd));
  EXPECT_TRUE(NonBlocking(got.fd));
  ASSERT_EQ(from.ss_family, AF_INET);
  EXPECT_EQ(ntohl(reinterpret_cast<const sockaddr_in&>(from).sin_addr.s_addr), INADDR_LOOPBACK);
  // The accepted socket carries the client's bytes.
  ASSERT_EQ(::write(client, "hi", 2), 2);
  pollfd q{got.fd, POLLIN, 0};
  ASSERT_EQ(::poll(&q, 1, 5000), 1);
  char buf[2];
  EXPECT_EQ(::recv(got.fd, buf, 2, 0), 2);
  ::close(got.fd);
  ::close(client);
}

TEST(PlatformAccept, ANonListeningSocketIsAnError) {
  auto fd = OpenSocket(AF_INET, SOCK_STREAM, 0);
  ASSERT_TRUE(fd.ok());
  sockaddr_storage from{};
  Accepted got = Accept(*fd, from);
  EXPECT_EQ(got.fd, -1);
  EXPECT_EQ(got.error, EINVAL);
  ::close(*fd);
}

TEST(PlatformWaker, ReadableFromTheFirstWakeUntilDrained) {
  auto waker = Waker::Open();
  ASSERT_TRUE(waker.ok()) << waker.error().message;
  EXPECT_TRUE(CloseOnExec(waker->fd()));
  EXPECT_FALSE(Readable(waker->fd()));
  waker->Wake();
  EXPECT_TRUE(Readable(waker->fd()));
  EXPECT_TRUE(Readable(waker->fd()));  // polling takes nothing away
  waker->Drain();
  EXPECT_FALSE(Readable(waker->fd()));
  waker->Drain();  // nothing to drain: returns at once
  EXPECT_FALSE(Readable(waker->fd()));
}

TEST(PlatformWaker, ManyWakesNeverBlockAndOneDrainTakesThemAll) {
  auto waker = Waker::Open();
  ASSERT_TRUE(waker.ok());
  for (int i = 0; i < 200'000; ++i) waker->Wake();  // more bytes than a pipe holds
  EXPECT_TRUE(Readable(waker->fd()));
  waker->Drain();
  EXPECT_FALSE(Readable(waker->fd()));
}

const Waker* g_signal_waker = nullptr;
extern "C" void WakeFromSignal(int) { g_signal_waker->Wake(); }

TEST(PlatformWaker, WakesFromASignalHandler) {
  auto waker = Waker::Open();
  ASSERT_TRUE(waker.ok());
  g_signal_waker = &*waker;
  struct sigaction sa {
  }, old{};
  sa.sa_handler = WakeFromSignal;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
  ::raise(SIGUSR1);
  sigaction(SIGUSR1, &old, nullptr);
  g_signal_waker = nullptr;
  EXPECT_TRUE(Readable(waker->fd()));
}

TEST(PlatformWaker, MovesItsDescriptors) {
  auto opened = Waker::Open();
  ASSERT_TRUE(opened.ok());
  const int fd = opened->fd();
  Waker moved = std::move(*opened);
  EXPECT_EQ(opened->fd(), -1);
  EXPECT_EQ(moved.fd(), fd);
  moved.Wake();
  EXPECT_TRUE(Readable(fd));
  Waker other;
  other = std::move(moved);
  EXPECT_EQ(other.fd(), fd);
  EXPECT_EQ(moved.fd(), -1);
}

TEST(PlatformWaker, ClosesItsDescriptorsWhenDestroyed) {
  int fd = -1;
  {
    auto waker = Waker::Open();
    ASSERT_TRUE(waker.ok());
    fd = waker->fd();
    EXPECT_NE(::fcntl(fd, F_GETFD), -1);
  }
  // ctest runs each test in a process of its own: no other thread can have reused the number.
  EXPECT_EQ(::fcntl(fd, F_GETFD), -1);
  EXPECT_EQ(errno, EBADF);
}

// While a spawn holds the lock, the POSIX implementation makes no descriptor (it would be
// inheritable until its fcntl); Linux's holds nothing and needs none.
TEST(PlatformSpawnLock, PosixMakesNoDescriptorWhileASpawnHoldsIt) {
  auto lock = LockForSpawn();
  auto made = std::async(std::launch::async, [] {
    auto pipe = OpenPipe(false);
    if (pipe.ok()) {
      ::close(pipe->read_fd);
      ::close(pipe->write_fd);
    }
    return pipe.ok();
  });
  if (Name() == "linux") {
    EXPECT_FALSE(lock.owns_lock());
    ASSERT_EQ(made.wait_for(5s), std::future_status::ready);
  } else {
    EXPECT_TRUE(lock.owns_lock());
    EXPECT_EQ(made.wait_for(100ms), std::future_status::timeout);
    lock.unlock();
    ASSERT_EQ(made.wait_for(5s), std::future_status::ready);
  }
  EXPECT_TRUE(made.get());
}

// In a child, so that the test process keeps its own settings (sanitizers and debuggers rely on
// them): 0 when the child, after ForbidCoreDumps, dumps no core and (on Linux) is not dumpable.
int CoreDumpsAfterForbidding() {
  pid_t pid = fork();
  if (pid == 0) {
    rlimit some{RLIM_INFINITY, RLIM_INFINITY};
    getrlimit(RLIMIT_CORE, &some);
    some.rlim_cur = some.rlim_max;
    setrlimit(RLIMIT_CORE, &some);
#if defined(__linux__)
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
#endif
    if (!ForbidCoreDumps().ok()) _exit(100);
    if (Name() == "linux") {
#if defined(__linux__)
      _exit(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : 1);
#else
      _exit(101);
#endif
    }
    rlimit now{};
    if (getrlimit(RLIMIT_CORE, &now) != 0) _exit(102);
    _exit(now.rlim_cur == 0 && now.rlim_max == 0 ? 0 : 2);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(PlatformCoreDumps, ForbiddenAfterTheCall) {
  rlimit core{};
  ASSERT_EQ(getrlimit(RLIMIT_CORE, &core), 0);
  if (Name() == "posix" && core.rlim_max == 0)
    GTEST_SKIP() << "the core file limit is 0 already (hard): nothing left to see change";
  EXPECT_EQ(CoreDumpsAfterForbidding(), 0);
}

}  // namespace
}  // namespace gpuattr::platform
