#include "gpuattr/metrics/exposition.h"

#include <zlib.h>

#include <algorithm>
#include <new>

namespace gpuattr::metrics {
namespace {

// Raw deflate (no zlib or gzip wrapper) of text handed over piece by piece, appended to `out`.
class RawDeflate {
 public:
  // `small`: a 512-byte window and the least memory (a few KB instead of ~270 KB, which the
  // allocator would map and fault in for every scrape's tail).
  RawDeflate(int level, std::string& out, bool small = false) : out_(out) {
    if (deflateInit2(&zs_, level, Z_DEFLATED, small ? -9 : -MAX_WBITS, small ? 1 : 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
      throw std::bad_alloc();
  }
  ~RawDeflate() { deflateEnd(&zs_); }
  RawDeflate(const RawDeflate&) = delete;
  RawDeflate& operator=(const RawDeflate&) = delete;

  void Add(std::string_view p) {
    while (!p.empty()) {  // avail_in is 32-bit: at most 1 GiB per call
      const uInt chunk = static_cast<uInt>(std::min<size_t>(p.size(), 1u << 30));
      zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(p.data()));
      zs_.avail_in = chunk;
      Pump(Z_NO_FLUSH);
      p.remove_prefix(chunk);
    }
  }
  // Z_SYNC_FLUSH: left open; Z_FINISH: with the final block.
  void End(int flush) {
    zs_.next_in = nullptr;
    zs_.avail_in = 0;
    Pump(flush);
  }

 private:
  void Pump(int flush) {
    int rc;
    do {
      zs_.next_out = buf_;
      zs_.avail_out = sizeof buf_;
      rc = deflate(&zs_, flush);
      out_.append(reinterpret_cast<const char*>(buf_), sizeof buf_ - zs_.avail_out);
    } while (zs_.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  }

  z_stream zs_{};
  std::string& out_;
  unsigned char buf_[64 * 1024];
};

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

// The gzip member header (RFC 1952): magic, deflate, no flags, no mtime, OS "unix".
constexpr unsigned char kGzipHeader[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};

}  // namespace

struct ExpositionBuilder::Deflater {
  Deflater(int level, std::string& out) : deflate(level, out) {}
  RawDeflate deflate;
};

ExpositionBuilder::ExpositionBuilder(int level) {
  e_.gzip_head.assign(reinterpret_cast<const char*>(kGzipHeader), sizeof kGzipHeader);
  e_.crc32 = EmptyCrc();
  e_.text_kept = false;
  deflater_ = std::make_unique<Deflater>(level, e_.gzip_head);
}

ExpositionBuilder::~ExpositionBuilder() = default;

void ExpositionBuilder::Add(std::string_view text) {
  deflater_->deflate.Add(text);
  e_.crc32 = Crc32(e_.crc32, text);
  e_.text_size += text.size();
}

Exposition ExpositionBuilder::Finish() && {
  deflater_->deflate.End(Z_SYNC_FLUSH);
  deflater_.reset();
  e_.gzip_head.shrink_to_fit();
  return std::move(e_);
}

Exposition MakeExposition(ExpositionText text, int level, bool keep_text) {
  ExpositionBuilder b(level);
  for (std::string_view p : text.pieces()) b.Add(p);
  Exposition e = std::move(b).Finish();
  e.text_kept = keep_text;
  if (keep_text) e.text = std::move(text);
  return e;
}

std::string Exposition::Text() const {
  std::string out;
  out.reserve(text_size);
  TextReader reader(*this);
  for (std::string_view p = reader.Next(); !p.empty(); p = reader.Next()) out.append(p);
  return out;
}

// Raw inflate of gzip_head after its 10-byte member header. The stream ends in a sync flush, not a
// final block: inflate stops with all input used and no more output.
struct TextReader::Inflater {
  static constexpr size_t kPiece = 256 * 1024;
  z_stream zs{};
  std::unique_ptr<char[]> buf{new char[kPiece]};
  size_t produced = 0;
  bool open = false;
  ~Inflater() {
    if (open) inflateEnd(&zs);
  }
};

TextReader::TextReader(const Exposition& e) : e_(e) {}
TextReader::~TextReader() = default;

std::string_view TextReader::Next() {
  if (e_.text_kept) {
    const auto pieces = e_.text.pieces();
    while (next_piece_ < pieces.size())
      if (std::string_view p = pieces[next_piece_++]; !p.empty()) return p;
    return {};
  }
  constexpr size_t kHeader = 10;
  if (failed_ || e_.gzip_head.size() < kHeader) return {};
  if (!inflater_) {
    inflater_ = std::make_unique<Inflater>();
    if (inflateInit2(&inflater_->zs, -MAX_WBITS) != Z_OK) {
      failed_ = true;
      return {};
    }
    inflater_->open = true;
    inflater_->zs.next_in =
        reinterpret_cast<Bytef*>(const_cast<char*>(e_.gzip_head.data() + kHeader));
    inflater_->zs.avail_in = static_cast<uInt>(e_.gzip_head.size() - kHeader);
  }
  Inflater& in = *inflater_;
  if (in.produced >= e_.text_size) return {};
  in.zs.next_out = reinterpret_cast<Bytef*>(in.buf.get());
  in.zs.avail_out = static_cast<uInt>(Inflater::kPiece);
  const int rc = inflate(&in.zs, Z_SYNC_FLUSH);
  const size_t got = Inflater::kPiece - in.zs.avail_out;
  in.produced += got;
  if ((rc != Z_OK && rc != Z_BUF_ERROR) || got == 0 || in.produced > e_.text_size) {
    failed_ = true;  // the text is shorter or longer than it was
    return {};
  }
  return {in.buf.get(), got};
}

std::string GzipTail(const Exposition& e, std::string_view tail) {
  std::string out;
  RawDeflate deflate(kGzipLevel, out, /*small=*/true);
  deflate.Add(tail);
  deflate.End(Z_FINISH);
  PutLittleEndian32(out, static_cast<uint32_t>(::crc32_combine(e.crc32, Crc32(EmptyCrc(), tail),
                                                               static_cast<z_off_t>(tail.size()))));
  PutLittleEndian32(out, static_cast<uint32_t>((e.text_size + tail.size()) & 0xffffffffu));
  return out;
}

}  // namespace gpuattr::metrics
