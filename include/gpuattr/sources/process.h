// Per-process GPU exporter reader: gpu_process_memory_bytes and friends → ProcessReadings. HAMi's
// vGPU monitor is read by the same reader: each container's memory on a card is one reading
// without a pid (aliases.h).
#pragma once

#include "gpuattr/expo/parser.h"
#include "gpuattr/sources/limits.h"
#include "gpuattr/sources/readings.h"

namespace gpuattr::sources {

// Within `limits` (sources/limits.h): reading stops at the first device or pod over its limit and,
// when `breach` is given, says which (the caller then rejects the body whole). The default reads
// everything.
ProcessReadings ReadProcess(const expo::Exposition& exposition,
                            const BodyLimits& limits = BodyLimits::Unlimited(),
                            LimitBreach* breach = nullptr);

}  // namespace gpuattr::sources
