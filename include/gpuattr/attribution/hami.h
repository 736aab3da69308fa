// HAMi's device assignment of a pod (docs/design.md#node-shapes). Format as documented by HAMi
// v2.10.0 (docs/develop/protocol.md, "Schedule Decision"): the annotation
// `hami.io/vgpu-devices-allocated` lists each container's devices, every device as
// `<UUID>,<type>,<memory MiB>,<cores %>:` and every container closed by `;`; cores 0 means no core
// limit. The text is untrusted: bounded in length and count, and any malformed entry rejects the
// whole annotation (a pod whose assignment cannot be read holds nothing that gpuattr could prove).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/util/status.h"

namespace gpuattr::attribution {

inline constexpr std::string_view kHamiAllocatedAnnotation = "hami.io/vgpu-devices-allocated";
inline constexpr size_t kHamiMaxAnnotationBytes = 16 * 1024;
inline constexpr size_t kHamiMaxDevices = 64;  // over all containers of one pod

struct HamiDevice {
  std::string uuid;  // "GPU-<uuid>" as NVML names the card
  int64_t memory_mib = 0;
  int64_t cores_percent = 0;  // 0: no core limit
};

// The pod's devices, container by container flattened, in annotation order. An error names what
// is wrong (never echoes the whole annotation).
Result<std::vector<HamiDevice>> ParseHamiAllocation(std::string_view text);

// The fraction of a card a device entry holds: max(memory ÷ the card's memory, cores ÷ 100),
// clamped to [0, 1]; memory_total_mib ≤ 0 (unknown) leaves the cores share alone. A device with
// cores 0 and unknown card memory holds an unknown fraction: returns a negative value.
double HamiFraction(const HamiDevice& d, double memory_total_mib);

}  // namespace gpuattr::attribution
