// Prometheus text exposition parser: one pass per line, views into the body, no allocation per
// sample once the Exposition's vectors have grown to the body's size.
#include "gpuattr/expo/parser.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <limits>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpuattr::expo {
namespace {

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

// ---------------------------------------------------------------------------------------------
// Failures: the hot path returns a small code; the message is built only for kept errors.

enum class Fault : uint8_t {
  kNone,
  kLineTooLong,
  kExpectedName,       // token: what was found
  kAfterName,          // token: what followed the name
  kMissingName,        // label set without a metric name
  kNameTwice,          // two quoted names in one label set
  kBadLabelName,       // token: what was found
  kExpectedEquals,     // token: label name
  kExpectedQuote,      // token: label name
  kUnterminatedValue,  // token: label name
  kUnterminatedName,   // quoted name without its closing quote
  kInvalidUtf8Name,    // token: the quoted name
  kInvalidUtf8Value,   // token: label name
  kAfterLabelValue,    // token: label name
  kUnterminatedLabels,
  kTooManyLabels,  // count
  kMissingValue,
  kInvalidNumber,  // token
  kNumberRange,    // token
  kInvalidTimestamp,
  kTrailingText,
  kHelpWithoutName,
  kTypeWithoutName,
  kTypeWithoutType,  // token: family
  kInvalidType,      // token: the type word
};

struct Failure {
  Fault fault = Fault::kNone;
  std::string_view token;
  size_t count = 0;
};

// Quotes a piece of the input for an error message: at most 40 bytes, control and non-ASCII bytes
// as \xNN (messages stay printable ASCII whatever the exporter sent).
std::string QuoteInput(std::string_view s) {
  constexpr size_t kMax = 40;
  std::string out = "\"";
  size_t n = std::min(s.size(), kMax);
  for (size_t i = 0; i < n; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > kMax) out += "...";
  out += '"';
  return out;
}

std::string Describe(const Failure& f, const Limits& limits) {
  switch (f.fault) {
    case Fault::kNone:
      return "no error";
    case Fault::kLineTooLong:
      return "line longer than " + std::to_string(limits.max_line_bytes) + " bytes";
    case Fault::kExpectedName:
      return "expected a metric name, found " + QuoteInput(f.token);
    case Fault::kAfterName:
      return "unexpected " + QuoteInput(f.token) + " after the metric name";
    case Fault::kMissingName:
      return "label set without a metric name";
    case Fault::kNameTwice:
      return "two metric names in one label set";
    case Fault::kBadLabelName:
      return "invalid label name at " + QuoteInput(f.token);
    case Fault::kExpectedEquals:
      return "expected '=' after label name " + QuoteInput(f.token);
    case Fault::kExpectedQuote:
      return "expected '\"' to open the value of label " + QuoteInput(f.token);
    case Fault::kUnterminatedValue:
      return "unterminated label value (label " + QuoteInput(f.token) + ")";
    case Fault::kUnterminatedName:
      return "unterminated quoted name";
    case Fault::kInvalidUtf8Name:
      return "invalid UTF-8 in quoted name " + QuoteInput(f.token);
    case Fault::kInvalidUtf8Value:
      return "invalid UTF-8 in the value of label " + QuoteInput(f.token);
    case Fault::kAfterLabelValue:
      return "expected ',' or '}' after the value of label " + QuoteInput(f.token);
    case Fault::kUnterminatedLabels:
      return "unterminated label set (missing '}')";
    case Fault::kTooManyLabels:
      return "too many labels (" + std::to_string(f.count) + " > " +
             std::to_string(limits.max_labels_per_sample) + ")";
    case Fault::kMissingValue:
      return "missing value";
    case Fault::kInvalidNumber:
      return "invalid number " + QuoteInput(f.token);
    case Fault::kNumberRange:
      return "number out of range " + QuoteInput(f.token);
    case Fault::kInvalidTimestamp:
      return "invalid timestamp " + QuoteInput(f.token);
    case Fault::kTrailingText:
      return "unexpected text after the timestamp: " + QuoteInput(f.token);
    case Fault::kHelpWithoutName:
      return "HELP line without a metric name";
    case Fault::kTypeWithoutName:
      return "TYPE line without a metric name";
    case Fault::kTypeWithoutType:
      return "TYPE line for " + QuoteInput(f.token) + " without a type";
    case Fault::kInvalidType:
      return "invalid metric type " + QuoteInput(f.token);
  }
  return "unknown error";
}

std::optional<MetricType> TypeFromWord(std::string_view w) {
  if (w == "counter") return MetricType::kCounter;
  if (w == "gauge") return MetricType::kGauge;
  if (w == "histogram") return MetricType::kHistogram;
  if (w == "summary") return MetricType::kSummary;
  if (w == "untyped") return MetricType::kUntyped;
  if (w == "unknown") return MetricType::kUnknown;
  if (w == "info") return MetricType::kInfo;
  if (w == "stateset") return MetricType::kStateSet;
  if (w == "gaugehistogram") return MetricType::kGaugeHistogram;
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// The parser proper.

class Parser {
 public:
  Parser(std::string_view body, Exposition& out, const Limits& limits)
      : body_end_(body.data() + body.size()), out_(out), limits_(limits) {}

  void Line(const char* p, const char* e, uint32_t line) {
    if (e > p && e[-1] == '\r') --e;
    p = SkipBlanks(p, e);
    if (p == e) return;
    Failure f = *p == '#' ? Comment(p + 1, e) : SampleLine(p, e, line);
    if (f.fault != Fault::kNone) Fail(line, f);
  }

  void Fail(uint32_t line, const Failure& f) {
    ++out_.error_count;
    if (out_.errors.size() < limits_.max_errors_kept) {
      out_.errors.push_back(ParseError{line, Describe(f, limits_)});
    }
  }

 private:
  // Reads a quoted string starting after its opening quote. On success *end points past the
  // closing quote and `value` views the unescaped text (in the body, or in out_.unescaped).
  // Returns false when the closing quote is not on this line.
  bool QuotedString(const char* p, const char* e, const char** end, std::string_view& value) {
    // Scanning a little past the line end is safe (still inside the body) and keeps the vector
    // loop going; scanning further would make unterminated values quadratic.
    const char* limit = body_end_ - e > 16 ? e + 16 : body_end_;
    const char* q = FindQuoteOrBackslash(p, limit);
    if (q < e && *q == '"') {  // common case: no escapes
      value = std::string_view(p, static_cast<size_t>(q - p));
      *end = q + 1;
      return true;
    }
    if (q >= e) return false;
    std::string& s = out_.unescaped.emplace_back(p, q);
    while (q < e) {
      char c = *q;
      if (c == '"') {
        value = s;
        *end = q + 1;
        return true;
      }
      if (c == '\\') {
        if (q + 1 >= e) break;
        char n = q[1];
        if (n == 'n') {
          s += '\n';
        } else if (n == '\\' || n == '"') {
          s += n;
        } else {  // unknown escape: kept as written
          s += '\\';
          s += n;
        }
        q += 2;
      } else {
        s += c;
        ++q;
      }
    }
    out_.unescaped.pop_back();
    return false;
  }

  // The fast path for the label set of a well-formed line, written as exporters write it:
  // `{name="value",...}` in ASCII with no blanks and no backslashes. The quote positions of the
  // whole line are found first as bitmasks, so finding each value's end is a bit operation rather
  // than a scan whose result the next label waits for. Returns the position after '}', or nullptr
  // when anything is unusual; the caller then rolls back and runs LabelSet, which accepts a
  // superset of this grammar (and produces the same labels for what is accepted here) and explains
  // errors.
  const char* FastLabels(const char* brace, const char* e) {
    constexpr size_t kMaxWords = 16;  // label sets up to 1 KiB; longer ones take the general path
    const char* base = brace + 1;
    size_t n = static_cast<size_t>(e - base);
    if (n == 0 || n > kMaxWords * 64) return nullptr;
    size_t words = (n + 63) / 64;
    uint64_t quotes[kMaxWords];
    uint64_t unusual = 0;
    for (size_t w = 0; w < words; ++w) {
      const char* b = base + 64 * w;
      uint64_t u = 0;
      if (body_end_ - b >= 64) {
        QuoteMasks64(b, &quotes[w], &u);
      } else {  // the body's last bytes: copy them so the vector loads stay inside our memory
        char tail[64] = {};
        std::memcpy(tail, b, static_cast<size_t>(body_end_ - b));
        QuoteMasks64(tail, &quotes[w], &u);
      }
      unusual |= w + 1 < words ? u : u & (~0ull >> (64 * words - n));
    }
    if (unusual != 0) return nullptr;
    quotes[words - 1] &= ~0ull >> (64 * words - n);  // only quotes before the line end

    size_t w = 0;
    uint64_t bits = quotes[0];
    auto next_quote = [&]() -> const char* {
      while (bits == 0) {
        if (++w == words) return nullptr;
        bits = quotes[w];
      }
      const char* q = base + 64 * w + __builtin_ctzll(bits);
      bits &= bits - 1;
      return q;
    };
    const char* start = base;
    size_t count = 0;
    for (;;) {
      if (*start == '}') return start + 1;  // empty set or trailing comma
      const char* open = next_quote();
      if (open == nullptr) return nullptr;
      const char* eq = open - 1;
      if (eq <= start || *eq != '=' || !Is(*start, kLabelStart)) return nullptr;
      if (SpanName<false>(start + 1, body_end_) != eq) return nullptr;
      const char* close = next_quote();
      if (close == nullptr || close + 1 >= e) return nullptr;
      if (++count > limits_.max_labels_per_sample) return nullptr;
      out_.labels.push_back(
          Label{std::string_view(start, static_cast<size_t>(eq - start)),
                std::string_view(open + 1, static_cast<size_t>(close - open - 1))});
      if (close[1] == '}') return close + 2;
      if (close[1] != ',') return nullptr;
      start = close + 2;
      if (start >= e) return nullptr;
    }
  }

  Failure SampleLine(const char* p, const char* e, uint32_t line) {
    Sample s;
    s.line = line;
    s.label_begin = static_cast<uint32_t>(out_.labels.size());
    if (Is(*p, kNameStart)) {
      const char* n = SpanName<true>(p + 1, body_end_);
      s.name = std::string_view(p, static_cast<size_t>(n - p));
      p = n;
      if (p < e && !IsBlank(*p) && *p != '{') {
        return {Fault::kAfterName, std::string_view(p, static_cast<size_t>(SkipToBlank(p, e) - p))};
      }
      p = SkipBlanks(p, e);
    } else if (*p != '{') {
      return {Fault::kExpectedName,
              std::string_view(p, static_cast<size_t>(SkipToBlank(p, e) - p))};
    }
    if (p < e && *p == '{') {
      const char* after = limits_.fast_path ? FastLabels(p, e) : nullptr;
      if (after != nullptr) {
        p = after;
      } else {
        out_.labels.resize(s.label_begin);
        Failure f = LabelSet(p + 1, e, &p, s);
        if (f.fault != Fault::kNone) {
          out_.labels.resize(s.label_begin);
          return f;
        }
      }
      if (s.name.empty()) {
        out_.labels.resize(s.label_begin);
        return {Fault::kMissingName, {}};
      }
      p = SkipBlanks(p, e);
    }
    s.label_count = static_cast<uint32_t>(out_.labels.size() - s.label_begin);

    // Value, then an optional timestamp, then an optional exemplar (" # {...} v [ts]").
    if (p == e) return Undo(s, {Fault::kMissingValue, {}});
    const char* v_end = SkipToBlank(p, e);
    switch (ParseNumber(p, v_end, s.value)) {
      case NumberStatus::kOk:
        break;
      case NumberStatus::kInvalid:
        return Undo(s, {Fault::kInvalidNumber, std::string_view(p, size_t(v_end - p))});
      case NumberStatus::kOutOfRange:
        return Undo(s, {Fault::kNumberRange, std::string_view(p, size_t(v_end - p))});
    }
    p = SkipBlanks(v_end, e);
    if (p < e && *p != '#') {
      const char* t_end = SkipToBlank(p, e);
      double ts = 0;
      if (ParseNumber(p, t_end, ts) != NumberStatus::kOk) {
        return Undo(s, {Fault::kInvalidTimestamp, std::string_view(p, size_t(t_end - p))});
      }
      p = SkipBlanks(t_end, e);
    }
    if (p < e && *p != '#') {
      return Undo(s, {Fault::kTrailingText, std::string_view(p, size_t(e - p))});
    }
    out_.samples.push_back(s);
    return {};
  }

  Failure Undo(const Sample& s, Failure f) {
    out_.labels.resize(s.label_begin);
    return f;
  }

  // Parses labels after '{' up to and including '}'; *end points past the '}'.
  Failure LabelSet(const char* p, const char* e, const char** end, Sample& s) {
    size_t count = 0;
    for (;;) {
      p = SkipBlanks(p, e);
      if (p == e) return {Fault::kUnterminatedLabels, {}};
      if (*p == '}') {
        *end = p + 1;
        return {};
      }
      std::string_view name;
      if (Is(*p, kLabelStart)) {
        const char* n = SpanName<false>(p + 1, body_end_);
        name = std::string_view(p, static_cast<size_t>(n - p));
        p = SkipBlanks(n, e);
      } else if (*p == '"') {  // Prometheus 3 quoted label name, or the quoted metric name
        if (!QuotedString(p + 1, e, &p, name)) return {Fault::kUnterminatedName, {}};
        if (!ValidUtf8(name)) return {Fault::kInvalidUtf8Name, name};
        p = SkipBlanks(p, e);
        if (p == e || *p != '=') {  // not followed by '=': it is the metric name
          if (!s.name.empty()) return {Fault::kNameTwice, {}};
          s.name = name;
          if (p < e && *p == ',') ++p;
          continue;
        }
      } else {
        return {Fault::kBadLabelName,
                std::string_view(p, static_cast<size_t>(std::min(e, p + 16) - p))};
      }
      if (p == e || *p != '=') return {Fault::kExpectedEquals, name};
      p = SkipBlanks(p + 1, e);
      if (p == e || *p != '"') return {Fault::kExpectedQuote, name};
      std::string_view value;
      if (!QuotedString(p + 1, e, &p, value)) return {Fault::kUnterminatedValue, name};
      if (!ValidUtf8(value)) return {Fault::kInvalidUtf8Value, name};
      if (++count > limits_.max_labels_per_sample) return {Fault::kTooManyLabels, {}, count};
      out_.labels.push_back(Label{name, value});
      p = SkipBlanks(p, e);
      if (p < e && *p == ',') {
        ++p;
      } else if (p == e || *p != '}') {
        return {Fault::kAfterLabelValue, name};
      }
    }
  }

  // A line starting with '#': HELP, TYPE and UNIT are checked, anything else is a comment.
  Failure Comment(const char* p, const char* e) {
    p = SkipBlanks(p, e);
    const char* w = SkipToBlank(p, e);
    std::string_view word(p, static_cast<size_t>(w - p));
    bool help = word == "HELP";
    bool type = word == "TYPE";
    if (!help && !type) return {};  // comment, `# EOF`, `# UNIT`
    p = SkipBlanks(w, e);
    std::string_view family;
    if (p < e && *p == '"') {
      if (!QuotedString(p + 1, e, &p, family)) return {Fault::kUnterminatedName, {}};
    } else {
      const char* n = SkipToBlank(p, e);
      family = std::string_view(p, static_cast<size_t>(n - p));
      p = n;
    }
    if (family.empty()) return {help ? Fault::kHelpWithoutName : Fault::kTypeWithoutName, {}};
    if (help) return {};
    p = SkipBlanks(p, e);
    const char* t = SkipToBlank(p, e);
    std::string_view word2(p, static_cast<size_t>(t - p));
    if (word2.empty()) return {Fault::kTypeWithoutType, family};
    auto mt = TypeFromWord(word2);
    if (!mt) return {Fault::kInvalidType, word2};
    out_.types.push_back(TypeDecl{family, *mt});
    return {};
  }

  const char* body_end_;
  Exposition& out_;
  const Limits& limits_;
};

}  // namespace

std::string ParseError::Describe() const { return "line " + std::to_string(line) + ": " + reason; }

std::string_view MetricTypeName(MetricType type) {
  switch (type) {
    case MetricType::kUnknown:
      return "unknown";
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kSummary:
      return "summary";
    case MetricType::kUntyped:
      return "untyped";
    case MetricType::kInfo:
      return "info";
    case MetricType::kStateSet:
      return "stateset";
    case MetricType::kGaugeHistogram:
      return "gaugehistogram";
  }
  return "unknown";
}

std::optional<std::string_view> Exposition::LabelValue(const Sample& s,
                                                       std::string_view name) const {
  for (const Label& l : LabelsOf(s)) {
    if (l.name == name) return l.value;
  }
  return std::nullopt;
}

void Exposition::Clear() {
  samples.clear();
  labels.clear();
  types.clear();
  errors.clear();
  error_count = 0;
  truncated = false;
  sample_limit_hit = false;
  unescaped.clear();
}

void Parse(std::string_view body, Exposition& out, const Limits& limits) {
  out.Clear();
  if (body.size() > limits.max_body_bytes) {
    // Keep the prefix up to its last complete line.
    out.truncated = true;
    body = body.substr(0, limits.max_body_bytes);
    size_t nl = body.rfind('\n');
    body = nl == std::string_view::npos ? std::string_view() : body.substr(0, nl + 1);
  }
  Parser parser(body, out, limits);
  const char* p = body.data();
  const char* end = p + body.size();
  uint32_t line = 0;
  while (p < end) {
    ++line;
    auto* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    const char* e = nl != nullptr ? nl : end;
    if (static_cast<size_t>(e - p) > limits.max_line_bytes) {
      parser.Fail(line, Failure{Fault::kLineTooLong, {}});
    } else {
      parser.Line(p, e, line);
      if (out.samples.size() > limits.max_samples) {
        // The first sample over the limit: dropped with its labels, and parsing stops.
        out.labels.resize(out.samples.back().label_begin);
        out.samples.pop_back();
        out.sample_limit_hit = true;
        break;
      }
    }
    if (nl == nullptr) break;
    p = nl + 1;
  }
}

}  // namespace gpuattr::expo
