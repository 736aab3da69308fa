#include "gpuattr/sources/label_budget.h"

namespace gpuattr::sources {
namespace {

// C0 controls and DEL, as bytes: UTF-8 never uses them inside a multi-byte character.
bool IsAsciiControl(unsigned char c) { return c < 0x20 || c == 0x7f; }

// C1 controls (U+0080-U+009F, UTF-8 C2 80..C2 9F), bidirectional overrides U+202A-U+202E
// (E2 80 AA..AE) and isolates U+2066-U+2069 (E2 81 A6..A9), at `text[i]`.
bool IsBadSequence(std::string_view text, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  if (at(i) == 0xc2) return i + 1 < text.size() && at(i + 1) >= 0x80 && at(i + 1) <= 0x9f;
  if (at(i) != 0xe2 || i + 2 >= text.size()) return false;
  const unsigned char b = at(i + 1), c = at(i + 2);
  return (b == 0x80 && c >= 0xaa && c <= 0xae) || (b == 0x81 && c >= 0xa6 && c <= 0xa9);
}

}  // namespace

std::string_view LabelTextVerdict(std::string_view text) {
  if (text.size() > kMaxLabelBytes) return kLabelTooLong;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (IsAsciiControl(c)) return kBadLabel;
    } else if (IsBadSequence(text, i)) {
      return kBadLabel;
    }
  }
  return {};
}

std::string_view LabelsVerdict(std::span<const expo::Label> labels) {
  for (const expo::Label& l : labels) {
    if (std::string_view why = LabelTextVerdict(l.value); !why.empty()) return why;
    if (std::string_view why = LabelTextVerdict(l.name); !why.empty()) return why;
  }
  return {};
}

}  // namespace gpuattr::sources
