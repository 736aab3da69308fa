// Which resources are GPU devices, and what a pod requests of them (Kubernetes' rules for
// effective requests with init and sidecar containers).
#pragma once

#include <string>
#include <string_view>

#include "gpuattr/allocation/types.h"
#include "gpuattr/kube/objects.h"

namespace gpuattr::allocation {

// nvidia.com/gpu, nvidia.com/mig-*, other nvidia.com/gpu.* — but never *.shared.
bool IsDeviceResource(std::string_view resource);
// A time-slicing replica of a device resource: nvidia.com/gpu.shared,
// nvidia.com/mig-1g.10gb.shared. Replicas are not devices; they are tracked per resource but never
// in device totals.
bool IsReplicaResource(std::string_view resource);
// Device or replica: the resources allocation reports per pod, namespace and node.
inline bool IsTrackedResource(std::string_view resource) {
  return IsDeviceResource(resource) || IsReplicaResource(resource);
}
// A node with any of these (even at 0) is a GPU node.
bool IsNvidiaResource(std::string_view resource);

// Whether `resource` counts time-slicing replicas on `node` (nullptr: a pod not bound to a node):
// `*.shared` always; a device resource when the node is labelled `<resource>.replicas` = r > 1
// (a time-sliced GPU that was not renamed: `nvidia.com/gpu: 16` with r = 4 is 4 GPUs).
bool CountsReplicas(const kube::Node* node, std::string_view resource);
// The physical devices that `count` of a tracked `resource` stand for on `node`: the count for a
// device resource, count ÷ r (rounded down) for replicas with r from the `.replicas` label of
// their device resource, 0 for replicas whose r the node does not say.
int64_t PhysicalDevices(const kube::Node& node, std::string_view resource, int64_t count);

// "nvidia.com/mig-1g.10gb" → "mig-1g.10gb" for messages; other names (DRA's
// "gpu.nvidia.com/gpu") stay whole so that they cannot be mistaken for each other.
std::string ShortResourceName(std::string_view resource);

// The pod's effective request of every tracked resource, as the scheduler computes it:
// max(Σ app containers + Σ sidecars, max over init containers of (that init container + the
// sidecars started before it; a sidecar counts with itself)). Per container the limit wins over
// the request (extended resources must have them equal; a limit alone implies the request).
ResourceCounts EffectiveRequests(const kube::Pod& pod);

// Running, or Pending and bound to a node: the pod holds what it requests.
bool HoldsResources(const kube::Pod& pod);
// Pending and not bound to a node yet.
bool IsUnscheduled(const kube::Pod& pod);

}  // namespace gpuattr::allocation
