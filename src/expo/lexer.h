// The lexical pieces of the text-format parser (parser.cc), apart from its grammar: character
// classes, the vector scans for names and quotes, the UTF-8 check and number parsing. Private to
// parser.cc, which alone includes it: internal linkage, so that the compiler inlines them as it
// did when they were one file.
#pragma once

#include <array>
#include <charconv>
#include <cstdint>
#include <string_view>
#include <system_error>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpuattr::expo {
namespace {  // internal linkage: parser.cc is the one includer (see above)

// ---------------------------------------------------------------------------------------------
// Character classes.

constexpr uint8_t kNameStart = 1;   // [a-zA-Z_:]
constexpr uint8_t kNameChar = 2;    // [a-zA-Z0-9_:]
constexpr uint8_t kLabelStart = 4;  // [a-zA-Z_]
constexpr uint8_t kLabelChar = 8;   // [a-zA-Z0-9_]

constexpr std::array<uint8_t, 256> MakeCharTable() {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    bool digit = c >= '0' && c <= '9';
    uint8_t v = 0;
    if (alpha || c == '_' || c == ':') v |= kNameStart;
    if (alpha || digit || c == '_' || c == ':') v |= kNameChar;
    if (alpha || c == '_') v |= kLabelStart;
    if (alpha || digit || c == '_') v |= kLabelChar;
    t[c] = v;
  }
  return t;
}
constexpr std::array<uint8_t, 256> kChars = MakeCharTable();

inline bool Is(char c, uint8_t cls) { return (kChars[static_cast<unsigned char>(c)] & cls) != 0; }
inline bool IsBlank(char c) { return c == ' ' || c == '\t'; }
inline const char* SkipBlanks(const char* p, const char* e) {
  while (p < e && IsBlank(*p)) ++p;
  return p;
}
inline const char* SkipToBlank(const char* p, const char* e) {
  while (p < e && !IsBlank(*p)) ++p;
  return p;
}

// End of the run of name characters starting at p: [a-zA-Z0-9_] plus ':' for metric names.
// `limit` may lie beyond the line: the line end ('\n', '\r' or the body end) stops the run anyway.
template <bool kColon>
inline const char* SpanName(const char* p, const char* limit) {
#if defined(__SSE2__)
  while (limit - p >= 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // Bytes >= 0x80 are negative as signed chars and fall outside every range below.
    __m128i lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
    __m128i alpha = _mm_and_si128(_mm_cmpgt_epi8(lower, _mm_set1_epi8('a' - 1)),
                                  _mm_cmplt_epi8(lower, _mm_set1_epi8('z' + 1)));
    __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                  _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
    __m128i ok = _mm_or_si128(_mm_or_si128(alpha, digit), _mm_cmpeq_epi8(v, _mm_set1_epi8('_')));
    if constexpr (kColon) ok = _mm_or_si128(ok, _mm_cmpeq_epi8(v, _mm_set1_epi8(':')));
    unsigned bad = ~static_cast<unsigned>(_mm_movemask_epi8(ok)) & 0xffffu;
    if (bad != 0) return p + __builtin_ctz(bad);
    p += 16;
  }
#endif
  while (p < limit && Is(*p, kColon ? kNameChar : kLabelChar)) ++p;
  return p;
}

// First '"' or '\\' in [p, limit), or limit. `limit` may lie beyond the current line (up to the end
// of the body), which lets the vector loop run without a scalar tail on almost every value.
inline const char* FindQuoteOrBackslash(const char* p, const char* limit) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  while (limit - p >= 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    int m = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
    if (m != 0) return p + __builtin_ctz(static_cast<unsigned>(m));
    p += 16;
  }
#endif
  while (p < limit && *p != '"' && *p != '\\') ++p;
  return p;
}

// Bit i of *quotes is set when b[i] is '"'; bit i of *unusual when b[i] is '\\' or not ASCII
// (64 bytes from b).
inline void QuoteMasks64(const char* b, uint64_t* quotes, uint64_t* unusual) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  uint64_t q = 0, u = 0;
  for (int i = 0; i < 4; ++i) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 16 * i));
    q |= static_cast<uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote))))
         << (16 * i);
    // movemask of v itself gives the high bits: the non-ASCII bytes.
    u |= static_cast<uint64_t>(static_cast<unsigned>(
             _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, backslash), v))))
         << (16 * i);
  }
  *quotes = q;
  *unusual = u;
#else
  uint64_t q = 0, u = 0;
  for (int i = 0; i < 64; ++i) {
    q |= static_cast<uint64_t>(b[i] == '"') << i;
    u |= static_cast<uint64_t>(b[i] == '\\' || static_cast<unsigned char>(b[i]) >= 0x80) << i;
  }
  *quotes = q;
  *unusual = u;
#endif
}

// Well-formed UTF-8 as Go's utf8.ValidString sees it: no overlong forms, surrogates or code
// points above U+10FFFF. Prometheus rejects label values that are not.
bool ValidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* e = p + s.size();
  while (p < e) {
    unsigned c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int n = 0;
    uint32_t cp = 0, min = 0;
    if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07, min = 0x10000;
    } else {
      return false;
    }
    if (e - p <= n) return false;
    for (int i = 1; i <= n; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
      cp = cp << 6 | (p[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    p += n + 1;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Numbers.

constexpr std::array<double, 16> kPow10 = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                           1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

enum class NumberStatus { kOk, kInvalid, kOutOfRange };

// Parses a whole token as Go's strconv.ParseFloat would for the forms exporters write.
NumberStatus ParseNumber(const char* p, const char* e, double& out) {
  if (p == e) return NumberStatus::kInvalid;
  bool negative = false;
  if (*p == '+' || *p == '-') {
    negative = *p == '-';
    ++p;
    if (p == e || *p == '+' || *p == '-') return NumberStatus::kInvalid;
  }
  // Fast path: up to 15 significant digits with an optional fraction ("%d", "%f" output). Both the
  // mantissa and the power of ten are exact doubles, so one division rounds correctly.
  uint64_t mantissa = 0;
  int digits = 0;
  int fraction = 0;
  const char* q = p;
  while (q < e && static_cast<unsigned>(*q - '0') < 10u && digits < 16) {
    mantissa = mantissa * 10 + static_cast<unsigned>(*q - '0');
    ++q;
    ++digits;
  }
  if (q < e && *q == '.') {
    ++q;
    while (q < e && static_cast<unsigned>(*q - '0') < 10u && digits < 16) {
      mantissa = mantissa * 10 + static_cast<unsigned>(*q - '0');
      ++q;
      ++digits;
      ++fraction;
    }
  }
  if (q == e && digits > 0 && digits <= 15) {
    double v = static_cast<double>(mantissa);
    if (fraction != 0) v /= kPow10[fraction];
    out = negative ? -v : v;
    return NumberStatus::kOk;
  }
  // General path: exponents, long mantissas, Inf/NaN (from_chars accepts them case-insensitively).
  double v = 0;
  auto [ptr, ec] = std::from_chars(p, e, v, std::chars_format::general);
  if (ptr != e) return NumberStatus::kInvalid;
  if (ec == std::errc::result_out_of_range) return NumberStatus::kOutOfRange;
  if (ec != std::errc()) return NumberStatus::kInvalid;
  out = negative ? -v : v;
  return NumberStatus::kOk;
}

}  // namespace
}  // namespace gpuattr::expo
