// The bodies of the pages that cost a rendering - the status page "/", /snapshot.json and
// /snapshot.md - built once per snapshot and shared by every connection that sends them, as
// /metrics sends the exposition rendered at publication. 128 clients that never read the status
// page hold one copy of it, not 128 (docs/security.md#serving).
//
// A body is built again when the snapshot changes or when it is max_age old, so the page's "ago"
// times and its staleness warning keep moving while cycles fail and no snapshot is published.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "gpuattr/model/snapshot.h"

namespace gpuattr::http {

enum class Page { kStatus, kSnapshotJson, kSnapshotMarkdown };
inline constexpr size_t kPages = 3;

class PageCache {
 public:
  explicit PageCache(double max_age_seconds = 5) : max_age_(max_age_seconds) {}

  // The body of `page` (gzipped when `gzip`) for `snapshot` at `now` (Unix seconds): the one
  // built earlier when it is for this snapshot and younger than max_age, else `render(now)`'s
  // (gzipped by `compress`; a body that `compress` returns empty for is kept as it is, with
  // `*gzipped` false). One rendering at a time per body; the others wait for it.
  using Render = std::function<std::string(double now)>;
  using Compress = std::function<std::string(const std::string&)>;
  std::shared_ptr<const std::string> Get(Page page, bool gzip,
                                         const std::shared_ptr<const model::Snapshot>& snapshot,
                                         double now, const Render& render, const Compress& compress,
                                         bool* gzipped);

  size_t renderings() const;  // how many bodies were built, gzip streams included (tests)

 private:
  struct Entry {
    std::mutex mu;
    // Not held (a page viewed once would keep its snapshot, a whole cycle's output, alive until
    // the next view); a weak pointer still names its snapshot alone, even once it has expired.
    std::weak_ptr<const model::Snapshot> snapshot;
    double built_at = 0;
    std::shared_ptr<const std::string> body;
    bool gzipped = false;
  };
  std::shared_ptr<const std::string> Plain(Entry& e,
                                           const std::shared_ptr<const model::Snapshot>& snapshot,
                                           double now, const Render& render);
  bool Fresh(const Entry& e, const std::shared_ptr<const model::Snapshot>& snapshot,
             double now) const;

  double max_age_;
  std::array<Entry, kPages> plain_;
  std::array<Entry, kPages> gzip_;
  mutable std::mutex count_mu_;
  size_t renderings_ = 0;
};

}  // namespace gpuattr::http
