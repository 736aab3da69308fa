// Family group "allocation": the scheduler's view — requested devices per pod and namespace, GPU
// node device totals and per-resource free, pending GPU pods with their age and hint.
#pragma once

#include "gpuattr/allocation/types.h"
#include "gpuattr/metrics/families.h"

namespace gpuattr::metrics {

extern const FamilyGroup kAllocationGroup;  // allocation.cc
void WriteAllocation(const allocation::Allocation& a, FamilyWriter& w);

}  // namespace gpuattr::metrics
