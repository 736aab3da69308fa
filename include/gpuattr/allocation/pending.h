// Hints for pending GPU pods: why the scheduler cannot place them (docs/design.md#pending-hints).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gpuattr/allocation/dra.h"
#include "gpuattr/allocation/types.h"
#include "gpuattr/kube/objects.h"

namespace gpuattr::allocation {

// What the cluster offers, summarised for hints.
struct Offer {
  ResourceCounts cluster_allocatable;  // Σ over GPU nodes, per resource (DRA included)
  ResourceCounts node_max;             // the largest allocatable of one node, per resource
  ResourceCounts node_max_free;        // the largest free of one node, per resource
  std::map<std::string, int64_t> dra_type_node_max;  // "gpu"/"mig" → most devices on one node
  std::map<std::string, size_t> idle_holders;        // resource → idle pods holding it
  std::string idle_scope;  // where idle_holders were counted, when not the whole cluster
  // MIG profile → nvidia.com/gpu allocatable on nodes whose units are slices of that profile
  // (mig.strategy=single, GKE partitions: docs/design.md#node-shapes).
  std::map<std::string, int64_t> gpu_slices;
};

// The gpu_slices of an Offer from the nodes' shapes.
std::map<std::string, int64_t> GpuSlicesOffered(const kube::ClusterObjects& objects);

Offer SummariseOffer(const std::vector<NodeResource>& node_resources, const DraView& dra,
                     const std::vector<PodRequest>& holders,
                     const std::map<kube::PodId, bool>& idle);

// The resource a DRA want is published under ("gpu.nvidia.com/gpu", "gpu.nvidia.com/mig").
std::string DraWantResource(const DraWant& want);

// The first reason that applies, in this order: resource_not_offered / mig_partitioned,
// exceeds_node_max (extended resources, by name), dra_no_device, dra_exceeds_node_max (claims in
// order), else waiting_for_free_device with the idle pods holding the same resource.
// `extended` are the pod's tracked extended-resource requests.
Hint HintFor(const ResourceCounts& extended, const std::vector<DraWant>& wants, const Offer& offer);

}  // namespace gpuattr::allocation
