// DRA (resource.k8s.io) as the scheduler sees GPUs: devices the gpu.nvidia.com driver publishes
// per node, devices allocated to claims, and what unallocated claims ask for.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuattr/allocation/types.h"
#include "gpuattr/kube/objects.h"

namespace gpuattr::allocation {

inline constexpr std::string_view kGpuDraDriver = "gpu.nvidia.com";

// "gpu" or "mig" for a device of the gpu.nvidia.com driver (the `type` attribute; without it,
// a device with a MIG profile is "mig", else "gpu").
std::string DraDeviceType(const kube::DraDevice& device);
// "gpu.nvidia.com/gpu" or "gpu.nvidia.com/mig-3g.40gb" (docs/design.md#allocation).
std::string DraResourceName(const kube::DraDevice& device);
// The device type a device class asks for: gpu.nvidia.com → "gpu", mig.nvidia.com → "mig";
// none for classes that are not GPUs.
std::optional<std::string> DraClassType(std::string_view device_class_name);

// One request of a claim that is not allocated yet.
struct DraWant {
  std::string claim;  // the ResourceClaim's name
  std::string type;   // "gpu" or "mig"
  int64_t count = 1;
  bool all = false;  // allocationMode All: every matching device
};

struct DraView {
  std::map<std::string, ResourceCounts> node_devices;    // node → resource → devices published
  std::map<std::string, ResourceCounts> node_allocated;  // node → resource → devices allocated
  std::map<std::string, std::map<std::string, int64_t>> node_types;  // node → type → devices
  std::map<kube::PodId, ResourceCounts> pod_held;  // reservedFor pods → allocated devices
};

DraView ReadDra(const kube::ClusterObjects& objects);

// What a pod's GPU claims ask for: the wants of its unallocated requests. `gpu` is true when any
// claim of the pod is a GPU claim (a GPU device class or a gpu.nvidia.com result).
struct PodClaims {
  bool gpu = false;
  std::vector<DraWant> wants;
};
PodClaims ReadPodClaims(const kube::Pod& pod, const kube::ClusterObjects& objects);

}  // namespace gpuattr::allocation
