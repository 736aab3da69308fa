// Reading, moving aside and rewriting the state file; see state_file.h for the failure rules.
#include "gpuattr/ledger/state_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <istream>

#include "gpuattr/ledger/atomic_file.h"
#include "gpuattr/util/log.h"
#include "gpuattr/util/status.h"

namespace gpuattr::ledger {
namespace {

namespace fs = std::filesystem;

// "<path>.bad-20261130T031700Z", with a counter when that name is taken.
std::string AsideName(const std::string& path) {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  std::string name = path + ".bad-" + stamp;
  std::error_code ec;
  for (int i = 1; i < 1000 && fs::exists(name, ec); ++i)
    name = path + ".bad-" + stamp + "-" + std::to_string(i);
  return name;
}

// The file's bytes, or an error when it holds more than kMaxStateFileBytes (read up to one byte
// past the cap, so a file growing after a stat cannot get past it).
Result<std::string> ReadBounded(std::istream& in) {
  std::string text;
  char chunk[1 << 16];
  while (text.size() <= kMaxStateFileBytes && in.read(chunk, sizeof chunk).gcount() > 0)
    text.append(chunk, static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxStateFileBytes)
    return MakeError(ErrorCode::kInvalidArgument, "the file is larger than the " +
                                                      std::to_string(kMaxStateFileBytes >> 20) +
                                                      " MiB a state file may have");
  return text;
}

}  // namespace

std::shared_ptr<StateFile> StateFile::Open(std::string path, bool writable) {
  std::shared_ptr<StateFile> f(new StateFile(std::move(path), writable));
  f->Read();
  return f;
}

Result<std::shared_ptr<StateFile>> StateFile::OpenExclusive(std::string path) {
  std::shared_ptr<StateFile> f(new StateFile(std::move(path), true));
  GPUATTR_RETURN_IF_ERROR(f->Lock());
  f->Read();
  return f;
}

void StateFile::Read() {
  std::error_code ec;
  const auto status = fs::status(path_, ec);
  if (status.type() == fs::file_type::not_found) return;  // the normal first start
  if (!ec && status.type() != fs::file_type::regular) {
    log::Warn("the state file path is not a regular file; starting fresh", {{"path", path_}});
    return;
  }
  std::ifstream in(path_, std::ios::binary);
  if (ec || !in) {
    log::Warn("cannot read the state file; starting fresh",
              {{"path", path_}, {"err", ec ? ec.message() : std::strerror(errno)}});
    return;
  }
  auto text = ReadBounded(in);
  auto decoded =
      text.ok() ? DecodeStateFile(*text, &rightsizing_) : Result<StateFileContents>(text.error());
  if (decoded.ok()) {
    contents_ = std::move(*decoded);
    log::Info("state file read", {{"path", path_}, {"clusters", contents_.size()}});
    return;
  }
  if (!writable_) {
    log::Warn("state file is unusable; ignoring it (--once leaves it as it is)",
              {{"path", path_}, {"err", decoded.error().message}});
    return;
  }
  const std::string aside = AsideName(path_);
  fs::rename(path_, aside, ec);
  if (ec)
    log::Warn("state file is unusable and cannot be moved aside; starting fresh",
              {{"path", path_}, {"err", decoded.error().message}, {"rename_err", ec.message()}});
  else
    log::Warn("state file is unusable; moved it aside and starting fresh",
              {{"path", path_}, {"moved_to", aside}, {"err", decoded.error().message}});
}

Status StateFile::Lock() {
  std::lock_guard<std::mutex> lock(mu_);
  if (lock_fd_ >= 0) return Status::Ok();
  const std::string lock_path = path_ + ".lock";
  const std::string dir = fs::path(path_).parent_path().string();
  Status made = MakeDirectories(dir);
  int fd = made ? ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
  if (fd < 0) {
    log::Warn("cannot create the state file's lock; running without it",
              {{"path", lock_path}, {"err", made ? std::strerror(errno) : made.message()}});
    return Status::Ok();
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char buf[32] = {0};
    ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    if (err != EWOULDBLOCK) {
      log::Warn("cannot lock the state file; running without the lock",
                {{"path", lock_path}, {"err", std::strerror(err)}});
      return Status::Ok();
    }
    std::string holder(buf, n > 0 ? static_cast<size_t>(n) : 0);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    const bool pid = !holder.empty() && holder.find_first_not_of("0123456789") == std::string::npos;
    return MakeError(ErrorCode::kInvalidArgument,
                     "state file \"" + path_ + "\" is in use by another gpuattr" +
                         (pid ? " (pid " + holder + ")" : std::string()) + ", which holds \"" +
                         lock_path + "\"; give each gpuattr its own --state.file");
  }
  // Who holds it, for the message of a second gpuattr. Best effort.
  const std::string me = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) {
    ssize_t w = ::pwrite(fd, me.data(), me.size(), 0);
    (void)w;
  }
  lock_fd_ = fd;
  return Status::Ok();
}

StateFile::~StateFile() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

LedgerState StateFile::Load(const std::string& cluster) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = contents_.find(cluster);
  return it == contents_.end() ? LedgerState{} : it->second;
}

rightsizing::RightsizingState StateFile::LoadRightsizing(const std::string& cluster) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = rightsizing_.find(cluster);
  return it == rightsizing_.end() ? rightsizing::RightsizingState{} : it->second;
}

StateFile::Sections StateFile::Take(const std::string& cluster) {
  std::lock_guard<std::mutex> lock(mu_);
  Sections out;
  if (auto it = contents_.find(cluster); it != contents_.end()) {
    out.ledger = std::move(it->second);
    contents_.erase(it);
  }
  if (auto it = rightsizing_.find(cluster); it != rightsizing_.end()) {
    out.rightsizing = std::move(it->second);
    rightsizing_.erase(it);
  }
  taken_.insert(cluster);
  return out;
}

void StateFile::Save(const std::string& cluster, const LedgerState& state,
                     const rightsizing::RightsizingState* rightsizing) {
  std::lock_guard<std::mutex> lock(mu_);
  // Another session's write needs this section: keep a copy. A lone session's is written from
  // its own state.
  if (!taken_.contains(cluster) || taken_.size() > 1) {
    contents_[cluster] = state;
    if (rightsizing) rightsizing_[cluster] = *rightsizing;
  }
  if (!writable_) return;
  StateFileSections sections = SectionsOf(contents_, &rightsizing_);
  sections.clusters[cluster] = &state;
  if (rightsizing) sections.rightsizing[cluster] = rightsizing;
  // Written as it is encoded: the file is MBs at scale, its text never whole in memory.
  Status s = WriteFileAtomically(
      path_, [&](const PieceWriter& write) { EncodeStateFile(sections, write); });
  if (!s && !write_failing_)
    log::Warn(
        "cannot write the state file; idle runs and energy counters will not survive a "
        "restart (warning once until it works)",
        {{"path", path_}, {"err", s.message()}});
  if (s && write_failing_) log::Info("state file written again", {{"path", path_}});
  write_failing_ = !s;
}

bool StateFile::write_failing() const {
  std::lock_guard<std::mutex> lock(mu_);
  return write_failing_;
}

}  // namespace gpuattr::ledger
