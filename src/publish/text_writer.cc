#include "gpuattr/publish/text_writer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace gpuattr::publish {
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

// Writes the escaped value at `p` (room for 3 bytes per input byte) and returns the new end.
char* WriteLabelValue(char* p, std::string_view v) {
  size_t i = 0;
  const size_t n = v.size();
  while (i < n) {
    size_t start = i;
    while (i < n && kLabelByteClass[static_cast<unsigned char>(v[i])] == 0) ++i;
    std::memcpy(p, v.data() + start, i - start);
    p += i - start;
    if (i == n) break;
    const char c = v[i];
    if (c == '\\' || c == '"') {
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

char* Copy(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

void Free(char*& data) {
  std::free(data);
  data = nullptr;
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

TextWriter::TextWriter(std::span<const FamilyGroup* const> groups) {
  for (const FamilyGroup* g : groups)
    for (const FamilySpec& spec : g->families) Find(spec);
}

TextWriter::~TextWriter() {
  for (Family& f : families_) Free(f.body.data);
}

TextWriter::Family& TextWriter::Find(const FamilySpec& spec) {
  // Groups add one family's series in a row: the previous family is the usual answer.
  if (last_ < families_.size() && families_[last_].spec.name.data() == spec.name.data() &&
      families_[last_].spec.name.size() == spec.name.size())
    return families_[last_];
  auto it = index_.find(spec.name);
  if (it == index_.end()) {  // not tabled: kept (at the end) rather than lost
    it = index_.emplace(spec.name, families_.size()).first;
    families_.push_back({spec, {}});
  }
  last_ = it->second;
  return families_[last_];
}

void TextWriter::Add(const FamilySpec& spec, const Labels& labels, double value) {
  Family& f = Find(spec);
  size_t bound = spec.name.size() + 2 + 1 + kMaxValueChars + 1;
  for (const Label& l : labels) bound += l.name.size() + 4 + 3 * l.value.size();
  Buffer& b = f.body;
  if (b.capacity - b.size < bound) {
    size_t capacity = std::max({b.capacity * 2, b.size + bound, size_t{4096}});
    void* grown = std::realloc(b.data, capacity);
    if (!grown) throw std::bad_alloc();
    b.data = static_cast<char*>(grown);
    b.capacity = capacity;
  }
  char* p = Copy(b.data + b.size, spec.name);
  if (!labels.empty()) {
    *p++ = '{';
    for (const Label& l : labels) {
      p = Copy(p, l.name);
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
  b.size = static_cast<size_t>(p - b.data);
}

std::string TextWriter::Finish() && {
  auto type_name = [](prometheus::MetricType t) {
    return t == prometheus::MetricType::Counter ? std::string_view("counter")
                                                : std::string_view("gauge");
  };
  std::vector<std::string> help(families_.size());
  size_t total = 0;
  for (size_t i = 0; i < families_.size(); ++i) {
    const Family& f = families_[i];
    if (f.body.size == 0) continue;
    help[i] = EscapeHelp(f.spec.help);
    total += 2 * f.spec.name.size() + help[i].size() + f.body.size + 32;
  }
  std::string out;
  out.reserve(total);
  for (size_t i = 0; i < families_.size(); ++i) {
    Family& f = families_[i];
    if (f.body.size == 0) continue;
    if (!help[i].empty()) {  // as prometheus-cpp: no HELP line for an empty help
      out += "# HELP ";
      out += f.spec.name;
      out += ' ';
      out += help[i];
      out += '\n';
    }
    out += "# TYPE ";
    out += f.spec.name;
    out += ' ';
    out += type_name(f.spec.type);
    out += '\n';
    out.append(f.body.data, f.body.size);
    Free(f.body.data);  // the family's text is in `out` now: give the memory back as we go
    f.body = {};
  }
  return out;
}

}  // namespace gpuattr::publish
