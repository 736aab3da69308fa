// The process's state file: one JSON file (state_codec.h) with a section per cluster, shared by
// the sessions of all clusters (thread-safe). Read once at start; each successful cycle of a
// cluster replaces its section and rewrites the file atomically (atomic_file.h).
//
// One process per file: OpenExclusive takes an exclusive flock on "<path>.lock" (a separate file,
// since the state file itself is replaced by rename) before reading, and holds it until the
// StateFile is destroyed.
//
// Never fatal once locked: a missing file is a fresh start; a corrupt, truncated, foreign or
// oversized (kMaxStateFileBytes) file is
// moved aside to "<path>.bad-<UTC time>" with one warning naming both files, then a fresh start; a
// file that cannot be written is one warning naming the path (and one info line when writing
// works again), not one per cycle.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "gpuattr/ledger/state.h"
#include "gpuattr/ledger/state_codec.h"

namespace gpuattr::ledger {

// The largest state file read (a bigger one is unusable, as a corrupt one is). 16,000 pods with
// their GPU-hour counters take about 14 MB, 17.5 MB with 400 days of 20 namespaces
// (tests/bench/state_file_bench.cc); loading holds about 4.3 times the file's size at once (its
// text twice, the parser's tape, the decoded state: docs/accounting.md#loading-time).
// docs/security.md#the-process
inline constexpr size_t kMaxStateFileBytes = 32u << 20;

class StateFile {
 public:
  // Reads `path`. `writable` false (--once) never changes the disk: Save only keeps the state in
  // memory, and a bad file is ignored with a warning instead of being moved aside.
  static std::shared_ptr<StateFile> Open(std::string path, bool writable);
  // Writable, after taking the lock on "<path>.lock" (creating it, and its directory, if needed)
  // without waiting. Another process (or StateFile) holding it is an error naming the state file
  // and the holder's pid (kInvalidArgument: two daemons must not share a file). A lock file that
  // cannot be created (read-only directory) is only a warning: the state file cannot be written
  // there either, which Save reports.
  static Result<std::shared_ptr<StateFile>> OpenExclusive(std::string path);
  ~StateFile();

  // A copy of the section the file holds for `cluster`, or an empty state. After Take the file
  // holds one only while sessions share it (see Take). For tests and tools; a session uses Take.
  LedgerState Load(const std::string& cluster) const;
  // The same for the cluster's rightsizing observations (docs/rightsizing.md#in-the-state-file).
  rightsizing::RightsizingState LoadRightsizing(const std::string& cluster) const;
  // For the session of `cluster`: its sections as read, moved out. From then on the session holds
  // them and Save writes them from there; the file keeps a copy only while another session shares
  // it (every session takes its sections before the first Save). One session per file is the usual
  // case: at 1,000 nodes the copy was 20 MB of the daemon's peak (docs/performance.md).
  struct Sections {
    LedgerState ledger;
    rightsizing::RightsizingState rightsizing;
  };
  Sections Take(const std::string& cluster);

  // Replaces the cluster's section (and its rightsizing section, when given) and, when writable,
  // rewrites the file. Sections of clusters not running in this process are kept as they were
  // read.
  void Save(const std::string& cluster, const LedgerState& state,
            const rightsizing::RightsizingState* rightsizing = nullptr);

  const std::string& path() const { return path_; }
  bool writable() const { return writable_; }
  // True while the latest write failed (tests; the failure was logged once).
  bool write_failing() const;

 private:
  StateFile(std::string path, bool writable) : path_(std::move(path)), writable_(writable) {}
  void Read();
  Status Lock();

  const std::string path_;
  const bool writable_;
  mutable std::mutex mu_;
  StateFileContents contents_;  // sections read, and copies of the sessions' (see Take)
  RightsizingContents rightsizing_;
  std::set<std::string, std::less<>> taken_;  // clusters whose sessions took their sections
  bool write_failing_ = false;
  int lock_fd_ = -1;
};

}  // namespace gpuattr::ledger
