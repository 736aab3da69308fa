// Family group "rightsizing": per workload, its recommendation and the observations behind it
// (docs/rightsizing.md).
#pragma once

#include <string>

#include "gpuattr/metrics/families.h"
#include "gpuattr/rightsizing/rightsizing.h"

namespace gpuattr::metrics {

extern const FamilyGroup kRightsizingGroup;  // rightsizing.cc
void WriteRightsizing(const std::string& cluster, const rightsizing::RightsizingView& view,
                      FamilyWriter& w);

}  // namespace gpuattr::metrics
