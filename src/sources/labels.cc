#include "gpuattr/sources/labels.h"

namespace gpuattr::sources {

ResolvedLabels::ResolvedLabels(std::span<const expo::Label> labels) {
  ranks_.fill(INT8_MAX);
  for (const expo::Label& l : labels) {
    if (l.value.empty()) continue;
    auto match = LookupLabel(l.name);
    if (!match) continue;
    const int i = static_cast<int>(match->key);
    if (match->rank < ranks_[i]) {
      values_[i] = l.value;
      ranks_[i] = static_cast<int8_t>(match->rank);
    }
  }
}

}  // namespace gpuattr::sources
