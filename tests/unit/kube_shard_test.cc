// Sharding by node (kube/shard.h): the FNV-1a 64 hash, ownership and the shard's share of the
// objects.
#include "gpuattr/kube/shard.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "support/pods.h"

namespace gpuattr::kube {
namespace {

TEST(KubeShard, Fnv1a64MatchesTheReferenceVectors) {
  // The FNV reference values (also what Go's hash/fnv New64a gives, as kube-state-metrics uses).
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ull);
}

TEST(KubeShard, OwnershipIsTheHashModTheShards) {
  const std::string node = "gpu-node-17";
  const uint64_t h = Fnv1a64(node);
  for (uint32_t n : {2u, 3u, 5u, 7u})
    for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(OwnsNode({i, n}, node), h % n == i) << i << "/" << n;
}

TEST(KubeShard, EveryNodeHasExactlyOneOwnerAndTheEmptyNodeIsShardZeros) {
  for (uint32_t n : {1u, 2u, 3u, 5u}) {
    std::map<uint32_t, size_t> per_shard;
    for (int k = 0; k < 200; ++k) {
      const std::string node = "node-" + std::to_string(k);
      size_t owners = 0;
      for (uint32_t i = 0; i < n; ++i)
        if (OwnsNode({i, n}, node)) {
          ++owners;
          ++per_shard[i];
        }
      EXPECT_EQ(owners, 1u) << node << " with " << n << " shards";
    }
    // 200 names spread over every shard (the hash is not degenerate).
    EXPECT_EQ(per_shard.size(), n);
    for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(OwnsNode({i, n}, ""), i == 0);
  }
}

TEST(KubeShard, NotShardedOwnsEverything) {
  EXPECT_TRUE(OwnsNode({}, "anything"));
  EXPECT_TRUE(OwnsNode({}, ""));
  EXPECT_FALSE(Shard{}.sharded());
  EXPECT_EQ(Shard{}.Text(), "");
  EXPECT_EQ((Shard{1, 3}.Text()), "1/3");
}

// Two nodes that land on different shards of 2.
std::pair<std::string, std::string> NodesOnShards0And1() {
  std::string a, b;
  for (int k = 0; a.empty() || b.empty(); ++k) {
    std::string n = "n" + std::to_string(k);
    (Fnv1a64(n) % 2 == 0 ? a : b) = n;
  }
  return {a, b};
}

TEST(KubeShard, ShardObjectsKeepTheShardsNodesTheirPodsAndSlices) {
  auto [n0, n1] = NodesOnShards0And1();
  ClusterObjects all;
  all.revision = 42;
  for (const std::string& n : {n0, n1}) {
    Node node;
    node.name = n;
    all.nodes[n] = node;
    Pod p = testing::MakeRunningPod("ml", "job-" + n, n, "pytorch");
    all.pods[p.Key()] = p;
    ResourceSlice s;
    s.name = "slice-" + n;
    s.node_name = n;
    all.resource_slices[s.name] = s;
  }
  Pod pending = testing::MakeRunningPod("ml", "pending", "", "pytorch");
  pending.phase = "Pending";
  all.pods[pending.Key()] = pending;
  ResourceSlice unbound;
  unbound.name = "network-attached";
  all.resource_slices[unbound.name] = unbound;
  Service svc;
  svc.namespace_ = "monitoring";
  svc.name = "prometheus";
  all.services[svc.Key()] = svc;
  ResourceClaim claim;
  claim.namespace_ = "ml";
  claim.name = "c";
  all.resource_claims[claim.Key()] = claim;

  const ClusterObjects s0 = ShardObjects(all, {0, 2});
  const ClusterObjects s1 = ShardObjects(all, {1, 2});
  EXPECT_EQ(s0.revision, 42u);
  EXPECT_EQ(s0.nodes.size(), 1u);
  EXPECT_TRUE(s0.FindNode(n0));
  EXPECT_TRUE(s1.FindNode(n1));
  EXPECT_TRUE(s0.FindPod("ml", "job-" + n0));
  EXPECT_FALSE(s0.FindPod("ml", "job-" + n1));
  EXPECT_TRUE(s1.FindPod("ml", "job-" + n1));
  // Unbound pods and node-less slices: shard 0 only.
  EXPECT_TRUE(s0.FindPod("ml", "pending"));
  EXPECT_FALSE(s1.FindPod("ml", "pending"));
  EXPECT_EQ(s0.resource_slices.count("network-attached"), 1u);
  EXPECT_EQ(s1.resource_slices.count("network-attached"), 0u);
  EXPECT_EQ(s1.resource_slices.count("slice-" + n1), 1u);
  EXPECT_EQ(s1.resource_slices.count("slice-" + n0), 0u);
  // Services and claims are kept whole.
  EXPECT_EQ(s0.services.size(), 1u);
  EXPECT_EQ(s1.services.size(), 1u);
  EXPECT_EQ(s1.resource_claims.size(), 1u);
  // Together the shards hold every pod and node exactly once.
  EXPECT_EQ(s0.pods.size() + s1.pods.size(), all.pods.size());
  EXPECT_EQ(s0.nodes.size() + s1.nodes.size(), all.nodes.size());
  // Not sharded: everything.
  EXPECT_EQ(ShardObjects(all, {}).pods.size(), all.pods.size());
}

}  // namespace
}  // namespace gpuattr::kube
