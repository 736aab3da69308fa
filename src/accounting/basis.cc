// Basis names and card models' slice counts (docs/accounting.md).
#include <string>

#include "gpuattr/accounting/accounting.h"
#include "gpuattr/attribution/node_shape.h"

namespace gpuattr::accounting {

std::string_view BasisName(Basis basis) {
  switch (basis) {
    case Basis::kAllocation:
      return "allocation";
    case Basis::kMemory:
      return "memory";
    case Basis::kUsage:
      return "usage";
  }
  return "allocation";
}

std::optional<Basis> ParseBasis(std::string_view name) {
  for (Basis b : kAllBases)
    if (BasisName(b) == name) return b;
  return std::nullopt;
}

int KnownSliceCount(std::string_view model) { return attribution::ModelSliceCount(model); }

}  // namespace gpuattr::accounting
