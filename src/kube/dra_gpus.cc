#include "gpuattr/kube/dra_gpus.h"

#include <tuple>

namespace gpuattr::kube {

bool IsDraGpuDevice(const ResourceSlice& slice, const DraDevice& device) {
  if (slice.driver != kNvidiaDraDriver) return false;
  if (device.type.empty()) return !device.uuid.empty();
  return device.type == "gpu" || device.type == "mig";
}

const std::set<PodId>* DraGpuIndex::HoldersOf(std::string_view uuid, bool mig_slice) const {
  if (uuid.empty()) return nullptr;
  auto own = by_uuid.find(uuid);
  auto slices = by_parent_uuid.find(uuid);
  const std::set<PodId>* a = own != by_uuid.end() ? &own->second : nullptr;
  const std::set<PodId>* b = slices != by_parent_uuid.end() ? &slices->second : nullptr;
  if (mig_slice) std::swap(a, b);
  return a != nullptr ? a : b;
}

DraGpuIndex IndexDraGpus(const ClusterObjects& objects) {
  DraGpuIndex out;
  if (objects.resource_slices.empty()) return out;
  // (driver, pool, device name) → the device, as allocation results name it.
  std::map<std::tuple<std::string_view, std::string_view, std::string_view>, const DraDevice*>
      devices;
  for (const auto& [name, slice] : objects.resource_slices) {
    for (const DraDevice& d : slice.devices) {
      if (!IsDraGpuDevice(slice, d)) continue;
      devices.emplace(std::make_tuple(std::string_view(slice.driver), std::string_view(slice.pool),
                                      std::string_view(d.name)),
                      &d);
      if (!d.uuid.empty()) out.by_uuid[d.uuid];
      if (!d.parent_uuid.empty()) out.by_parent_uuid[d.parent_uuid];
    }
  }
  for (const auto& [key, claim] : objects.resource_claims) {
    if (!claim.allocated) continue;
    std::set<PodId> pods;
    for (const DraConsumer& c : claim.reserved_for) {
      if (c.resource != "pods") continue;
      const Pod* pod = objects.FindPod(claim.namespace_, c.name);
      if (pod == nullptr || (!c.uid.empty() && !pod->uid.empty() && c.uid != pod->uid)) continue;
      const bool holds =
          pod->phase == "Running" || (pod->phase == "Pending" && !pod->node_name.empty());
      if (holds) pods.insert(PodId{claim.namespace_, c.name});
    }
    if (pods.empty()) continue;
    for (const DraAllocatedDevice& r : claim.results) {
      auto it = devices.find(std::make_tuple(std::string_view(r.driver), std::string_view(r.pool),
                                             std::string_view(r.device)));
      if (it == devices.end()) continue;
      const DraDevice& d = *it->second;
      for (const PodId& p : pods) {
        if (!d.uuid.empty()) out.by_uuid[d.uuid].insert(p);
        if (!d.parent_uuid.empty()) out.by_parent_uuid[d.parent_uuid].insert(p);
        out.holders.emplace(p, claim.Key());
      }
    }
  }
  return out;
}

}  // namespace gpuattr::kube
