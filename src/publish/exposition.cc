#include "gpuattr/publish/exposition.h"

#include <zlib.h>

#include <algorithm>
#include <new>
#include <span>

namespace gpuattr::publish {
namespace {

// Raw deflate (no zlib or gzip wrapper) of the pieces, one after the other, appended to `out` and
// ended by `flush` (Z_SYNC_FLUSH: left open; Z_FINISH: with the final block).
void Deflate(std::span<const std::string_view> pieces, int level, int flush, std::string& out) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::bad_alloc();
  unsigned char buf[64 * 1024];
  auto pump = [&](int f) {
    int rc;
    do {
      zs.next_out = buf;
      zs.avail_out = sizeof buf;
      rc = deflate(&zs, f);
      out.append(reinterpret_cast<const char*>(buf), sizeof buf - zs.avail_out);
    } while (zs.avail_out == 0 || (f == Z_FINISH && rc != Z_STREAM_END));
  };
  for (std::string_view p : pieces) {
    while (!p.empty()) {  // avail_in is 32-bit: at most 1 GiB per call
      const uInt chunk = static_cast<uInt>(std::min<size_t>(p.size(), 1u << 30));
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(p.data()));
      zs.avail_in = chunk;
      pump(Z_NO_FLUSH);
      p.remove_prefix(chunk);
    }
  }
  zs.next_in = nullptr;
  zs.avail_in = 0;
  pump(flush);
  deflateEnd(&zs);
}

void PutLittleEndian32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

uint32_t Crc32(uint32_t crc, std::string_view s) {
  while (!s.empty()) {
    const uInt chunk = static_cast<uInt>(std::min<size_t>(s.size(), 1u << 30));
    crc = static_cast<uint32_t>(
        ::crc32(crc, reinterpret_cast<const unsigned char*>(s.data()), chunk));
    s.remove_prefix(chunk);
  }
  return crc;
}

uint32_t EmptyCrc() { return static_cast<uint32_t>(::crc32(0, nullptr, 0)); }

}  // namespace

Exposition MakeExposition(ExpositionText text, int level) {
  Exposition e;
  // The gzip member header (RFC 1952): magic, deflate, no flags, no mtime, OS "unix".
  static constexpr unsigned char kHeader[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
  e.gzip_head.assign(reinterpret_cast<const char*>(kHeader), sizeof kHeader);
  Deflate(text.pieces(), level, Z_SYNC_FLUSH, e.gzip_head);
  e.gzip_head.shrink_to_fit();
  e.crc32 = EmptyCrc();
  for (std::string_view p : text.pieces()) e.crc32 = Crc32(e.crc32, p);
  e.text = std::move(text);
  return e;
}

std::string GzipTail(const Exposition& e, std::string_view tail) {
  std::string out;
  const std::string_view pieces[] = {tail};
  Deflate(pieces, kGzipLevel, Z_FINISH, out);
  PutLittleEndian32(out, static_cast<uint32_t>(::crc32_combine(e.crc32, Crc32(EmptyCrc(), tail),
                                                               static_cast<z_off_t>(tail.size()))));
  PutLittleEndian32(out, static_cast<uint32_t>((e.text.size() + tail.size()) & 0xffffffffu));
  return out;
}

}  // namespace gpuattr::publish
