// Kubernetes resource quantities ("1", "2", "500m", "10Gi", "1.5k", "1e3") as exact integers.
#pragma once

#include <cstdint>
#include <string_view>

#include "gpuattr/util/status.h"

namespace gpuattr::kube {

// The quantity in milli-units ("500m" → 500, "2" → 2000), rounded up as Kubernetes does.
// Suffixes: n u m k M G T P E, Ki Mi Gi Ti Pi Ei, and decimal exponents (e3, E-2).
Result<int64_t> ParseQuantityMilli(std::string_view text);

// The quantity in whole units, rounded up like Quantity.Value() ("500m" → 1, "1Ki" → 1024).
Result<int64_t> ParseQuantity(std::string_view text);

}  // namespace gpuattr::kube
