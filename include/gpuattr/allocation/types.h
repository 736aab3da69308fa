// The scheduler's view of a cluster's GPUs (docs/design.md#allocation and
// docs/design.md#pending-hints): what pods request, what nodes offer, what is free, and why pending
// GPU pods wait. Plain sorted data built by allocation::Allocate (allocation.h) and published by
// src/metrics/allocation.cc. Counts are whole devices, or replicas where a resource counts them
// (never added to devices).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuattr/attribution/types.h"

namespace gpuattr::allocation {

// Resource name as Kubernetes names it ("nvidia.com/mig-1g.10gb", DRA: "gpu.nvidia.com/gpu",
// "gpu.nvidia.com/mig-3g.40gb") → count. Only positive counts are kept.
using ResourceCounts = std::map<std::string, int64_t>;

// A pod holding GPU resources (Running, or Pending and bound to a node) and what it holds.
// Devices and time-slicing replicas are kept apart: replicas are never devices.
struct PodRequest {
  kube::PodId pod;
  std::string node;
  ResourceCounts requested;  // devices: effective request per resource, DRA devices included
  // Replicas: `*.shared`, and a device resource on a node that time-slices it unrenamed
  // (labelled `<resource>.replicas` > 1), per resource as Kubernetes names it.
  ResourceCounts replicas;
};

struct NamespaceAllocation {
  std::string name;
  ResourceCounts requested;  // devices, Σ of its holding pods
  ResourceCounts replicas;   // replicas, Σ of its holding pods
  size_t pending_pods = 0;   // unscheduled GPU pods
};

// Device totals of one GPU node, in physical devices: replicas are never counted as devices. On
// a time-sliced node (`<resource>.replicas` = r > 1) the replicas of that resource count as
// replicas ÷ r devices in capacity and allocatable, whether or not they were renamed to
// `.shared`. capacity/allocatable/unhealthy are absent when the Node object is unknown (a node
// only seen by an exporter).
struct NodeAllocation {
  std::string node;
  std::optional<int64_t> capacity;
  std::optional<int64_t> allocatable;
  std::optional<int64_t> unhealthy;  // capacity − allocatable
  // Devices held by pods bound to the node, DRA devices included; replica requests are not
  // devices and are not counted here (they are in NodeResource::requested of their resource).
  int64_t requested = 0;
  size_t busy = 0;  // seen devices with utilisation ≥ 5% or a pod on them
  size_t seen = 0;  // devices the exporters reported on the node
};

// One resource of one GPU node.
struct NodeResource {
  std::string node;
  std::string resource;
  int64_t allocatable = 0;
  int64_t requested = 0;
  int64_t free = 0;  // max(0, allocatable − requested)
};

// Why a pending pod waits: a code (below) and a message for people.
struct Hint {
  std::string resource;  // the resource the hint is about, named in full
  std::string code;      // resource_not_offered, mig_partitioned, exceeds_node_max,
                         // dra_no_device, dra_exceeds_node_max, waiting_for_free_device
  // The `message` label: what code and resource say, without changing numbers (offers, counts,
  // idle pods), so that the series and every alert's `for:` survive a count changing.
  std::string message;
  // The whole message with its numbers, for people (status page): "No node offers mig-2g.20gb.
  // The cluster offers: mig-1g.10gb ×46, gpu ×1."
  std::string text;
};

// An unscheduled GPU pod (no nodeName; requests a GPU resource or holds a GPU DRA claim).
struct PendingPod {
  kube::PodId pod;
  std::optional<double> age_seconds;  // now − creation; unknown without a creation time
  ResourceCounts requested;           // what it asks for (DRA: per device class of its claims)
  Hint hint;
};

struct Allocation {
  std::string cluster;
  std::vector<PodRequest> pods;                 // sorted by pod
  std::vector<NamespaceAllocation> namespaces;  // sorted by name; with holding or pending pods
  std::vector<NodeAllocation> nodes;            // sorted by name; every GPU node
  std::vector<NodeResource> node_resources;     // sorted by (node, resource)
  std::vector<PendingPod> pending;              // sorted by pod
  // GPU nodes whose sharing labels gpuattr does not understand, for the status page:
  // "node gpu-7: unrecognised sharing labels: nvidia.com/gpu.replicas=four" (sorted by node).
  std::vector<std::string> shape_notes;
};

}  // namespace gpuattr::allocation
