// The few calls that differ between Linux and the other POSIX systems (macOS, the BSDs), in one
// place. Two implementations with the same tests (tests/unit/util_platform_test.cc):
// src/util/platform/linux.cc (eventfd, accept4, pipe2, SOCK_CLOEXEC, malloc_trim, prctl) and
// src/util/platform/posix.cc (POSIX.1-2008 calls only). CMake picks one when configuring:
// GPUATTR_POSIX_ONLY, on by itself off Linux (docs/install.md#other-systems).
#pragma once

#include <sys/socket.h>

#include <mutex>
#include <string_view>
#include <utility>

#include "gpuattr/util/status.h"

namespace gpuattr::platform {

// "linux" or "posix": the implementation this binary was linked with.
std::string_view Name();

// The two ends of a pipe, both close-on-exec.
struct Pipe {
  int read_fd = -1;
  int write_fd = -1;
};

// A pipe whose ends are close-on-exec, and non-blocking when `nonblocking`.
Result<Pipe> OpenPipe(bool nonblocking);

// socket(2) for a non-blocking, close-on-exec socket.
Result<int> OpenSocket(int family, int type, int protocol);

// What Accept gives: the connection's socket, or the errno of accept(2) (the caller branches on
// it: EAGAIN means no connection waits, ECONNABORTED one that went away).
struct Accepted {
  int fd = -1;
  int error = 0;  // errno when fd < 0
};

// accept(2) on a listening socket: the new socket is non-blocking and close-on-exec; `from`
// receives the peer's address.
Accepted Accept(int listen_fd, sockaddr_storage& from);

// The send(2) flag that keeps a write to a connection the peer closed from raising SIGPIPE:
// MSG_NOSIGNAL (POSIX.1-2008), or none where the headers lack it (macOS, unless _DARWIN_C_SOURCE):
// there the sockets of OpenSocket and Accept carry SO_NOSIGPIPE instead.
#if defined(MSG_NOSIGNAL)
inline constexpr int kSendNoSignal = MSG_NOSIGNAL;
#else
inline constexpr int kSendNoSignal = 0;
#endif

// Held while a child process is started (posix_spawn): no descriptor that this file makes is then
// between its creation and its FD_CLOEXEC. Holds nothing on Linux, where they are made
// close-on-exec atomically.
std::unique_lock<std::mutex> LockForSpawn();

// Wakes a thread out of poll(2): an eventfd on Linux, a self-pipe elsewhere. fd() is readable
// from the first Wake() until Drain(). Wake() is one write(2) that never blocks, so a signal
// handler may call it.
class Waker {
 public:
  static Result<Waker> Open();

  Waker() = default;
  Waker(Waker&& other) noexcept
      : read_fd_(std::exchange(other.read_fd_, -1)),
        write_fd_(std::exchange(other.write_fd_, -1)) {}
  Waker& operator=(Waker&& other) noexcept {
    if (this != &other) {
      Close();
      read_fd_ = std::exchange(other.read_fd_, -1);
      write_fd_ = std::exchange(other.write_fd_, -1);
    }
    return *this;
  }
  Waker(const Waker&) = delete;
  Waker& operator=(const Waker&) = delete;
  ~Waker() { Close(); }

  int fd() const { return read_fd_; }  // poll for POLLIN; -1 before Open
  void Wake() const;
  void Drain() const;

 private:
  void Close();
  int read_fd_ = -1;
  int write_fd_ = -1;  // the same descriptor as read_fd_ for an eventfd
};

// No core file, and (on Linux) no ptrace or /proc/PID/mem by other processes of the same user:
// prctl(PR_SET_DUMPABLE, 0) on Linux; elsewhere only RLIMIT_CORE 0 (docs/security.md#the-process).
Status ForbidCoreDumps();

// The daemon's resident memory (docs/design.md#targets: peak RSS <= 200 MB at 1,000 nodes; where
// it goes: README, Performance). A cycle allocates from up to scrape.concurrency fetch threads and
// frees it when the next cycle's output replaces it; glibc keeps one malloc arena per thread (up to
// 8 per core), each keeping its freed pages resident.
// At start: at most 2 arenas, unless MALLOC_ARENA_MAX is set (glibc reads it itself). Nothing
// where the allocator is not glibc's, nor in the POSIX implementation.
void TuneAllocator();

// After a cycle, before its rendering, and after the publication: hands the free pages of every
// arena back to the kernel (glibc's malloc_trim). Nothing elsewhere: the allocators of macOS and
// the BSDs give free pages back on their own.
void ReleaseFreeMemory();

}  // namespace gpuattr::platform
