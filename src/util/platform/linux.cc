// The Linux implementation of util/platform.h: every descriptor is made close-on-exec (and
// non-blocking) by the call that makes it, so no child can inherit it.
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "gpuattr/util/platform.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace gpuattr::platform {

std::string_view Name() { return "linux"; }

Result<Pipe> OpenPipe(bool nonblocking) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | (nonblocking ? O_NONBLOCK : 0)) != 0)
    return MakeError(ErrorCode::kInternal, std::string("pipe: ") + std::strerror(errno));
  return Pipe{fds[0], fds[1]};
}

Result<int> OpenSocket(int family, int type, int protocol) {
  int fd = ::socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
  if (fd < 0)
    return MakeError(ErrorCode::kUnavailable, std::string("socket: ") + std::strerror(errno));
  return fd;
}

Accepted Accept(int listen_fd, sockaddr_storage& from) {
  socklen_t len = sizeof from;
  int fd =
      ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&from), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
  return fd >= 0 ? Accepted{fd, 0} : Accepted{-1, errno};
}

std::unique_lock<std::mutex> LockForSpawn() { return {}; }

Result<Waker> Waker::Open() {
  int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0)
    return MakeError(ErrorCode::kInternal, std::string("eventfd: ") + std::strerror(errno));
  Waker w;
  w.read_fd_ = w.write_fd_ = fd;
  return w;
}

void Waker::Wake() const {
  uint64_t one = 1;  // the counter only saturates after 2^64 - 2 wakes; EAGAIN is "awake" too
  [[maybe_unused]] ssize_t rc = ::write(write_fd_, &one, sizeof one);
}

void Waker::Drain() const {
  uint64_t count;  // one read takes the whole count and resets it
  [[maybe_unused]] ssize_t rc = ::read(read_fd_, &count, sizeof count);
}

void Waker::Close() {
  if (read_fd_ >= 0) ::close(read_fd_);
  read_fd_ = write_fd_ = -1;
}

Status ForbidCoreDumps() {
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
    return MakeError(ErrorCode::kInternal,
                     std::string("prctl PR_SET_DUMPABLE: ") + std::strerror(errno));
  return Status::Ok();
}

void TuneAllocator() {
#if defined(__GLIBC__)
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
#endif
}

void ReleaseFreeMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace gpuattr::platform
