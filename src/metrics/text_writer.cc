#include "gpuattr/metrics/text_writer.h"

#include "gpuattr/metrics/family_filter.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include <sys/mman.h>
#include <unistd.h>

namespace gpuattr::metrics {
namespace {

// What a byte needs inside a quoted label value: 0 copy, 1 escape, 2 start of a UTF-8 sequence
// (or an invalid byte) to check.
constexpr std::array<uint8_t, 256> kLabelByteClass = [] {
  std::array<uint8_t, 256> t{};
  t[static_cast<unsigned char>('\\')] = 1;
  t[static_cast<unsigned char>('"')] = 1;
  t[static_cast<unsigned char>('\n')] = 1;
  for (int c = 0x80; c < 0x100; ++c) t[c] = 2;
  return t;
}();

char* Copy(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

// Copy for the short strings of a series line (label names and values, metric names), inline:
// two overlapping loads and stores of 8 (or 4) bytes instead of a call to memcpy. Reads only
// inside `s`.
inline char* CopyShort(char* p, std::string_view s) {
  const size_t n = s.size();
  const char* src = s.data();
  if (n >= 8) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) std::memcpy(p + i, src + i, 8);
    if (i < n) std::memcpy(p + n - 8, src + n - 8, 8);
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, src, 4);
    std::memcpy(&b, src + n - 4, 4);
    std::memcpy(p, &a, 4);
    std::memcpy(p + n - 4, &b, 4);
  } else {
    for (size_t i = 0; i < n; ++i) p[i] = src[i];
  }
  return p + n;
}

// Length of the valid UTF-8 sequence starting at s[i] (a byte >= 0x80), or 0 when it is not one.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto at = [&](size_t k) -> unsigned {
    return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u;
  };
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
    unsigned c = at(k);
    return c >= lo && c <= hi;
  };
  const unsigned c = at(0);
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;  // no UTF-16 surrogates
  if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

// Whether any of the 8 bytes of `x` is \\, ", newline or >= 0x80 (the bytes a label value needs
// to look at), with the usual has-zero-byte trick on x XOR each byte value.
template <typename Word>
bool AnySpecialByte(Word x) {
  constexpr Word kOnes = static_cast<Word>(0x0101010101010101ull);
  constexpr Word kHigh = static_cast<Word>(0x8080808080808080ull);
  auto has_zero = [](Word v) { return static_cast<Word>((v - kOnes) & ~v & kHigh); };
  return ((x & kHigh) | has_zero(x ^ static_cast<Word>(kOnes * '\\')) |
          has_zero(x ^ static_cast<Word>(kOnes * '"')) |
          has_zero(x ^ static_cast<Word>(kOnes * '\n'))) != 0;
}

// Whether `v` needs no escaping and no UTF-8 check (the usual label value), reading only its
// bytes: 8 at a time, the last word overlapping (or two overlapping 4-byte words when shorter).
bool PlainValue(std::string_view v) {
  const size_t n = v.size();
  const char* s = v.data();
  if (n >= 8) {
    for (size_t i = 0; i + 8 <= n; i += 8) {
      uint64_t x;
      std::memcpy(&x, s + i, 8);
      if (AnySpecialByte(x)) return false;
    }
    uint64_t last;
    std::memcpy(&last, s + n - 8, 8);
    return !AnySpecialByte(last);
  }
  if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, s, 4);
    std::memcpy(&b, s + n - 4, 4);
    return !AnySpecialByte(a) && !AnySpecialByte(b);
  }
  for (size_t i = 0; i < n; ++i)
    if (kLabelByteClass[static_cast<unsigned char>(s[i])] != 0) return false;
  return true;
}

// Writes the escaped value at `p` (room for 3 bytes per input byte) and returns the new end.
char* WriteLabelValue(char* p, std::string_view v) {
  if (PlainValue(v)) return CopyShort(p, v);  // most values need nothing
  size_t i = 0;
  const size_t n = v.size();
  while (i < n) {
    const char c = v[i];
    if (kLabelByteClass[static_cast<unsigned char>(c)] == 0) {
      *p++ = c;
      ++i;
    } else if (c == '\\' || c == '"') {
      *p++ = '\\';
      *p++ = c;
      ++i;
    } else if (c == '\n') {
      *p++ = '\\';
      *p++ = 'n';
      ++i;
    } else if (size_t len = Utf8SequenceLength(v, i); len > 0) {
      std::memcpy(p, v.data() + i, len);
      p += len;
      i += len;
    } else {  // U+FFFD REPLACEMENT CHARACTER for one invalid byte
      *p++ = static_cast<char>(0xEF);
      *p++ = static_cast<char>(0xBF);
      *p++ = static_cast<char>(0xBD);
      ++i;
    }
  }
  return p;
}

}  // namespace

size_t FormatValue(double v, char* out) {
  char* p = out;
  if (std::isnan(v)) return static_cast<size_t>(Copy(p, "NaN") - out);
  if (std::isinf(v)) return static_cast<size_t>(Copy(p, v > 0 ? "+Inf" : "-Inf") - out);
  // Whole numbers below 2^53 (counts, bytes, timestamps, 0 and 1): exact as integers, as %.16g.
  if (std::fabs(v) < 9007199254740992.0 && v == std::trunc(v)) {
    if (v == 0) return static_cast<size_t>(Copy(p, std::signbit(v) ? "-0" : "0") - out);
    auto r = std::to_chars(p, p + kMaxValueChars, static_cast<int64_t>(v));
    return static_cast<size_t>(r.ptr - out);
  }
  // Up to 6 decimals (ratios, watts, seconds): the smallest d for which v * 10^d is a whole
  // number k that reads back as v (k / 10^d is exactly how a reader rounds the text), written
  // as fixed-point: the shortest digits without going through the general conversion.
  static constexpr double kPow10[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
  if (const double a = std::fabs(v); a >= 1e-4 && a < 1e15) {
    for (int d = 1; d <= 6; ++d) {
      const double m = v * kPow10[d];
      if (std::fabs(m) >= 9007199254740992.0) break;
      if (m != std::trunc(m) || m / kPow10[d] != v) continue;
      int64_t k = static_cast<int64_t>(m);
      while (d > 0 && k % 10 == 0) {  // a product rounded up at a smaller d: drop its zeros
        k /= 10;
        --d;
      }
      if (k < 0) {
        *p++ = '-';
        k = -k;
      }
      char digits[24];
      const size_t n = static_cast<size_t>(std::to_chars(digits, digits + 24, k).ptr - digits);
      const size_t dd = static_cast<size_t>(d);
      if (n <= dd) {  // 0.000ddd
        p = Copy(p, "0.");
        for (size_t z = n; z < dd; ++z) *p++ = '0';
        p = Copy(p, {digits, n});
      } else {
        p = Copy(p, {digits, n - dd});
        if (dd > 0) {
          *p++ = '.';
          p = Copy(p, {digits + n - dd, dd});
        }
      }
      return static_cast<size_t>(p - out);
    }
  }
  // The shortest digits that round-trip, from "[-]d[.ddd]e±XX".
  char sci[kMaxValueChars];
  auto r = std::to_chars(sci, sci + sizeof sci, v, std::chars_format::scientific);
  const std::string_view s(sci, static_cast<size_t>(r.ptr - sci));
  const size_t e = s.find('e');
  int exp = 0;
  std::from_chars(s.data() + e + (s[e + 1] == '+' ? 2 : 1), s.data() + s.size(), exp);
  if (exp < -4 || exp >= 16) return static_cast<size_t>(Copy(p, s) - out);  // %g's notation
  std::string_view mantissa = s.substr(0, e);
  if (mantissa.front() == '-') {
    *p++ = '-';
    mantissa.remove_prefix(1);
  }
  char digits[kMaxValueChars];
  size_t n = 0;
  for (char c : mantissa)
    if (c != '.') digits[n++] = c;
  if (exp < 0) {
    p = Copy(p, "0.");
    for (int k = -1; k > exp; --k) *p++ = '0';
    p = Copy(p, {digits, n});
  } else if (n <= static_cast<size_t>(exp) + 1) {
    p = Copy(p, {digits, n});
    for (size_t k = n; k < static_cast<size_t>(exp) + 1; ++k) *p++ = '0';
  } else {
    p = Copy(p, {digits, static_cast<size_t>(exp) + 1});
    *p++ = '.';
    p = Copy(p, {digits + exp + 1, n - static_cast<size_t>(exp) - 1});
  }
  return static_cast<size_t>(p - out);
}

std::string FormatValue(double value) {
  char buf[kMaxValueChars];
  return std::string(buf, FormatValue(value, buf));
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out(value.size() * 3, '\0');
  out.resize(static_cast<size_t>(WriteLabelValue(out.data(), value) - out.data()));
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

TextWriter::TextWriter(std::span<const FamilyGroup* const> groups, size_t size_hint,
                       const FamilyFilter* filter)
    : filter_(filter && !filter->keeps_everything() ? filter : nullptr) {
  for (const FamilyGroup* g : groups)
    for (const FamilySpec& spec : g->families) Find(spec);
  declared_ = families_.size();
  if (size_hint > 0) text_.Reserve(size_hint + size_hint / 16);
}

TextWriter::TextWriter(std::span<const FamilyGroup* const> groups, TextBuffer buffer,
                       const FamilyFilter* filter)
    : TextWriter(groups, 0, filter) {
  text_ = std::move(buffer);
  text_.Clear();
}

TextBuffer::~TextBuffer() {
  if (data_) ::munmap(data_, capacity_);
}

TextBuffer::TextBuffer(TextBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      capacity_(std::exchange(o.capacity_, 0)) {}

TextBuffer& TextBuffer::operator=(TextBuffer&& o) noexcept {
  if (this != &o) {
    if (data_) ::munmap(data_, capacity_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
  }
  return *this;
}

namespace {

// `len` (a multiple of TextBuffer::kHugeFrom) bytes at an address aligned to it, marked for
// transparent huge pages (a no-op where THP is off): filling it costs a fault per 2 MiB instead
// of per 4 KiB. The kernel aligns only some large mappings itself, hence the trimming.
void* MapHuge(size_t len) {
  constexpr size_t kAlign = TextBuffer::kHugeFrom;
  void* p =
      ::mmap(nullptr, len + kAlign, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return p;
  const uintptr_t start = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = (start + kAlign - 1) & ~(uintptr_t{kAlign} - 1);
  if (aligned > start) ::munmap(p, aligned - start);
  if (const size_t tail = start + len + kAlign - (aligned + len); tail > 0)
    ::munmap(reinterpret_cast<void*>(aligned + len), tail);
  ::madvise(reinterpret_cast<void*>(aligned), len, MADV_HUGEPAGE);
  return reinterpret_cast<void*>(aligned);
}

}  // namespace

char* TextBuffer::Reserve(size_t n) {
  if (capacity_ - size_ >= n) return data_ + size_;
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t want = std::max({capacity_ * 2, size_ + n, size_t{64} << 10});
  void* p;
  if (want >= kHugeFrom) {
    // A new aligned mapping and a copy: a remapped one would lose the alignment.
    want = (want + kHugeFrom - 1) / kHugeFrom * kHugeFrom;
    p = MapHuge(want);
    if (p != MAP_FAILED && data_) {
      std::memcpy(p, data_, size_);
      ::munmap(data_, capacity_);
    }
  } else {
    want = (want + page - 1) / page * page;
    p = data_ ? ::mremap(data_, capacity_, want, MREMAP_MAYMOVE)
              : ::mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<char*>(p);
  capacity_ = want;
  return data_ + size_;
}

void TextBuffer::Append(std::string_view s) { Commit(Copy(Reserve(s.size()), s)); }

TextWriter::Family& TextWriter::Find(const FamilySpec& spec) {
  // Groups add one family's series in a row: the previous family is the usual answer.
  if (last_ < families_.size() && families_[last_].spec.name.data() == spec.name.data() &&
      families_[last_].spec.name.size() == spec.name.size())
    return families_[last_];
  auto it = index_.find(spec.name);
  if (it == index_.end()) {  // not tabled: kept (at the end) rather than lost
    it = index_.emplace(spec.name, families_.size()).first;
    Family f{spec, {}, {}, false, filter_ && !filter_->Includes(spec.name)};
    std::string& header = f.header;
    if (!spec.help.empty()) {  // as prometheus-cpp: no HELP line for an empty help
      header += "# HELP ";
      header += spec.name;
      header += ' ';
      header += EscapeHelp(spec.help);
      header += '\n';
    }
    header += "# TYPE ";
    header += spec.name;
    header += spec.type == MetricType::kCounter ? " counter\n" : " gauge\n";
    families_.push_back(std::move(f));
  }
  last_ = it->second;
  return families_[last_];
}

void TextWriter::Emit(size_t end) {
  peak_ = std::max(peak_, text_.size());
  for (; emitted_ < end; ++emitted_)
    for (const Run& r : families_[emitted_].runs)
      (*stream_)({text_.data() + r.begin, r.end - r.begin});
  text_.Clear();
  last_written_ = 0;
}

void TextWriter::Add(const FamilySpec& spec, const Labels& labels, double value) {
  Family& f = Find(spec);
  if (f.dropped) return;
  TextBuffer& b = text_;
  if (stream_) {
    const size_t index = last_;
    if (index < emitted_) {
      split_ = true;  // its text went out already: the caller renders again, whole
    } else if (!f.started && index >= last_written_ && index > emitted_) {
      Emit(index);  // every family with text comes before this one
    }
    last_written_ = std::max(last_written_, index + 1);
  }
  if (f.runs.empty() || f.runs.back().end != b.size()) {  // another family wrote since
    const size_t begin = b.size();
    if (!f.started) b.Append(f.header);
    f.started = true;
    f.runs.push_back({begin, begin});
  }
  size_t bound = spec.name.size() + 2 + 1 + kMaxValueChars + 1;
  for (const Label& l : labels) bound += l.name.size() + 4 + 3 * l.value.size();
  char* p = CopyShort(b.Reserve(bound), spec.name);
  if (!labels.empty()) {
    *p++ = '{';
    for (const Label& l : labels) {
      p = CopyShort(p, l.name);
      *p++ = '=';
      *p++ = '"';
      p = WriteLabelValue(p, l.value);
      *p++ = '"';
      *p++ = ',';
    }
    p[-1] = '}';
  }
  *p++ = ' ';
  p += FormatValue(value, p);
  *p++ = '\n';
  b.Commit(p);
  f.runs.back().end = b.size();
  // The family alone in the buffer (every family before it handed over): what it has so far goes
  // too, so that a family of 7 MB (gpuattr_pod_gpu_hours_total at 1,000 nodes) never is whole.
  if (stream_ && b.size() >= kStreamPiece && emitted_ == last_ && last_written_ == last_ + 1) {
    peak_ = std::max(peak_, b.size());
    for (const Run& r : f.runs) (*stream_)({b.data() + r.begin, r.end - r.begin});
    f.runs.clear();
    b.Clear();
  }
}

ExpositionText TextWriter::FinishChunks() && {
  ExpositionText out;
  for (const Family& f : families_)
    for (const Run& r : f.runs) out.pieces_.emplace_back(text_.data() + r.begin, r.end - r.begin);
  out.size_ = text_.size();
  if (text_.size() > 0) out.owned_.push_back(std::move(text_));  // the pieces point into it
  families_.clear();
  return out;
}

TextBuffer TextWriter::FinishInto(const std::function<void(std::string_view)>& sink) && {
  peak_ = std::max(peak_, text_.size());
  for (size_t i = emitted_; i < families_.size(); ++i)
    for (const Run& r : families_[i].runs) sink({text_.data() + r.begin, r.end - r.begin});
  families_.clear();
  return std::move(text_);
}

std::string TextWriter::Finish() && { return std::move(*this).FinishChunks().Join(); }

void ExpositionText::Add(TextBuffer chunk) {
  pieces_.push_back(chunk.view());
  size_ += chunk.size();
  owned_.push_back(std::move(chunk));
}

ExpositionText ExpositionText::Of(std::string_view text) {
  ExpositionText out;
  if (text.empty()) return out;
  TextBuffer b;
  b.Append(text);
  out.Add(std::move(b));
  return out;
}

std::string ExpositionText::Join() const {
  std::string out;
  out.reserve(size_);
  for (std::string_view p : pieces_) out.append(p);
  return out;
}

}  // namespace gpuattr::metrics
