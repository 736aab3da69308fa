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
Status MakeDirectories(const fs::path& dir) {
  if (dir.empty()) return Status::Ok();
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return Status::Ok();
  if (Status s = MakeDirectories(dir.parent_path()); !s) return s;
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

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  const fs::path target(path);
  const fs::path dir = target.parent_path();
  if (Status s = MakeDirectories(dir); !s) return s;
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Failed("cannot create", tmp, errno);
  Status s = WriteAll(fd, contents, tmp);
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

}  // namespace gpuattr::ledger
