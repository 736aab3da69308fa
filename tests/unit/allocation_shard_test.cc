// Pending pods' hints when the objects are one shard's share (kube/shard.h): what the cluster
// offers comes from the whole cluster, and the idle pods a hint counts are said to be the shard's.
#include <gtest/gtest.h>

#include "gpuattr/allocation/allocation.h"
#include "gpuattr/app/stages.h"
#include "gpuattr/kube/shard.h"

namespace gpuattr::allocation {
namespace {

kube::Pod MakePod(std::string ns, std::string name, std::string node, std::string phase,
                  int64_t gpus) {
  kube::Pod p;
  p.namespace_ = std::move(ns);
  p.name = std::move(name);
  p.node_name = std::move(node);
  p.phase = std::move(phase);
  p.creation_unix = 1000;
  kube::Container c;
  c.name = "c";
  c.limits["nvidia.com/gpu"] = gpus;
  p.containers.push_back(c);
  return p;
}

// A node of shard 0 and one of shard 1 (of 2).
std::pair<std::string, std::string> Nodes() {
  std::string a, b;
  for (int k = 0; a.empty() || b.empty(); ++k) {
    std::string n = "node-" + std::to_string(k);
    (kube::OwnsNode({0, 2}, n) ? a : b) = n;
  }
  return {a, b};
}

struct World {
  kube::ClusterObjects all;
  attribution::Attribution attribution;  // the idle pods seen
  World() {
    auto [a, b] = Nodes();
    kube::Node na, nb;
    na.name = a;
    na.capacity["nvidia.com/gpu"] = na.allocatable["nvidia.com/gpu"] = 1;
    nb.name = b;
    nb.capacity["nvidia.com/gpu"] = nb.allocatable["nvidia.com/gpu"] = 4;
    all.nodes[a] = na;
    all.nodes[b] = nb;
    for (kube::Pod p :
         {MakePod("ml", "on-a", a, "Running", 1), MakePod("ml", "on-b", b, "Running", 2),
          MakePod("ml", "waits", "", "Pending", 2)})
      all.pods[p.Key()] = p;
    for (const char* name : {"on-a", "on-b"}) {
      attribution::Pod p;
      p.id = {"ml", name};
      p.idle = true;
      attribution.pods.push_back(p);
    }
  }
};

TEST(AllocationShard, HintsReadTheWholeClustersOffer) {
  World w;
  const Allocation whole = Allocate({"c", w.all, w.attribution, 5000});
  ASSERT_EQ(whole.pending.size(), 1u);
  EXPECT_EQ(whole.pending[0].hint.code, "waiting_for_free_device");
  EXPECT_EQ(whole.pending[0].hint.text,
            "Waiting for 2 free gpu on one node (a node has 2 free: the pod may also "
            "wait for other resources, taints or affinity); 2 idle pods hold gpu "
            "(reclaimable capacity).");

  // Shard 0 of 2 sees only its node (1 GPU) and its idle pod.
  const kube::ClusterObjects share = kube::ShardObjects(w.all, {0, 2});
  attribution::Attribution seen;
  seen.pods = {w.attribution.pods[0]};
  AllocationInput alone{"c", share, seen, 5000};
  EXPECT_EQ(Allocate(alone).pending[0].hint.code, "exceeds_node_max")
      << "without the whole cluster the share would claim no node has 2 GPUs";

  AllocationInput sharded{"c", share, seen, 5000};
  sharded.offer_objects = &w.all;
  sharded.idle_scope = "shard 0's nodes";
  const Allocation a = Allocate(sharded);
  ASSERT_EQ(a.pending.size(), 1u);
  EXPECT_EQ(a.pending[0].hint.text,
            "Waiting for 2 free gpu on one node (a node has 2 free: the pod may also "
            "wait for other resources, taints or affinity); 1 idle pod on shard 0's nodes holds "
            "gpu (reclaimable capacity).");
  // The rest stays the shard's own: its node and its pod.
  ASSERT_EQ(a.nodes.size(), 1u);
  EXPECT_EQ(a.nodes[0].node, share.nodes.begin()->first);
  ASSERT_EQ(a.pods.size(), 1u);
  EXPECT_EQ(a.pods[0].pod.name, "on-a");
}

TEST(AllocationShard, ShardInputCutsObjectsAndReadingsAndKeepsTheWhole) {
  World w;
  app::CycleInput in;
  in.cluster = "c";
  in.objects = std::make_shared<const kube::ClusterObjects>(w.all);
  auto [a, b] = Nodes();
  in.readings.push_back({"gpu", "exp-a", a, sources::DcgmReadings{}});
  in.readings.push_back({"gpu", "exp-b", b, sources::DcgmReadings{}});
  in.readings.push_back({"monitoring", "prometheus", "", sources::DcgmReadings{}});

  const app::CycleInput s1 = app::ShardInput(in, {1, 2});
  EXPECT_EQ(s1.shard, (kube::Shard{1, 2}));
  EXPECT_EQ(s1.cluster_objects, in.objects);
  EXPECT_EQ(s1.objects->nodes.size(), 1u);
  EXPECT_TRUE(s1.objects->FindNode(b));
  ASSERT_EQ(s1.readings.size(), 1u);
  EXPECT_EQ(s1.readings[0].pod, "exp-b");
  const app::CycleInput s0 = app::ShardInput(in, {0, 2});
  ASSERT_EQ(s0.readings.size(), 2u);  // its node's, and the node-less one
  EXPECT_TRUE(s0.objects->FindPod("ml", "waits"));
  const app::CycleInput none = app::ShardInput(in, {});
  EXPECT_EQ(none.objects, in.objects);
  EXPECT_EQ(none.readings.size(), 3u);
  EXPECT_FALSE(none.cluster_objects);
}

}  // namespace
}  // namespace gpuattr::allocation
