#include "gpuattr/kube/shard.h"

namespace gpuattr::kube {

std::string Shard::Text() const {
  if (!sharded()) return "";
  return std::to_string(index) + "/" + std::to_string(total);
}

uint64_t Fnv1a64(std::string_view data) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

bool OwnsNode(const Shard& shard, std::string_view node) {
  if (!shard.sharded()) return true;
  if (node.empty()) return shard.index == 0;
  return Fnv1a64(node) % shard.total == shard.index;
}

ClusterObjects ShardObjects(const ClusterObjects& objects, const Shard& shard) {
  if (!shard.sharded()) return objects;
  ClusterObjects out;
  out.revision = objects.revision;
  for (const auto& [key, pod] : objects.pods)
    if (OwnsNode(shard, pod.node_name)) out.pods.emplace(key, pod);
  for (const auto& [name, node] : objects.nodes)
    if (OwnsNode(shard, name)) out.nodes.emplace(name, node);
  for (const auto& [name, slice] : objects.resource_slices)
    if (OwnsNode(shard, slice.node_name)) out.resource_slices.emplace(name, slice);
  out.services = objects.services;
  out.resource_claims = objects.resource_claims;
  out.namespaces = objects.namespaces;
  return out;
}

}  // namespace gpuattr::kube
