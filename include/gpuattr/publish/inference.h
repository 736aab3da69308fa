// Family group "inference": per-model gauges and rates of vLLM/SGLang servers, with generation
// tokens per joule of the serving pod's attributed power.
#pragma once

#include "gpuattr/inference/inference.h"
#include "gpuattr/publish/families.h"

namespace gpuattr::publish {

extern const FamilyGroup kInferenceGroup;  // inference.cc
void WriteInference(const inference::InferenceView& view, FamilyWriter& w);

}  // namespace gpuattr::publish
