// dcgm-exporter reader: parsed exposition → DcgmRecords in base units (docs/design.md#dcgm-exporter
// and docs/design.md#attribution).
//
// Lines are grouped by their full identity (device key + pod labels incl. pod_uid and vgpu), so the
// repeated device lines of time-sliced pods and dcgm-exporter's per-pod FB_USED/GPU_UTIL lines stay
// separate records. Deciding which of them counts (max over repeats, per-pod values) is the
// attribution's job, not this reader's.
//
// Every DCGM line with a device key (gpu or UUID, plus GPU_I_ID on a MIG slice) makes its record,
// whatever the field: a body trimmed to clocks or profiling fields still names its devices, MIG
// slices and pods. Fields this reader does not use set no value (unknown, never 0).
#pragma once

#include "gpuattr/expo/parser.h"
#include "gpuattr/sources/limits.h"
#include "gpuattr/sources/readings.h"

namespace gpuattr::sources {

// Within `limits` (sources/limits.h): reading stops at the first device or pod over its limit and,
// when `breach` is given, says which (the caller then rejects the body whole). The default reads
// everything.
DcgmReadings ReadDcgm(const expo::Exposition& exposition,
                      const BodyLimits& limits = BodyLimits::Unlimited(),
                      LimitBreach* breach = nullptr);

}  // namespace gpuattr::sources
