// Inference server reader (vLLM v1/v0, SGLang): one InferenceReading per served model, summed over
// data-parallel engines (KV-cache usage: the max over engines).
#pragma once

#include <string_view>

#include "gpuattr/expo/parser.h"
#include "gpuattr/sources/readings.h"

namespace gpuattr::sources {

InferenceReadings ReadInference(const expo::Exposition& exposition);

// "/models/gemma-4-E4B-it" → "gemma-4-E4B-it"; "google/gemma-3/" → "gemma-3".
std::string_view ModelFromModelName(std::string_view model_name);

}  // namespace gpuattr::sources
