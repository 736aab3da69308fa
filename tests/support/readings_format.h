// Stable, line-oriented text dumps of readings for the sources golden files and test messages.
#pragma once

#include <string>

#include "gpuattr/sources/readings.h"

namespace gpuattr::sources {

std::string FormatReadings(const DcgmReadings& readings);
std::string FormatReadings(const ProcessReadings& readings);
std::string FormatReadings(const InferenceReadings& readings);
std::string FormatStats(const ReadStats& stats);

// Text that reads back as the same double: whole numbers below 1e15 in full ("73400320000"),
// others in the shortest round-trip form ("0.87", "1e+21").
std::string FormatNumber(double value);

}  // namespace gpuattr::sources
