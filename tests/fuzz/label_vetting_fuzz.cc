// libFuzzer target for the label vetting of issue 25 (sources/label_budget.h): LabelTextVerdict,
// which scans bytes, against a reference that decodes UTF-8 into code points first. Both must
// agree on every input: a value is too long over 256 bytes, else bad exactly when it holds a
// C0 control, DEL, a C1 control, or a bidirectional override or isolate.
#include <cstdint>
#include <optional>
#include <string_view>

#include "gpuattr/sources/label_budget.h"

#include "fuzz_check.h"

using gpuattr::fuzz::Check;

namespace {

bool Continuation(unsigned char c) { return (c & 0xc0) == 0x80; }

// The code point at text[i] and its length, or nullopt (length 1) for a byte that starts no
// well-formed sequence (a lone continuation, a truncated or overlong sequence, a surrogate):
// such bytes are no control character to a terminal.
std::optional<char32_t> Decode(std::string_view text, size_t i, size_t& len) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = at(i);
  len = 1;
  if (c < 0x80) return c;
  size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
  if (c > 0xf4) n = 0;
  if (n == 0 || i + n > text.size()) return std::nullopt;
  char32_t cp = c & (0xff >> (n + 1));
  for (size_t k = 1; k < n; ++k) {
    if (!Continuation(at(i + k))) return std::nullopt;
    cp = (cp << 6) | (at(i + k) & 0x3f);
  }
  const char32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return std::nullopt;
  len = n;
  return cp;
}

bool BadCodePoint(char32_t cp) {
  return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

bool ReferenceBad(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t len = 1;
    if (auto cp = Decode(text, i, len); cp && BadCodePoint(*cp)) return true;
    i += len;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuattr::sources;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string_view verdict = LabelTextVerdict(text);
  if (text.size() > kMaxLabelBytes) {
    Check(verdict == kLabelTooLong, "a value over 256 bytes is label_too_long");
    return 0;
  }
  Check(verdict.empty() || verdict == kBadLabel, "a short value is held or bad_label");
  Check((verdict == kBadLabel) == ReferenceBad(text),
        "the byte scan and the code-point reference agree");
  return 0;
}
