#include "gpuattr/kube/hami_register.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>

#include "gpuattr/util/json_document.h"

namespace gpuattr::kube {
namespace {

std::optional<int64_t> PositiveInt(std::string_view v, int64_t max) {
  int64_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size() || n < 1 || n > max) return std::nullopt;
  return n;
}

std::optional<HamiRegistration> Read(std::string_view text) {
  HamiRegistration out;
  auto add = [&](int64_t count) {
    ++out.cards;
    out.split = std::max(out.split, count);
    return out.cards <= kHamiMaxCards;
  };
  if (text.starts_with("[")) {
    auto doc = JsonDocument::Parse(std::string(text));
    if (!doc.ok() || !doc->Root().is_array()) return std::nullopt;
    for (JsonValue card : doc->Root().Elements()) {
      JsonValue count = card.Find("count");
      if (!card.Find("id").is_string() || !count.is_integer() || count.integer() < 1 ||
          count.integer() > kHamiMaxSplit || !add(count.integer()))
        return std::nullopt;
    }
  } else {
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find(':', start);
      if (end == std::string_view::npos) return std::nullopt;  // every card ends with ':'
      std::string_view card = text.substr(start, end - start);
      start = end + 1;
      if (card.empty()) continue;
      const size_t c1 = card.find(',');
      const size_t c2 = c1 == std::string_view::npos ? c1 : card.find(',', c1 + 1);
      if (c2 == std::string_view::npos || c1 == 0) return std::nullopt;
      auto count = PositiveInt(card.substr(c1 + 1, c2 - c1 - 1), kHamiMaxSplit);
      if (!count || !add(*count)) return std::nullopt;
    }
  }
  if (out.cards == 0) return std::nullopt;
  return out;
}

}  // namespace

HamiRegistration ReadHamiRegistration(std::string_view text) {
  std::optional<HamiRegistration> r = Read(text);
  return r ? *r : HamiRegistration{.malformed = true};
}

}  // namespace gpuattr::kube
