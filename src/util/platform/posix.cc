// The POSIX.1-2008 implementation of util/platform.h, for macOS and the BSDs (and, configured with
// GPUATTR_POSIX_ONLY=ON, for testing on Linux). Descriptors are made first and marked
// close-on-exec (and non-blocking) with fcntl after. A child started between the two would inherit
// one (a plugin holding our listening socket or the write end of another plugin's stdout pipe,
// whose reader would then wait for its end of file until the timeout): every descriptor made here
// is made under a process-wide lock, and the one place that starts children (kube/exec_plugin.cc)
// holds it around posix_spawn. Descriptors made by libraries (cpp-httplib's client sockets,
// OpenSSL's files) are outside it, as they are outside the Linux implementation's atomic flags.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "gpuattr/util/platform.h"

namespace gpuattr::platform {
namespace {

std::mutex& SpawnMutex() {
  static std::mutex m;
  return m;
}

// Sets FD_CLOEXEC and, when asked, O_NONBLOCK; false with errno set when fcntl failed.
bool Configure(int fd, bool nonblocking) {
  if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) return false;
  if (!nonblocking) return true;
  int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

// No SIGPIPE for a write to a peer that went away, where the system has a socket option for it
// (macOS and the BSDs; they may lack MSG_NOSIGNAL). The daemon ignores SIGPIPE anyway
// (app/shutdown.cc) and the server's socket thread blocks it.
void NoSigPipe([[maybe_unused]] int fd) {
#if defined(SO_NOSIGPIPE)
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
}

}  // namespace

std::string_view Name() { return "posix"; }

Result<Pipe> OpenPipe(bool nonblocking) {
  std::lock_guard<std::mutex> lock(SpawnMutex());
  int fds[2];
  if (::pipe(fds) != 0)
    return MakeError(ErrorCode::kInternal, std::string("pipe: ") + std::strerror(errno));
  if (!Configure(fds[0], nonblocking) || !Configure(fds[1], nonblocking)) {
    const int saved = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return MakeError(ErrorCode::kInternal, std::string("pipe: fcntl: ") + std::strerror(saved));
  }
  return Pipe{fds[0], fds[1]};
}

Result<int> OpenSocket(int family, int type, int protocol) {
  std::lock_guard<std::mutex> lock(SpawnMutex());
  int fd = ::socket(family, type, protocol);
  if (fd < 0 || !Configure(fd, true)) {
    const int saved = errno;
    if (fd >= 0) ::close(fd);
    return MakeError(ErrorCode::kUnavailable, std::string("socket: ") + std::strerror(saved));
  }
  NoSigPipe(fd);
  return fd;
}

Accepted Accept(int listen_fd, sockaddr_storage& from) {
  // The listening socket is non-blocking, so the lock is held for no longer than a system call.
  std::lock_guard<std::mutex> lock(SpawnMutex());
  socklen_t len = sizeof from;
  int fd = ::accept(listen_fd, reinterpret_cast<sockaddr*>(&from), &len);
  if (fd < 0) return {-1, errno};
  // Set explicitly: whether the new socket inherits O_NONBLOCK differs between systems.
  if (!Configure(fd, true)) {
    const int saved = errno;
    ::close(fd);
    return {-1, saved};
  }
  NoSigPipe(fd);
  return {fd, 0};
}

std::unique_lock<std::mutex> LockForSpawn() { return std::unique_lock<std::mutex>(SpawnMutex()); }

Result<Waker> Waker::Open() {
  auto pipe = OpenPipe(true);
  if (!pipe.ok()) return pipe.error();
  Waker w;
  w.read_fd_ = pipe->read_fd;
  w.write_fd_ = pipe->write_fd;
  return w;
}

void Waker::Wake() const {
  char b = 1;  // a full pipe (EAGAIN) is already awake
  [[maybe_unused]] ssize_t rc = ::write(write_fd_, &b, 1);
}

void Waker::Drain() const {
  char buf[256];
  while (::read(read_fd_, buf, sizeof buf) > 0) {
  }
}

void Waker::Close() {
  if (read_fd_ >= 0) ::close(read_fd_);
  if (write_fd_ >= 0) ::close(write_fd_);
  read_fd_ = write_fd_ = -1;
}

// Without prctl there is no portable way to refuse a same-user ptrace; a core limit of 0 (soft and
// hard, so no child can raise it) keeps the secrets out of core files at least (macOS, the BSDs;
// on Linux a core_pattern that pipes to a program ignores it: the Linux implementation uses prctl).
Status ForbidCoreDumps() {
  rlimit none{0, 0};
  if (::setrlimit(RLIMIT_CORE, &none) != 0)
    return MakeError(ErrorCode::kInternal,
                     std::string("setrlimit RLIMIT_CORE: ") + std::strerror(errno));
  return Status::Ok();
}

void TuneAllocator() {}

void ReleaseFreeMemory() {}

}  // namespace gpuattr::platform
