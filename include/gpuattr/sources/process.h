// Per-process GPU exporter reader: gpu_process_memory_bytes and friends → ProcessReadings.
#pragma once

#include "gpuattr/expo/parser.h"
#include "gpuattr/sources/readings.h"

namespace gpuattr::sources {

ProcessReadings ReadProcess(const expo::Exposition& exposition);

}  // namespace gpuattr::sources
