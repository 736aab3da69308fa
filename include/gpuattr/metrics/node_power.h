// Family group "node_power": node power and the part no pod accounts for.
#pragma once

#include "gpuattr/attribution/types.h"
#include "gpuattr/metrics/families.h"

namespace gpuattr::metrics {

extern const FamilyGroup kNodePowerGroup;  // node_power.cc
void WriteNodePower(const attribution::Attribution& a, FamilyWriter& w);

}  // namespace gpuattr::metrics
