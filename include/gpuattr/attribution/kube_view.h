// What attribution needs to know from the Kubernetes objects: which pods hold GPU resources,
// which nodes share their GPUs by time-slicing, and the GPU pods of a node.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/attribution/types.h"
#include "gpuattr/kube/objects.h"

namespace gpuattr::attribution {

// Any container (app or init) requests or limits an `nvidia.com/` resource (> 0), `.shared`
// replicas included.
bool RequestsGpuResource(const kube::Pod& pod);

// Holds GPU resources: requests one and is Running, or Pending and already bound to a node.
bool HoldsGpuResources(const kube::Pod& pod);

// Requests a GPU by any means gpuattr can see: a GPU resource or any DRA claim (any claim counts,
// whatever its device class: never flag a pod that may hold a DRA device).
bool RequestsAnyGpu(const kube::Pod& pod);

// Time-sliced node: advertises an `nvidia.com/*.shared` resource or is labelled
// `nvidia.com/gpu.replicas` > 1.
bool NodeSharesGpus(const kube::Node& node);

// The pods holding GPU resources, by node name, each list sorted.
std::map<std::string, std::vector<kube::PodId>, std::less<>> GpuPodsByNode(
    const kube::ClusterObjects& objects);

}  // namespace gpuattr::attribution
