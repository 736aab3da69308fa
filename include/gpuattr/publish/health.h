// Family group "health": device health (one-hot), device health issues, node health (one-hot).
#pragma once

#include "gpuattr/attribution/types.h"
#include "gpuattr/publish/families.h"

namespace gpuattr::publish {

extern const FamilyGroup kHealthGroup;  // health.cc
void WriteHealth(const attribution::Attribution& a, FamilyWriter& w);

}  // namespace gpuattr::publish
