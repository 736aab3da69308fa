// Family group "health": device health (one-hot), device health issues, node health (one-hot).
#pragma once

#include "gpuattr/metrics/families.h"
#include "gpuattr/model/snapshot.h"

namespace gpuattr::metrics {

extern const FamilyGroup kHealthGroup;  // health.cc
// The devices' health from the attribution, the nodes' from the node-health stage.
void WriteHealth(const model::CycleOutput& out, FamilyWriter& w);

}  // namespace gpuattr::metrics
