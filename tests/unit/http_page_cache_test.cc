// The shared bodies of "/", /snapshot.json and /snapshot.md (http/page_cache.h): built once per
// snapshot and per max_age, shared by every caller, gzipped once.
#include "gpuattr/http/page_cache.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace gpuattr::http {
namespace {

struct Counted {
  int calls = 0;
  std::string Render(double now) {
    ++calls;
    return "page at " + std::to_string(static_cast<long>(now)) + std::string(2000, ' ');
  }
};

std::string FakeGzip(const std::string& text) { return "gz(" + std::to_string(text.size()) + ")"; }

TEST(PageCache, OneRenderingPerSnapshotSharedByEveryCaller) {
  PageCache cache(5);
  Counted r;
  auto snap = std::make_shared<const model::Snapshot>();
  bool gz = true;
  auto render = [&](double now) { return r.Render(now); };
  auto a = cache.Get(Page::kStatus, false, snap, 100, render, FakeGzip, &gz);
  auto b = cache.Get(Page::kStatus, false, snap, 104.9, render, FakeGzip, &gz);
  EXPECT_FALSE(gz);
  EXPECT_EQ(r.calls, 1);
  EXPECT_EQ(a.get(), b.get()) << "the same bytes, not a copy";
  EXPECT_EQ(*a, r.Render(100).substr(0, a->size()));
  r.calls = 1;

  // Another page is another body.
  cache.Get(Page::kSnapshotJson, false, snap, 101, render, FakeGzip, &gz);
  EXPECT_EQ(r.calls, 2);
}

TEST(PageCache, ANewSnapshotOrAnOldBodyIsBuiltAgain) {
  PageCache cache(5);
  Counted r;
  auto render = [&](double now) { return r.Render(now); };
  bool gz = false;
  auto first = std::make_shared<const model::Snapshot>();
  auto second = std::make_shared<const model::Snapshot>();
  auto a = cache.Get(Page::kStatus, false, first, 100, render, FakeGzip, &gz);
  auto b = cache.Get(Page::kStatus, false, second, 101, render, FakeGzip, &gz);
  EXPECT_EQ(r.calls, 2);
  EXPECT_NE(a.get(), b.get());
  // Five seconds later the same snapshot is rendered again: its "ago" times moved.
  auto c = cache.Get(Page::kStatus, false, second, 106, render, FakeGzip, &gz);
  EXPECT_EQ(r.calls, 3);
  EXPECT_NE(*c, *b);
  // A clock stepped back is no reason to serve a page from the future.
  cache.Get(Page::kStatus, false, second, 50, render, FakeGzip, &gz);
  EXPECT_EQ(r.calls, 4);
  EXPECT_EQ(cache.renderings(), 4u);
}

// A page viewed once must not keep its snapshot (a whole cycle's output) alive; and a snapshot
// made after the cached one was freed, even at the same address, is a new one.
TEST(PageCache, HoldsNoSnapshotAndKnowsAFreedOneFromItsSuccessor) {
  PageCache cache(5);
  Counted r;
  auto render = [&](double now) { return r.Render(now); };
  bool gz = false;
  auto first = std::make_shared<const model::Snapshot>();
  std::weak_ptr<const model::Snapshot> watch = first;
  cache.Get(Page::kStatus, false, first, 100, render, FakeGzip, &gz);
  cache.Get(Page::kStatus, true, first, 100, render, FakeGzip, &gz);
  first.reset();
  EXPECT_TRUE(watch.expired()) << "the cache holds the snapshot";
  for (int i = 0; i < 20; ++i) {  // the allocator may hand the same address back
    auto next = std::make_shared<const model::Snapshot>();
    const int before = r.calls;
    cache.Get(Page::kStatus, false, next, 101, render, FakeGzip, &gz);
    EXPECT_EQ(r.calls, before + 1) << "a new snapshot served the freed one's page";
  }
}

TEST(PageCache, TheGzipStreamIsMadeOnceFromTheSharedText) {
  PageCache cache(5);
  Counted r;
  auto render = [&](double now) { return r.Render(now); };
  auto snap = std::make_shared<const model::Snapshot>();
  int compressions = 0;
  auto compress = [&](const std::string& text) {
    ++compressions;
    return FakeGzip(text);
  };
  bool gz = false;
  auto z1 = cache.Get(Page::kSnapshotMarkdown, true, snap, 10, render, compress, &gz);
  EXPECT_TRUE(gz);
  auto z2 = cache.Get(Page::kSnapshotMarkdown, true, snap, 11, render, compress, &gz);
  auto plain = cache.Get(Page::kSnapshotMarkdown, false, snap, 12, render, compress, &gz);
  EXPECT_FALSE(gz);
  EXPECT_EQ(z1.get(), z2.get());
  EXPECT_EQ(*z1, "gz(" + std::to_string(plain->size()) + ")");
  EXPECT_EQ(r.calls, 1) << "the plain body behind the gzip stream is the one plain callers get";
  EXPECT_EQ(compressions, 1);
}

TEST(PageCache, ABodyTheCompressorDeclinesIsSentPlain) {
  PageCache cache(5);
  auto snap = std::make_shared<const model::Snapshot>();
  bool gz = true;
  auto body = cache.Get(
      Page::kStatus, true, snap, 1, [](double) { return std::string("tiny"); },
      [](const std::string&) { return std::string(); }, &gz);
  EXPECT_FALSE(gz);
  EXPECT_EQ(*body, "tiny");
}

}  // namespace
}  // namespace gpuattr::http
