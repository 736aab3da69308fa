// Allocation (docs/design.md#allocation): the Kubernetes objects (pods, nodes, DRA slices and
// claims) and the attribution of the same cycle → what pods request, what GPU nodes offer and have
// free, and a hint for every pending GPU pod. Pure: the same input always gives the same, sorted,
// output.
//
//   allocation::Allocation a = allocation::Allocate({cluster, objects, attribution, now_unix});
#pragma once

#include <string>

#include "gpuattr/allocation/types.h"
#include "gpuattr/attribution/types.h"
#include "gpuattr/kube/objects.h"

namespace gpuattr::allocation {

struct AllocationInput {
  std::string cluster;
  const kube::ClusterObjects& objects;
  // Devices seen (node seen/busy counts) and idle pods (reclaimable capacity in hints).
  const attribution::Attribution& attribution;
  double now_unix = 0;  // for the age of pending pods
  // Sharded (kube/shard.h): `objects` is one shard's share and `offer_objects` the whole
  // cluster's objects, from which pending pods' hints read what the cluster offers. Null: the
  // offer comes from `objects`.
  const kube::ClusterObjects* offer_objects = nullptr;
  // Where the idle pods that hints count were seen, when not in the whole cluster (a shard sees
  // only its own nodes' pods), e.g. "shard 0's nodes". "" = the whole cluster.
  std::string idle_scope = {};
};

Allocation Allocate(const AllocationInput& input);

}  // namespace gpuattr::allocation
