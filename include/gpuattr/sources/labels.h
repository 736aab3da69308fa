// A sample's labels resolved through the alias table: one slot per meaning, whatever the spelling.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "gpuattr/expo/parser.h"
#include "gpuattr/sources/aliases.h"

namespace gpuattr::sources {

inline constexpr int kLabelKeyCount = static_cast<int>(LabelKey::kFinishedReason) + 1;

class ResolvedLabels {
 public:
  // Empty values are absent. When a line carries two spellings of one key, the spelling listed
  // first in the alias table wins (e.g. `namespace` over `pod_namespace`).
  explicit ResolvedLabels(std::span<const expo::Label> labels);

  std::string_view Get(LabelKey key) const { return values_[static_cast<int>(key)]; }
  bool Has(LabelKey key) const { return !Get(key).empty(); }

 private:
  std::array<std::string_view, kLabelKeyCount> values_{};
  std::array<int8_t, kLabelKeyCount> ranks_{};
};

}  // namespace gpuattr::sources
