// Family group "health": device health (one-hot), device health issues, node health (one-hot).
#pragma once

#include <string>

#include "gpuattr/attribution/types.h"
#include "gpuattr/publish/families.h"

namespace gpuattr::publish {

extern const FamilyGroup kHealthGroup;  // health.cc
void WriteHealth(const attribution::Attribution& a, FamilyWriter& w);

// Status page section: devices and nodes that are critical or warning, with their issues (HTML,
// every value escaped). Says so when nothing is wrong.
std::string RenderHealthSection(const Snapshot& snapshot);

}  // namespace gpuattr::publish
