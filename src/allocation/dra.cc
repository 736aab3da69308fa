// DRA slices and claims → devices per node, allocations per node and pod, wants of pending pods.
#include "gpuattr/allocation/dra.h"

#include <tuple>

namespace gpuattr::allocation {
namespace {

using DeviceKey = std::tuple<std::string, std::string, std::string>;  // driver, pool, device

struct SliceDevice {
  std::string node;
  const kube::DraDevice* device = nullptr;
};

std::map<DeviceKey, SliceDevice> IndexGpuDevices(const kube::ClusterObjects& objects) {
  std::map<DeviceKey, SliceDevice> out;
  for (const auto& [name, slice] : objects.resource_slices) {
    if (slice.driver != kGpuDraDriver) continue;
    for (const kube::DraDevice& d : slice.devices)
      out.emplace(DeviceKey{slice.driver, slice.pool, d.name}, SliceDevice{slice.node_name, &d});
  }
  return out;
}

// The resource of an allocated result: from the published device, else from the class of the
// claim's request (the slice may be gone or not listed yet).
std::optional<std::string> ResultResource(const kube::ResourceClaim& claim,
                                          const kube::DraAllocatedDevice& result,
                                          const SliceDevice* found) {
  if (found) return DraResourceName(*found->device);
  for (const kube::DraRequest& r : claim.requests)
    if (r.name == result.request)
      if (auto type = DraClassType(r.device_class_name))
        return std::string(kGpuDraDriver) + "/" + *type;
  return std::string(kGpuDraDriver) + "/gpu";
}

}  // namespace

std::string DraDeviceType(const kube::DraDevice& device) {
  if (!device.type.empty()) return device.type;
  return device.profile.empty() ? "gpu" : "mig";
}

std::string DraResourceName(const kube::DraDevice& device) {
  std::string type = DraDeviceType(device);
  std::string prefix = std::string(kGpuDraDriver) + "/";
  if (type == "mig" && !device.profile.empty()) return prefix + "mig-" + device.profile;
  return prefix + type;
}

std::optional<std::string> DraClassType(std::string_view device_class_name) {
  if (device_class_name == "gpu.nvidia.com") return "gpu";
  if (device_class_name == "mig.nvidia.com") return "mig";
  return std::nullopt;
}

DraView ReadDra(const kube::ClusterObjects& objects) {
  DraView view;
  const auto devices = IndexGpuDevices(objects);
  for (const auto& [key, d] : devices) {
    if (d.node.empty()) continue;  // not bound to one node: no node capacity to add it to
    view.node_devices[d.node][DraResourceName(*d.device)] += 1;
    view.node_types[d.node][DraDeviceType(*d.device)] += 1;
  }
  for (const auto& [key, claim] : objects.resource_claims) {
    if (!claim.allocated) continue;
    for (const kube::DraAllocatedDevice& result : claim.results) {
      if (result.driver != kGpuDraDriver) continue;
      auto it = devices.find(DeviceKey{result.driver, result.pool, result.device});
      const SliceDevice* found = it == devices.end() ? nullptr : &it->second;
      const std::string resource = *ResultResource(claim, result, found);
      if (found && !found->node.empty()) view.node_allocated[found->node][resource] += 1;
      for (const kube::DraConsumer& consumer : claim.reserved_for) {
        if (consumer.resource != "pods") continue;
        if (!objects.FindPod(claim.namespace_, consumer.name)) continue;
        view.pod_held[kube::PodId{claim.namespace_, consumer.name}][resource] += 1;
      }
    }
  }
  return view;
}

PodClaims ReadPodClaims(const kube::Pod& pod, const kube::ClusterObjects& objects) {
  PodClaims out;
  for (const kube::PodResourceClaim& ref : pod.resource_claims) {
    if (ref.claim_name.empty()) continue;  // not generated from its template yet: unknown
    auto it = objects.resource_claims.find(pod.namespace_ + "/" + ref.claim_name);
    if (it == objects.resource_claims.end()) continue;
    const kube::ResourceClaim& claim = it->second;
    for (const kube::DraRequest& r : claim.requests) {
      auto type = DraClassType(r.device_class_name);
      if (!type) continue;
      out.gpu = true;
      if (!claim.allocated)
        out.wants.push_back(DraWant{claim.name, *type, r.count, r.allocation_mode == "All"});
    }
    if (!claim.allocated) continue;
    for (const kube::DraAllocatedDevice& result : claim.results)
      if (result.driver == kGpuDraDriver) out.gpu = true;
  }
  return out;
}

}  // namespace gpuattr::allocation
