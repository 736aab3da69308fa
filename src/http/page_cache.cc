#include "gpuattr/http/page_cache.h"

namespace gpuattr::http {

bool PageCache::Fresh(const Entry& e, const std::shared_ptr<const model::Snapshot>& snapshot,
                      double now) const {
  // A clock stepped back counts as old too.
  const bool same = !e.snapshot.owner_before(snapshot) && !snapshot.owner_before(e.snapshot);
  return e.body && same && now >= e.built_at && now - e.built_at < max_age_;
}

std::shared_ptr<const std::string> PageCache::Plain(
    Entry& e, const std::shared_ptr<const model::Snapshot>& snapshot, double now,
    const Render& render) {
  std::lock_guard<std::mutex> lock(e.mu);
  if (!Fresh(e, snapshot, now)) {
    e.body = std::make_shared<const std::string>(render(now));
    e.snapshot = snapshot;
    e.built_at = now;
    std::lock_guard<std::mutex> count(count_mu_);
    ++renderings_;
  }
  return e.body;
}

std::shared_ptr<const std::string> PageCache::Get(
    Page page, bool gzip, const std::shared_ptr<const model::Snapshot>& snapshot, double now,
    const Render& render, const Compress& compress, bool* gzipped) {
  const size_t i = static_cast<size_t>(page);
  *gzipped = false;
  if (!gzip) return Plain(plain_[i], snapshot, now, render);
  Entry& e = gzip_[i];
  std::lock_guard<std::mutex> lock(e.mu);
  if (!Fresh(e, snapshot, now)) {
    std::shared_ptr<const std::string> text = Plain(plain_[i], snapshot, now, render);
    std::string z = compress(*text);
    e.gzipped = !z.empty();
    e.body = e.gzipped ? std::make_shared<const std::string>(std::move(z)) : text;
    e.snapshot = snapshot;
    e.built_at = now;
    std::lock_guard<std::mutex> count(count_mu_);
    ++renderings_;
  }
  *gzipped = e.gzipped;
  return e.body;
}

size_t PageCache::renderings() const {
  std::lock_guard<std::mutex> lock(count_mu_);
  return renderings_;
}

}  // namespace gpuattr::http
