// Atomic file replacement with POSIX calls (std::ofstream cannot fsync).
#include "gpuattr/ledger/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace gpuattr::ledger {
namespace {

namespace fs = std::filesystem;

Status Failed(const std::string& what, const std::string& path, int err) {
  return MakeError(ErrorCode::kUnavailable, what + " \"" + path + "\": " + std::strerror(err));
}

// mkdir -p with mode 0700 for the directories it creates (existing ones are left alone).
Status MakeDirectoriesAt(const fs::path& dir) {
  if (dir.empty()) return Status::Ok();
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return Status::Ok();
  GPUATTR_RETURN_IF_ERROR(MakeDirectoriesAt(dir.parent_path()));
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return Failed("cannot create directory", dir.string(), errno);
  return Status::Ok();
}

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Failed("cannot write", path, errno);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

// Creates a new temporary file next to `path`: "<path>.tmp.<pid>", else (when that name is
// taken, e.g. by a stale file or a planted symlink) "<path>.tmp.<pid>.<n>". O_EXCL|O_NOFOLLOW:
// an existing file or symlink at the name is never opened, truncated or followed.
int CreateTemporary(const std::string& path, std::string& tmp) {
  const std::string base = path + ".tmp." + std::to_string(::getpid());
  for (int attempt = 0; attempt < 100; ++attempt) {
    tmp = attempt == 0 ? base : base + "." + std::to_string(attempt);
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  return WriteFileAtomically(path, [&](const PieceWriter& write) { write(contents); });
}

Status WriteFileAtomically(const std::string& path,
                           const std::function<void(const PieceWriter& write)>& produce) {
  const fs::path target(path);
  const fs::path dir = target.parent_path();
  GPUATTR_RETURN_IF_ERROR(MakeDirectoriesAt(dir));
  std::string tmp;
  int fd = CreateTemporary(path, tmp);
  if (fd < 0) return Failed("cannot create", tmp, errno);
  Status s = Status::Ok();
  produce([&](std::string_view piece) {
    if (s) s = WriteAll(fd, piece, tmp);
  });
  if (s && ::fsync(fd) != 0) s = Failed("cannot fsync", tmp, errno);
  if (::close(fd) != 0 && s) s = Failed("cannot close", tmp, errno);
  if (s && ::rename(tmp.c_str(), path.c_str()) != 0) s = Failed("cannot rename onto", path, errno);
  if (!s) {
    ::unlink(tmp.c_str());
    return s;
  }
  // Make the rename itself durable. A failure here loses nothing already written: ignore it.
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

Status MakeDirectories(const std::string& dir) { return MakeDirectoriesAt(fs::path(dir)); }

}  // namespace gpuattr::ledger
