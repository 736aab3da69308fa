// The rendered /metrics body of one snapshot (docs/design.md#serving-at-scale): the text,
// rendered once, and its gzip stream, compressed once, served to every scrape as they are.
//
// A scrape may append a small live tail (the process_* self-metrics, read at scrape time): the
// gzip stream is kept open for it. `gzip_head` is a gzip member header and the raw deflate
// stream of `text` ended by a sync flush (a byte boundary, no final block); GzipTail() deflates
// the tail as the final blocks and writes the trailer (CRC-32 and length of text + tail). The
// deflate blocks of a fresh stream never refer back, so head + tail is one valid gzip member that
// every client reads.
//
// The store keeps only the gzip stream (5 MB at 1,000 nodes, against 47 MB of text): the text of
// the published exposition would otherwise sit next to the next one while that is rendered.
// TextReader inflates it again for the rare reader that wants the text.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "gpuattr/metrics/text_writer.h"

namespace gpuattr::metrics {

struct Exposition {
  ExpositionText text;  // its chunks (per family, text_writer.h); empty unless kept
  std::string gzip_head;
  uint32_t crc32 = 0;    // of the text
  size_t text_size = 0;  // of the text, kept or not
  bool text_kept = true;

  // The whole text: `text` joined, or inflated from gzip_head.
  std::string Text() const;
};

// zlib level 1: Prometheus text still compresses more than 10x, in a fraction of the time
// level 6 needs (README, Performance).
inline constexpr int kGzipLevel = 1;

// Compresses `text`, and keeps it in the result when `keep_text`.
Exposition MakeExposition(ExpositionText text, int level = kGzipLevel, bool keep_text = true);

// An Exposition of text handed over piece by piece as it is made (RenderGroupByGroup): each piece
// is compressed and forgotten; the result keeps no text.
class ExpositionBuilder {
 public:
  explicit ExpositionBuilder(int level = kGzipLevel);
  ~ExpositionBuilder();
  ExpositionBuilder(const ExpositionBuilder&) = delete;
  ExpositionBuilder& operator=(const ExpositionBuilder&) = delete;
  void Add(std::string_view text);
  Exposition Finish() &&;

 private:
  struct Deflater;
  std::unique_ptr<Deflater> deflater_;
  Exposition e_;
};

// The text of an exposition, piece by piece: the kept chunks, or pieces of about 256 KB inflated
// from gzip_head. `e` must outlive the reader.
class TextReader {
 public:
  explicit TextReader(const Exposition& e);
  ~TextReader();
  TextReader(const TextReader&) = delete;
  TextReader& operator=(const TextReader&) = delete;
  // The next piece, valid until the next call; empty at the end (or when inflating failed).
  std::string_view Next();
  // Whether inflating failed (out of memory, a corrupt stream: never expected) before the end.
  bool failed() const { return failed_; }

 private:
  struct Inflater;
  const Exposition& e_;
  size_t next_piece_ = 0;
  std::unique_ptr<Inflater> inflater_;
  bool failed_ = false;
};

// The bytes that follow e.gzip_head so that the gzip stream holds e.text + tail.
std::string GzipTail(const Exposition& e, std::string_view tail);

}  // namespace gpuattr::metrics
