// Family group "devices": devices (whole GPUs and MIG slices), their gauges, candidate pods and
// card power (docs/design.md#metrics).
#pragma once

#include "gpuattr/attribution/types.h"
#include "gpuattr/metrics/families.h"

namespace gpuattr::metrics {

extern const FamilyGroup kDevicesGroup;  // devices.cc
void WriteDevices(const attribution::Attribution& a, FamilyWriter& w);

}  // namespace gpuattr::metrics
