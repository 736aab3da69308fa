// Sharding by node, as kube-state-metrics shards (docs/design.md#sharding): shard I of N owns the
// nodes whose name hashes (FNV-1a 64) to I mod N, and with them every pod scheduled there, their
// exporters, devices and DRA slices. Pods not bound to a node (pending pods) and objects without a
// node belong to shard 0, which therefore also publishes the cluster-wide series.
//
// The decision is one pure function of the node name (OwnsNode). The session applies it once per
// cycle to the objects it hands to discovery and the stages (ShardObjects); nothing downstream
// knows about shards, apart from the pending-pod hints that need the whole cluster's offer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gpuattr/kube/objects.h"

namespace gpuattr::kube {

struct Shard {
  uint32_t index = 0;  // 0 ≤ index < total
  uint32_t total = 1;  // 1: not sharded
  bool sharded() const { return total > 1; }
  bool operator==(const Shard&) const = default;
  std::string Text() const;  // "1/3" (shard 1 of 3), "" when not sharded
};

// FNV-1a, 64 bits (offset basis 14695981039346656037, prime 1099511628211), as Go's hash/fnv
// New64a, which kube-state-metrics uses.
uint64_t Fnv1a64(std::string_view data);

// True when `shard` owns `node`: Fnv1a64(node) mod total == index. The empty node (a pod not yet
// scheduled, a node-less DRA slice, a series without a node) belongs to shard 0. Always true when
// not sharded.
bool OwnsNode(const Shard& shard, std::string_view node);

// The objects `shard` works on: its nodes, the pods bound to them (shard 0: also the unbound
// ones), the ResourceSlices of its nodes (shard 0: also those without a node). Services and
// ResourceClaims are kept whole: services are where query APIs are found, and a claim is only
// ever reached through a pod that is in the view. The revision is kept. Pure.
ClusterObjects ShardObjects(const ClusterObjects& objects, const Shard& shard);

}  // namespace gpuattr::kube
