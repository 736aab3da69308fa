// Who holds which GPU according to DRA (docs/design.md#dra and docs/design.md#attribution): the
// gpu.nvidia.com devices of the ResourceSlices, the claims allocated to them and the pods those
// claims are reserved for. Pure; shared by attribution (tier 3 candidate pods, GPU pods) and
// discovery (inference targets).
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>

#include "gpuattr/kube/objects.h"

namespace gpuattr::kube {

inline constexpr std::string_view kNvidiaDraDriver = "gpu.nvidia.com";

// A GPU or MIG device of NVIDIA's DRA driver (type "gpu" or "mig", or untyped with a UUID).
bool IsDraGpuDevice(const ResourceSlice& slice, const DraDevice& device);

struct DraGpuIndex {
  // Every DRA GPU device's UUID → the pods holding it (empty: DRA knows it and nobody holds it).
  std::map<std::string, std::set<PodId>, std::less<>> by_uuid;
  // A card's UUID → the pods holding any of its MIG devices (empty: none of its slices is held).
  std::map<std::string, std::set<PodId>, std::less<>> by_parent_uuid;
  // Every pod holding a DRA GPU device → the claim ("namespace/name") it holds it through.
  std::map<PodId, std::string> holders;

  // The holders DRA names for a dcgm device: a MIG slice (the card's UUID, as dcgm's MIG lines
  // carry it) asks the card's MIG devices first, a whole GPU its own UUID first, each then the
  // other. nullptr: DRA says nothing about that UUID.
  const std::set<PodId>* HoldersOf(std::string_view uuid, bool mig_slice) const;
};

// Holders are pods that exist and are Running, or Pending and already bound to a node (as for
// resource requests); claims reserved for other consumers, or for pods not in `objects`, hold
// nothing that gpuattr can attribute.
DraGpuIndex IndexDraGpus(const ClusterObjects& objects);

}  // namespace gpuattr::kube
