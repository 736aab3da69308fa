// Family group "namespaces": per-namespace sums of attributed GPU use.
#pragma once

#include "gpuattr/attribution/types.h"
#include "gpuattr/metrics/families.h"

namespace gpuattr::metrics {

extern const FamilyGroup kNamespacesGroup;  // namespaces.cc
void WriteNamespaces(const attribution::Attribution& a, FamilyWriter& w);

}  // namespace gpuattr::metrics
