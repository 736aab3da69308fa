// Family group "allocation": the scheduler's view — requested devices per pod and namespace, GPU
// node device totals and per-resource free, pending GPU pods with their age and hint.
#pragma once

#include "gpuattr/allocation/types.h"
#include "gpuattr/publish/families.h"

namespace gpuattr::publish {

extern const FamilyGroup kAllocationGroup;  // allocation.cc
void WriteAllocation(const allocation::Allocation& a, FamilyWriter& w);

}  // namespace gpuattr::publish
