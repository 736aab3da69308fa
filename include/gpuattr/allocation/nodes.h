// GPU nodes: device totals (capacity, allocatable, unhealthy, requested, busy, seen) and each
// resource's allocatable, requested and free.
#pragma once

#include <vector>

#include "gpuattr/allocation/dra.h"
#include "gpuattr/allocation/types.h"
#include "gpuattr/attribution/types.h"
#include "gpuattr/kube/objects.h"

namespace gpuattr::allocation {

// A GPU node advertises any nvidia.com/ resource (even at 0), publishes gpu.nvidia.com DRA
// devices, or had a device seen by an exporter. `holders` are the pods holding resources (their
// node is where the requests count).
struct NodeView {
  std::vector<NodeAllocation> nodes;         // sorted by name
  std::vector<NodeResource> node_resources;  // sorted by (node, resource)
};
NodeView BuildNodes(const kube::ClusterObjects& objects,
                    const attribution::Attribution& attribution, const DraView& dra,
                    const std::vector<PodRequest>& holders);

}  // namespace gpuattr::allocation
