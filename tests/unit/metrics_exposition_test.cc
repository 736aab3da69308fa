// Render once per publication (docs/design.md#serving-at-scale): the cached bytes equal a
// fresh rendering, the gzip stream (with or without a live tail) decompresses to the same text,
// and a reader during a rendering gets the previous complete exposition.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "golden/rich_snapshot.h"
#include "gpuattr/metrics/exposition.h"
#include "gpuattr/metrics/families.h"
#include "gpuattr/metrics/store.h"
#include "gpuattr/metrics/text_writer.h"
#include "support/family_collector.h"

namespace gpuattr::metrics {
namespace {

// A standard gzip decoder (zlib, gzip wrapper: checks CRC-32 and length); fails the test unless
// the stream ends exactly at the end of `in`.
std::string Gunzip(const std::string& in) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 16 + MAX_WBITS), Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END) << "not one complete gzip stream";
  EXPECT_EQ(zs.avail_in, 0u) << "bytes after the gzip stream";
  inflateEnd(&zs);
  return out;
}

std::string Body(const Exposition& e, std::string_view tail) {
  return e.gzip_head + GzipTail(e, tail);
}

TEST(Exposition, GzipHeadAndTailAreOneStreamOfTextAndTail) {
  std::mt19937 rng(7);
  std::string random_text;
  for (int i = 0; i < 2'000'000; ++i) random_text += static_cast<char>('a' + rng() % 26);
  for (const std::string& text : {std::string(), std::string("a 1\n"), random_text}) {
    const Exposition e = MakeExposition(ExpositionText::Of(text));
    EXPECT_EQ(e.text.Join(), text);
    for (const std::string& tail :
         {std::string(), std::string("process_open_fds 12\n"), std::string(100'000, 'x')})
      EXPECT_EQ(Gunzip(Body(e, tail)), text + tail) << text.size() << " + " << tail.size();
  }
}

// The store keeps only the gzip stream: the text comes back by inflating it, in pieces.
TEST(Exposition, TextNotKeptIsInflatedBackPieceByPiece) {
  std::mt19937 rng(3);
  std::string random_text;
  for (int i = 0; i < 3'000'000; ++i) random_text += static_cast<char>('a' + rng() % 26);
  for (const std::string& text : {std::string(), std::string("a 1\n"), random_text}) {
    const Exposition e = MakeExposition(ExpositionText::Of(text), kGzipLevel, false);
    EXPECT_FALSE(e.text_kept);
    EXPECT_EQ(e.text.size(), 0u);
    EXPECT_EQ(e.text_size, text.size());
    TextReader reader(e);
    std::string back;
    size_t pieces = 0;
    for (std::string_view p = reader.Next(); !p.empty(); p = reader.Next(), ++pieces) back += p;
    EXPECT_FALSE(reader.failed());
    EXPECT_EQ(back, text);
    EXPECT_EQ(e.Text(), text);
    if (text.size() > 1'000'000) {
      EXPECT_GT(pieces, 3u);
    }
    EXPECT_EQ(Gunzip(Body(e, "tail 1\n")), text + "tail 1\n");
  }
}

// A family's text is one chunk per run of its series (groups write cluster by cluster, so with
// two clusters a family can have two), the first starting with its HELP or TYPE line.
TEST(Exposition, ChunksOfEachFamilyCompressedAsOneStream) {
  const model::Snapshot s = gpuattr::testing::RichSnapshot();
  const Exposition e = MakeExposition(RenderChunks(s));
  const std::string text = RenderText(s);
  EXPECT_EQ(e.text.Join(), text);
  EXPECT_EQ(e.text.size(), text.size());
  size_t headers = 0;
  for (std::string_view piece : e.text.pieces()) {
    if (piece.starts_with("# HELP ") || piece.starts_with("# TYPE ")) ++headers;
    EXPECT_TRUE(piece.ends_with("\n"));
  }
  EXPECT_EQ(headers, BuildFamilies(s).size());  // families with series
  EXPECT_GE(e.text.pieces().size(), headers);
  EXPECT_EQ(Gunzip(Body(e, "")), text);
  EXPECT_LT(e.gzip_head.size() * 3, text.size());
}

// Group by group, through one reused buffer, the pieces are RenderChunks' text in its order.
TEST(Exposition, RenderedGroupByGroupIsTheSameText) {
  const model::Snapshot s = gpuattr::testing::RichSnapshot();
  ASSERT_GT(s.clusters.size(), 1u);
  for (size_t hint : {size_t{0}, size_t{100}, size_t{10'000'000}}) {
    std::string text;
    size_t largest = hint;
    ASSERT_TRUE(RenderGroupByGroup(
        s, [&](std::string_view p) { text += p; }, largest, nullptr, /*by_family=*/false));
    EXPECT_EQ(text, RenderText(s));
    EXPECT_GT(largest, 0u);
    EXPECT_LT(largest, text.size());
    ExpositionBuilder b;
    b.Add(text.substr(0, 100));
    b.Add(text.substr(100));
    const Exposition e = std::move(b).Finish();
    EXPECT_EQ(e.text_size, text.size());
    EXPECT_EQ(e.Text(), text);
    EXPECT_EQ(Gunzip(Body(e, "x 1\n")), text + "x 1\n");
  }
}

// One cluster (the usual daemon): every group writes family by family in table order, so the
// text streams out a family at a time and the buffer never holds a whole group. Several clusters
// write each family once per cluster: by_family reports it (false) instead of a wrong text.
TEST(Exposition, OneClusterStreamsFamilyByFamily) {
  model::Snapshot s = gpuattr::testing::RichSnapshot();
  std::string multi;
  size_t unused = 0;
  EXPECT_FALSE(RenderGroupByGroup(
      s, [&](std::string_view p) { multi += p; }, unused));
  s.clusters.resize(1);
  std::string by_group, by_family;
  size_t group_peak = 0, family_peak = 0;
  ASSERT_TRUE(RenderGroupByGroup(
      s, [&](std::string_view p) { by_group += p; }, group_peak, nullptr, false));
  ASSERT_TRUE(RenderGroupByGroup(
      s, [&](std::string_view p) { by_family += p; }, family_peak));
  EXPECT_EQ(by_family, RenderText(s));
  EXPECT_EQ(by_family, by_group);
  EXPECT_GT(family_peak, 0u);
  EXPECT_LT(family_peak, group_peak);
}

TEST(SnapshotStore, CachedBytesEqualAFreshRendering) {
  SnapshotStore store;
  EXPECT_EQ(store.GetExposition()->Text(), "");  // before the first publication
  auto snapshot = std::make_shared<const model::Snapshot>(gpuattr::testing::RichSnapshot());
  store.Publish(snapshot);
  EXPECT_EQ(store.Get(), snapshot);
  auto e = store.GetExposition();
  EXPECT_EQ(e->Text(), RenderText(*snapshot));
  EXPECT_EQ(Gunzip(Body(*e, "")), RenderText(*snapshot));
  EXPECT_EQ(store.GetExposition(), e) << "a scrape does not render again";
}

// A publisher held between rendering and swapping: the new snapshot is visible and the previous
// one already freed (a publication's peak holds one cycle's output), while readers of /metrics
// still get the previous complete bytes, never anything of the new ones, and /readyz follows
// those bytes; once the bytes swap, both are the new snapshot's.
TEST(SnapshotStore, ReaderDuringARenderingGetsThePreviousCompleteExposition) {
  std::mutex mu;
  std::condition_variable cv;
  bool rendered = false, release = false;
  std::atomic<bool> hold{false};
  SnapshotStore store([&] {
    if (!hold.load()) return;
    std::unique_lock<std::mutex> lock(mu);
    rendered = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
  });
  EXPECT_FALSE(store.Ready());
  model::Snapshot first = gpuattr::testing::RichSnapshot();
  first.clusters.resize(1);
  first.complete = false;  // a cluster still in its first cycle
  auto one = std::make_shared<const model::Snapshot>(first);
  store.Publish(one);
  const std::string first_text = RenderText(*one);
  EXPECT_FALSE(store.Ready());
  const std::weak_ptr<const model::Snapshot> previous = one;
  one.reset();

  auto two = std::make_shared<const model::Snapshot>(gpuattr::testing::RichSnapshot());
  ASSERT_TRUE(two->complete);
  hold = true;
  std::thread publisher([&] { store.Publish(two); });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return rendered; });
  }
  // The new exposition is rendered but not visible; the snapshot is.
  EXPECT_EQ(store.Get(), two);
  EXPECT_TRUE(previous.expired()) << "the previous snapshot outlived its successor's rendering";
  EXPECT_EQ(store.GetExposition()->Text(), first_text);
  EXPECT_EQ(Gunzip(Body(*store.GetExposition(), "")), first_text);
  EXPECT_FALSE(store.Ready()) << "ready before the complete snapshot's bytes are served";
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  publisher.join();
  EXPECT_EQ(store.Get(), two);
  EXPECT_EQ(store.GetExposition()->Text(), RenderText(*two));
  EXPECT_NE(first_text, RenderText(*two));
  EXPECT_TRUE(store.Ready());
}

// Many publications while readers read: every exposition a reader gets is exactly the rendering
// of one published snapshot.
TEST(SnapshotStore, ConcurrentReadersSeeOnlyCompleteExpositions) {
  SnapshotStore store;
  std::vector<std::shared_ptr<const model::Snapshot>> snapshots;
  std::set<std::string> renderings = {""};
  for (int i = 0; i < 6; ++i) {
    model::Snapshot s = gpuattr::testing::RichSnapshot();
    s.clusters[0].cycles = static_cast<uint64_t>(i);
    s.clusters[0].cycle_duration_seconds = i;
    snapshots.push_back(std::make_shared<const model::Snapshot>(s));
    renderings.insert(RenderText(s));
  }
  std::atomic<bool> done{false};
  std::atomic<size_t> reads{0}, bad{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r)
    readers.emplace_back([&] {
      while (!done.load()) {
        auto e = store.GetExposition();
        if (!renderings.count(e->Text())) ++bad;
        ++reads;
      }
    });
  for (int round = 0; round < 5; ++round)
    for (const auto& s : snapshots) store.Publish(s);
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_GT(reads.load(), 0u);
}

}  // namespace
}  // namespace gpuattr::metrics
