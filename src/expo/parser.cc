// Prometheus text exposition parser: one pass per line, views into the body, no allocation per
// sample once the Exposition's vectors have grown to the body's size.
#include "gpuattr/expo/parser.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "failure.h"
#include "lexer.h"

namespace gpuattr::expo {
namespace {

using detail::Failure;
using detail::Fault;

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
      out_.errors.push_back(ParseError{line, detail::Describe(f, limits_)});
    }
    DropUnescaped();  // a rejected line keeps nothing; only now: f.token may view these strings
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
    ++line_unescaped_;
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
    --line_unescaped_;
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
    line_unescaped_ = 0;  // kept with the sample
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
    if (help) {
      DropUnescaped();  // a HELP line keeps nothing
      return {};
    }
    p = SkipBlanks(p, e);
    const char* t = SkipToBlank(p, e);
    std::string_view word2(p, static_cast<size_t>(t - p));
    if (word2.empty()) return {Fault::kTypeWithoutType, family};
    auto mt = TypeFromWord(word2);
    if (!mt) return {Fault::kInvalidType, word2};
    if (limits_.keep_types)
      out_.types.push_back(TypeDecl{family, *mt});
    else
      DropUnescaped();
    line_unescaped_ = 0;
    return {};
  }

  // Removes the strings the current line unescaped: only kept lines hold memory.
  void DropUnescaped() {
    if (line_unescaped_ == 0) return;
    out_.unescaped.resize(out_.unescaped.size() - line_unescaped_);
    line_unescaped_ = 0;
  }

  const char* body_end_;
  Exposition& out_;
  const Limits& limits_;
  size_t line_unescaped_ = 0;  // strings the current line added to out_.unescaped
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
  label_limit_hit = false;
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
      const bool too_many_samples = out.samples.size() > limits.max_samples;
      if (too_many_samples || out.labels.size() > limits.max_labels) {
        // The first sample over a limit: dropped with its labels, and parsing stops.
        out.labels.resize(out.samples.back().label_begin);
        out.samples.pop_back();
        (too_many_samples ? out.sample_limit_hit : out.label_limit_hit) = true;
        break;
      }
    }
    if (nl == nullptr) break;
    p = nl + 1;
  }
}

}  // namespace gpuattr::expo
