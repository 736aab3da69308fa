// Family group "pods": pod ↔ device links and per-pod usage, power and attribution method.
#pragma once

#include "gpuattr/attribution/types.h"
#include "gpuattr/metrics/families.h"

namespace gpuattr::metrics {

extern const FamilyGroup kPodsGroup;  // pods.cc
void WritePods(const attribution::Attribution& a, FamilyWriter& w);

}  // namespace gpuattr::metrics
