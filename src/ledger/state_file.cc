// Reading, moving aside and rewriting the state file; see state_file.h for the failure rules.
#include "gpuattr/ledger/state_file.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpuattr/ledger/atomic_file.h"
#include "gpuattr/util/log.h"

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

}  // namespace

std::shared_ptr<StateFile> StateFile::Open(std::string path, bool writable) {
  std::shared_ptr<StateFile> f(new StateFile(std::move(path), writable));
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
  std::ostringstream text;
  text << in.rdbuf();
  auto decoded = DecodeStateFile(text.str());
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

LedgerState StateFile::Load(const std::string& cluster) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = contents_.find(cluster);
  return it == contents_.end() ? LedgerState{} : it->second;
}

void StateFile::Save(const std::string& cluster, const LedgerState& state) {
  std::lock_guard<std::mutex> lock(mu_);
  contents_[cluster] = state;
  if (!writable_) return;
  Status s = WriteFileAtomically(path_, EncodeStateFile(contents_));
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
