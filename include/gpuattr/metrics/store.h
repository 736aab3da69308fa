// Holds the latest Snapshot and its rendered exposition. The loop builds a new snapshot completely
// and publishes it; Publish renders it once (and gzips it once) and then makes the snapshot and
// its bytes visible together. Readers take reference-counted pointers, so a scrape never sees a
// half-built snapshot or exposition: during a rendering it gets the previous complete one. The
// exposition keeps only its gzip stream (exposition.h): at most one text exists at a time.
#pragma once

#include <functional>
#include <memory>
#include <mutex>

#include "gpuattr/metrics/exposition.h"
#include "gpuattr/metrics/family_filter.h"
#include "gpuattr/model/snapshot.h"

namespace gpuattr::metrics {

class SnapshotStore {
 public:
  SnapshotStore();
  // `before_swap` (a test seam) runs after a rendering, before the new snapshot becomes visible.
  explicit SnapshotStore(std::function<void()> before_swap);

  // The families the exposition leaves out (--metric-allowlist / --metric-denylist); set before
  // the first Publish.
  void SetFamilyFilter(FamilyFilter filter);

  std::shared_ptr<const model::Snapshot> Get() const;
  std::shared_ptr<const Exposition> GetExposition() const;

  // Renders the snapshot's families (RenderChunks) and gzips them on the caller's thread, one
  // publisher at a time, then swaps. A rendering that fails (out of memory) keeps the previous
  // bytes, logs the error and still swaps the snapshot.
  void Publish(std::shared_ptr<const model::Snapshot> snapshot);

 private:
  std::function<void()> before_swap_;
  FamilyFilter filter_;
  std::mutex render_mu_;      // one rendering at a time, in Publish order
  size_t largest_group_ = 0;  // the previous rendering's most text at once, in bytes
  // Family by family until a rendering found a group that does not write so (several clusters):
  // from then on group by group (text_writer.h, RenderGroupByGroup).
  bool by_family_ = true;
  mutable std::mutex mu_;
  std::shared_ptr<const model::Snapshot> current_;
  std::shared_ptr<const Exposition> exposition_;
};

}  // namespace gpuattr::metrics
