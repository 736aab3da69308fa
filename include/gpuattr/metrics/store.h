// Holds the latest Snapshot and its rendered exposition. The loop builds a new snapshot completely
// and publishes it; Publish makes it visible at once, renders it once (and gzips it once) and
// then makes its bytes visible. Readers take reference-counted pointers, so a scrape never sees a
// half-built snapshot or exposition: during a rendering it gets the previous complete bytes. The
// previous snapshot goes before the rendering (unless a reader still holds it): the memory peak
// of a publication holds one cycle's output, not two (docs/performance.md#peak-rss-at-1000-nodes).
// The exposition keeps only its gzip stream (exposition.h): at most one text exists at a time.
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
  // `before_swap` (a test seam) runs after a rendering, before its bytes become visible.
  explicit SnapshotStore(std::function<void()> before_swap);

  // The families the exposition leaves out (--metric-allowlist / --metric-denylist); set before
  // the first Publish.
  void SetFamilyFilter(FamilyFilter filter);

  std::shared_ptr<const model::Snapshot> Get() const;
  std::shared_ptr<const Exposition> GetExposition() const;
  // The bytes served are those of a complete snapshot (every cluster finished its first cycle):
  // /readyz. Follows the bytes, not Get(), which is ahead of them during a rendering.
  bool Ready() const;

  // Swaps the snapshot, then renders its families (RenderChunks) and gzips them on the caller's
  // thread, one publisher at a time, then swaps the bytes. A rendering that fails (out of memory)
  // keeps the previous bytes and logs the error.
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
  bool ready_ = false;  // exposition_ is a complete snapshot's
};

}  // namespace gpuattr::metrics
