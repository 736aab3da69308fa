// Inference server reader (vLLM v1/v0, SGLang): one InferenceReading per served model, summed over
// data-parallel engines (KV-cache usage: the max over engines).
#pragma once

#include <string_view>

#include "gpuattr/expo/parser.h"
#include "gpuattr/sources/limits.h"
#include "gpuattr/sources/readings.h"

namespace gpuattr::sources {

// Within `limits` (sources/limits.h): reading stops at the first model over its limit and,
// when `breach` is given, says which (the caller then rejects the body whole). The default reads
// everything.
InferenceReadings ReadInference(const expo::Exposition& exposition,
                                const BodyLimits& limits = BodyLimits::Unlimited(),
                                LimitBreach* breach = nullptr);

// "/models/gemma-4-E4B-it" → "gemma-4-E4B-it"; "google/gemma-3/" → "gemma-3".
std::string_view ModelFromModelName(std::string_view model_name);

}  // namespace gpuattr::sources
