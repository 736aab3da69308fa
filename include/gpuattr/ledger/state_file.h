// The process's state file: one JSON file (state_codec.h) with a section per cluster, shared by
// the sessions of all clusters (thread-safe). Read once at start; each successful cycle of a
// cluster replaces its section and rewrites the file atomically (atomic_file.h).
//
// Never fatal: a missing file is a fresh start; a corrupt, truncated or foreign file is moved
// aside to "<path>.bad-<UTC time>" with one warning naming both files, then a fresh start; a
// file that cannot be written is one warning naming the path (and one info line when writing
// works again), not one per cycle.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "gpuattr/ledger/state.h"
#include "gpuattr/ledger/state_codec.h"

namespace gpuattr::ledger {

class StateFile {
 public:
  // Reads `path`. `writable` false (--once) never changes the disk: Save only keeps the state in
  // memory, and a bad file is ignored with a warning instead of being moved aside.
  static std::shared_ptr<StateFile> Open(std::string path, bool writable);

  // The section saved for `cluster`, or an empty state.
  LedgerState Load(const std::string& cluster) const;
  // Replaces the cluster's section and, when writable, rewrites the file. Sections of clusters
  // not running in this process are kept as they were read.
  void Save(const std::string& cluster, const LedgerState& state);

  const std::string& path() const { return path_; }
  bool writable() const { return writable_; }
  // True while the latest write failed (tests; the failure was logged once).
  bool write_failing() const;

 private:
  StateFile(std::string path, bool writable) : path_(std::move(path)), writable_(writable) {}
  void Read();

  const std::string path_;
  const bool writable_;
  mutable std::mutex mu_;
  StateFileContents contents_;
  bool write_failing_ = false;
};

}  // namespace gpuattr::ledger
