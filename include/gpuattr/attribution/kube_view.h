// What attribution needs to know from the Kubernetes objects: which pods hold GPU resources,
// which nodes share their GPUs by time-slicing, and the GPU pods of a node.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/attribution/node_shape.h"
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

// The replicas per physical device of a device resource: for nvidia.com/gpu the node shape's
// (docs/design.md#node-shapes: `nvidia.com/gpu.replicas`, GKE's max shared clients, HAMi's split
// count); for others the label gpu-feature-discovery sets beside it
// (`nvidia.com/mig-1g.10gb.replicas`): its value when it is an integer > 1, else 1.
int64_t ReplicasLabel(const kube::Node& node, std::string_view device_resource);

// Which devices of a node the device plugin time-slices (docs/design.md#sharing). A
// resource R is time-sliced when `R.shared` is advertised above 0 or the node is labelled
// `R.replicas` > 1; a `.shared` resource advertised at 0 (common on mig.strategy=mixed nodes
// whose sharing config gives no replicas) time-slices nothing.
struct NodeSharing {
  bool whole_gpus = false;  // nvidia.com/gpu
  // Any nvidia.com/mig-<profile>; on a node advertising no such resource (mig.strategy=single,
  // where slices are nvidia.com/gpu) the same as whole_gpus.
  bool mig_slices = false;
  // How pods that share a device share it: time_sliced, mps, or hami (docs/design.md#node-shapes).
  Sharing shared_as = Sharing::kTimeSliced;
  NodeShape shape;
  bool Shares(bool mig_slice) const { return mig_slice ? mig_slices : whole_gpus; }
};
NodeSharing NodeSharingOf(const kube::Node& node);

// The pods holding GPU resources, by node name, each list sorted.
std::map<std::string, std::vector<kube::PodId>, std::less<>> GpuPodsByNode(
    const kube::ClusterObjects& objects);

}  // namespace gpuattr::attribution
