// The parts of the settings table that live outside settings.cc (settings_costs.cc).
#pragma once

#include <vector>

#include "gpuattr/app/settings.h"

namespace gpuattr::app {

std::vector<Setting> AccountingSettings();
std::vector<Setting> RightsizingSettings();

}  // namespace gpuattr::app
