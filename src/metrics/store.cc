#include "gpuattr/metrics/store.h"

#include <chrono>
#include <exception>

#include "gpuattr/metrics/text_writer.h"
#include "gpuattr/util/log.h"

namespace gpuattr::metrics {

SnapshotStore::SnapshotStore() : SnapshotStore(nullptr) {}

SnapshotStore::SnapshotStore(std::function<void()> before_swap)
    : before_swap_(std::move(before_swap)),
      current_(std::make_shared<const model::Snapshot>()),
      exposition_(std::make_shared<const Exposition>(MakeExposition(ExpositionText()))) {}

void SnapshotStore::SetFamilyFilter(FamilyFilter filter) {
  std::lock_guard<std::mutex> rendering(render_mu_);
  filter_ = std::move(filter);
}

std::shared_ptr<const model::Snapshot> SnapshotStore::Get() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

std::shared_ptr<const Exposition> SnapshotStore::GetExposition() const {
  std::lock_guard<std::mutex> lock(mu_);
  return exposition_;
}

bool SnapshotStore::Ready() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ready_;
}

void SnapshotStore::Publish(std::shared_ptr<const model::Snapshot> snapshot) {
  std::lock_guard<std::mutex> rendering(render_mu_);
  {
    std::shared_ptr<const model::Snapshot> old_snapshot;
    std::lock_guard<std::mutex> lock(mu_);
    old_snapshot = std::move(current_);
    current_ = snapshot;
  }  // the previous snapshot is freed here, outside the lock, unless a reader still holds it
  std::shared_ptr<const Exposition> bytes;
  try {
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    // Rendered group by group into the compressor: only the gzip stream is kept (exposition.h)
    // and the whole text never exists at once.
    Clock::duration gzip_time{};
    auto builder = std::make_unique<ExpositionBuilder>();
    const std::function<void(std::string_view)> sink = [&](std::string_view piece) {
      const auto g0 = Clock::now();
      builder->Add(piece);
      gzip_time += Clock::now() - g0;
    };
    bool streamed = RenderGroupByGroup(*snapshot, sink, largest_group_, &filter_, by_family_);
    if (!streamed && by_family_) {  // once: a group wrote a family in two runs
      by_family_ = false;
      builder = std::make_unique<ExpositionBuilder>();
      streamed = RenderGroupByGroup(*snapshot, sink, largest_group_, &filter_, false);
    }
    if (streamed) {
      bytes = std::make_shared<const Exposition>(std::move(*builder).Finish());
    } else {  // a family outside its group: rendered whole, in RenderChunks' order
      ExpositionText text = RenderChunks(*snapshot, GetExposition()->text_size, &filter_);
      const auto g0 = Clock::now();
      bytes = std::make_shared<const Exposition>(
          MakeExposition(std::move(text), kGzipLevel, /*keep_text=*/false));
      gzip_time += Clock::now() - g0;
    }
    const auto total = Clock::now() - t0;
    log::Debug("exposition rendered",
               {{"bytes", bytes->text_size},
                {"gzip_bytes", bytes->gzip_head.size()},
                {"render_seconds", std::chrono::duration<double>(total - gzip_time).count()},
                {"gzip_seconds", std::chrono::duration<double>(gzip_time).count()}});
  } catch (const std::exception& e) {
    log::Error("rendering /metrics failed; the previous exposition stays served",
               {{"err", e.what()}});
  }
  if (before_swap_) before_swap_();
  std::shared_ptr<const Exposition> old_bytes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (bytes) {
      old_bytes = std::move(exposition_);
      exposition_ = std::move(bytes);
      ready_ = snapshot->complete;
    }
  }
  // The previous bytes are freed here, outside the lock, unless a scrape still holds them.
}

}  // namespace gpuattr::metrics
