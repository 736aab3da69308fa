// What kind of exporter produced a /metrics body, judged by content
// (docs/design.md#probes-and-classification).
#pragma once

#include <string>
#include <string_view>

namespace gpuattr::sources {

enum class BodyKind { kUnrecognised, kProcess, kDcgm, kVllm, kSglang };
std::string_view BodyKindName(BodyKind kind);  // "unrecognised", "process", "dcgm", ...

struct Classification {
  BodyKind kind = BodyKind::kUnrecognised;
  // Why: the metric that decided ("gpu_process_memory_bytes"), or for an unrecognised body what
  // it held instead (its first non-comment line, truncated to ~80 printable characters).
  std::string reason;
};

// Precedence: gpu_process_memory_bytes (a sample, or its # TYPE/# HELP on an idle node) → process;
// HAMi's vGPU monitor (hami_vgpu_memory_used_bytes or vGPU_device_memory_usage_in_bytes, else its
// host lines alone) → process;
// DCGM_FI_DEV_*/DCGM_FI_PROF_* (any case) or a dcgm-exporter 1.x name → dcgm; vllm:* → vllm;
// sglang:* → sglang; else unrecognised.
Classification ClassifyBody(std::string_view body);

}  // namespace gpuattr::sources
