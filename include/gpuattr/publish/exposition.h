// The rendered /metrics body of one snapshot (DESIGN section 10, "Serving at scale"): the text,
// rendered once, and its gzip stream, compressed once, served to every scrape as they are.
//
// A scrape may append a small live tail (the process_* self-metrics, read at scrape time): the
// gzip stream is kept open for it. `gzip_head` is a gzip member header and the raw deflate
// stream of `text` ended by a sync flush (a byte boundary, no final block); GzipTail() deflates
// the tail as the final blocks and writes the trailer (CRC-32 and length of text + tail). The
// deflate blocks of a fresh stream never refer back, so head + tail is one valid gzip member that
// every client reads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gpuattr/publish/text_writer.h"

namespace gpuattr::publish {

struct Exposition {
  ExpositionText text;  // its chunks (per family, text_writer.h), sent one after the other
  std::string gzip_head;
  uint32_t crc32 = 0;  // of text
};

// zlib level 1: Prometheus text still compresses more than 10x, in a fraction of the time
// level 6 needs (README, Performance).
inline constexpr int kGzipLevel = 1;

// Compresses `text` (kept in the result).
Exposition MakeExposition(ExpositionText text, int level = kGzipLevel);

// The bytes that follow e.gzip_head so that the gzip stream holds e.text + tail.
std::string GzipTail(const Exposition& e, std::string_view tail);

}  // namespace gpuattr::publish
