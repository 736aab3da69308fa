// Family group "inference": per-model gauges and rates of vLLM/SGLang servers, with generation
// tokens per joule of the serving pod's attributed power.
#pragma once

#include "gpuattr/inference/inference.h"
#include "gpuattr/metrics/families.h"

namespace gpuattr::metrics {

extern const FamilyGroup kInferenceGroup;  // inference.cc
void WriteInference(const inference::InferenceView& view, FamilyWriter& w);

}  // namespace gpuattr::metrics
