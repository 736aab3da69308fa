// GPU-hours on the three bases (docs/accounting.md), on hand-built cycles whose shares are
// worked out in the comments.
#include <gtest/gtest.h>

#include "gpuattr/accounting/accounting.h"

namespace gpuattr::accounting {
namespace {

using attribution::Attribution;
using attribution::Card;
using attribution::Device;
using attribution::PodDevice;
using attribution::Sharing;

constexpr double kGiB = 1024.0 * 1024 * 1024;

// A cycle built by hand: cards, devices, links, the allocation's replicas and the objects.
struct Cycle {
  Attribution a;
  allocation::Allocation alloc;
  kube::ClusterObjects objects;

  size_t AddCard(const std::string& node, const std::string& gpu, const std::string& model) {
    a.cards.push_back(Card{node, gpu, "GPU-" + node + "-" + gpu, model, std::nullopt, {}, {}});
    return a.cards.size() - 1;
  }
  size_t AddDevice(size_t card, std::optional<std::string> instance, std::string profile,
                   std::optional<double> util, std::optional<double> total_bytes = 80 * kGiB) {
    Device d;
    d.id = {a.cards[card].node, a.cards[card].gpu, std::move(instance)};
    d.uuid = a.cards[card].uuid;
    d.model = a.cards[card].model;
    d.mig_profile = std::move(profile);
    d.card = card;
    d.utilization = util;
    d.memory_total_bytes = total_bytes;
    a.devices.push_back(d);
    a.cards[card].devices.push_back(a.devices.size() - 1);
    return a.devices.size() - 1;
  }
  void Link(size_t device, const std::string& pod, Sharing sharing, double share,
            std::optional<double> memory = std::nullopt) {
    PodDevice l;
    l.pod = {"ml", pod};
    l.device = device;
    l.sharing = sharing;
    l.share = share;
    l.memory_used_bytes = memory;
    a.pod_devices.push_back(l);
  }
  void Node(const std::string& name, std::map<std::string, std::string> labels = {}) {
    kube::Node n;
    n.name = name;
    n.labels = std::move(labels);
    objects.nodes[name] = n;
  }
  void Pod(const std::string& name, const std::string& node, std::string uid = "") {
    kube::Pod p;
    p.namespace_ = "ml";
    p.name = name;
    p.node_name = node;
    p.uid = std::move(uid);
    objects.pods["ml/" + name] = p;
  }
  void Replicas(const std::string& pod, const std::string& node, const std::string& resource,
                int64_t n) {
    allocation::PodRequest r;
    r.pod = {"ml", pod};
    r.node = node;
    r.replicas[resource] = n;
    alloc.pods.push_back(r);
  }
  std::vector<CardAccount> Shares() const { return ShareCards({a, alloc, objects}); }
};

const PodAccount* Find(const CardAccount& c, const std::string& pod) {
  for (const PodAccount& p : c.pods)
    if (p.pod.name == pod) return &p;
  return nullptr;
}

void ExpectShares(const PerBasis& got, double allocation, double memory, double usage) {
  EXPECT_NEAR(At(got, Basis::kAllocation), allocation, 1e-12);
  EXPECT_NEAR(At(got, Basis::kMemory), memory, 1e-12);
  EXPECT_NEAR(At(got, Basis::kUsage), usage, 1e-12);
}

TEST(AccountingBasis, NamesRoundTrip) {
  for (Basis b : kAllBases) EXPECT_EQ(ParseBasis(BasisName(b)), b);
  EXPECT_EQ(BasisName(Basis::kMemory), "memory");
  EXPECT_FALSE(ParseBasis("compute"));
}

TEST(AccountingBasis, SliceCountsOfKnownModels) {
  EXPECT_EQ(KnownSliceCount("NVIDIA A100-SXM4-80GB"), 7);
  EXPECT_EQ(KnownSliceCount("NVIDIA H100 80GB HBM3"), 7);
  EXPECT_EQ(KnownSliceCount("NVIDIA H200"), 7);
  EXPECT_EQ(KnownSliceCount("NVIDIA B200"), 7);
  EXPECT_EQ(KnownSliceCount("NVIDIA A30"), 4);
  EXPECT_EQ(KnownSliceCount("NVIDIA RTX A3000"), 0);  // A30 only as a whole word
  EXPECT_EQ(KnownSliceCount("Tesla T4"), 0);
}

// A whole GPU with one pod at 60 %: allocation 1, memory 1 (nobody else can use its memory),
// usage 0.6; idle 0 / 0 / 0.4.
TEST(Accounting, ExclusiveGpu) {
  Cycle c;
  c.Node("n1");
  c.Pod("a", "n1", "uid-a");
  size_t card = c.AddCard("n1", "0", "NVIDIA L4");
  size_t d = c.AddDevice(card, std::nullopt, "", 0.6);
  c.Link(d, "a", Sharing::kExclusive, 1, 10 * kGiB);
  auto cards = c.Shares();
  ASSERT_EQ(cards.size(), 1u);
  const PodAccount* a = Find(cards[0], "a");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->uid, "uid-a");
  ExpectShares(a->value, 1, 1, 0.6);
  ExpectShares(cards[0].idle, 0, 0, 0.4);
  EXPECT_TRUE(cards[0].usage_measured);
}

// A100 (G = 7) with a 3g slice (pod a, 50 %), a 1g slice (pod b, no utilisation) and 3/7 not
// partitioned. allocation and memory: a 3/7, b 1/7, idle 3/7. usage: a 3/7 × 0.5 = 3/14, b 0 (not
// measured), idle 1 − 3/14 = 11/14.
TEST(Accounting, MigSlicesAreGOverTheModelsSliceCount) {
  Cycle c;
  c.Node("n1");
  size_t card = c.AddCard("n1", "0", "NVIDIA A100-SXM4-80GB");
  size_t s3 = c.AddDevice(card, "1", "3g.40gb", 0.5, 40 * kGiB);
  size_t s1 = c.AddDevice(card, "9", "1g.10gb", std::nullopt, 10 * kGiB);
  c.Link(s3, "a", Sharing::kMig, 1);
  c.Link(s1, "b", Sharing::kMig, 1);
  auto cards = c.Shares();
  ExpectShares(Find(cards[0], "a")->value, 3.0 / 7, 3.0 / 7, 3.0 / 14);
  const PodAccount* b = Find(cards[0], "b");
  ASSERT_TRUE(b);
  ExpectShares(b->value, 1.0 / 7, 1.0 / 7, 0);
  ExpectShares(cards[0].idle, 3.0 / 7, 3.0 / 7, 11.0 / 14);
  EXPECT_FALSE(cards[0].usage_measured);
}

// A model without a known slice count: G = the largest g among its slices seen (2 here, on
// another card), never below Σg of the card (2 + 2 = 4): each 2g slice is 2/4 of its card.
TEST(Accounting, UnknownModelSlicesUseTheLargestSliceOrTheirSum) {
  Cycle c;
  c.Node("n1");
  size_t card = c.AddCard("n1", "0", "Future GPU");
  c.Link(c.AddDevice(card, "1", "2g.20gb", 1.0), "a", Sharing::kMig, 1);
  c.Link(c.AddDevice(card, "2", "2g.20gb", 1.0), "b", Sharing::kMig, 1);
  auto cards = c.Shares();
  ExpectShares(Find(cards[0], "a")->value, 0.5, 0.5, 0.5);
  ExpectShares(cards[0].idle, 0, 0, 0);
}

// Time-sliced GPU, r = 4 (label nvidia.com/gpu.replicas), 40 GiB, 80 % busy: a holds 1 replica
// and uses 10 GiB, b holds 2 and uses 5 GiB. allocation: a 1/4, b 2/4, idle 1/4. memory (the
// attribution's share, used ÷ total): a 10/40 = 0.25, b 5/40 = 0.125, idle 0.625. usage: 0.8
// split 10:5, a 0.8 × 2/3, b 0.8 × 1/3, idle 0.2.
TEST(Accounting, TimeSlicedReplicasAreOneOverR) {
  Cycle c;
  c.Node("n1", {{"nvidia.com/gpu.replicas", "4"}});
  size_t card = c.AddCard("n1", "0", "NVIDIA L4");
  size_t d = c.AddDevice(card, std::nullopt, "", 0.8, 40 * kGiB);
  c.Link(d, "a", Sharing::kTimeSliced, 0.25, 10 * kGiB);
  c.Link(d, "b", Sharing::kTimeSliced, 0.125, 5 * kGiB);
  c.Replicas("a", "n1", "nvidia.com/gpu.shared", 1);
  c.Replicas("b", "n1", "nvidia.com/gpu", 2);  // unrenamed: the resource itself counts replicas
  auto cards = c.Shares();
  ExpectShares(Find(cards[0], "a")->value, 0.25, 0.25, 0.8 * 2 / 3);
  ExpectShares(Find(cards[0], "b")->value, 0.5, 0.125, 0.8 / 3);
  ExpectShares(cards[0].idle, 0.25, 0.625, 0.2);
}

// r unknown (no replicas label): the device's holders split it evenly on allocation.
TEST(Accounting, TimeSlicedWithoutRSplitsEvenly) {
  Cycle c;
  c.Node("n1");
  size_t card = c.AddCard("n1", "0", "NVIDIA L4");
  size_t d = c.AddDevice(card, std::nullopt, "", 0.3);
  c.Link(d, "a", Sharing::kTimeSliced, 0.5);
  c.Link(d, "b", Sharing::kTimeSliced, 0.5);
  auto cards = c.Shares();
  ExpectShares(Find(cards[0], "a")->value, 0.5, 0.5, 0.15);
  ExpectShares(cards[0].idle, 0, 0, 0.7);
}

// No exporter says which device replica pod c uses (devices only): the node's n = 2 GPUs are one
// pool, r = 2, and c's one replica holds 1/(r·n) = 1/4 of each card on allocation; memory and
// usage have no pod, so idle.
TEST(Accounting, UnplacedReplicasShareTheNodesPool) {
  Cycle c;
  c.Node("n1", {{"nvidia.com/gpu.replicas", "2"}});
  c.AddDevice(c.AddCard("n1", "0", "NVIDIA L4"), std::nullopt, "", 0.5);
  c.AddDevice(c.AddCard("n1", "1", "NVIDIA L4"), std::nullopt, "", 0.5);
  c.Replicas("c", "n1", "nvidia.com/gpu.shared", 1);
  auto cards = c.Shares();
  ASSERT_EQ(cards.size(), 2u);
  for (const CardAccount& card : cards) {
    const PodAccount* p = Find(card, "c");
    ASSERT_TRUE(p) << card.gpu;
    ExpectShares(p->value, 0.25, 0, 0);
    ExpectShares(card.idle, 0.75, 1, 1);
  }
}

// A pod using a GPU it did not request: the scheduler handed it nothing (allocation idle), but it
// occupies the memory and uses the compute.
TEST(Accounting, UnrequestedUseIsNotAllocation) {
  Cycle c;
  c.Node("n1");
  size_t card = c.AddCard("n1", "0", "NVIDIA L4");
  c.Link(c.AddDevice(card, std::nullopt, "", 0.2), "u", Sharing::kUnrequested, 1);
  auto cards = c.Shares();
  ExpectShares(Find(cards[0], "u")->value, 0, 1, 0.2);
  ExpectShares(cards[0].idle, 1, 0, 0.8);
}

// Over 30 minutes every share is half a GPU-hour; the card's total is Δt/3600 = 0.5.
TEST(Accounting, HoursAreSharesTimesTheInterval) {
  Cycle c;
  c.Node("n1");
  size_t card = c.AddCard("n1", "0", "NVIDIA L4");
  c.Link(c.AddDevice(card, std::nullopt, "", 0.6), "a", Sharing::kExclusive, 1);
  auto cards = Account({c.a, c.alloc, c.objects}, 1800);
  EXPECT_DOUBLE_EQ(cards[0].total, 0.5);
  ExpectShares(Find(cards[0], "a")->value, 0.5, 0.5, 0.3);
  ExpectShares(cards[0].idle, 0, 0, 0.2);
}

}  // namespace
}  // namespace gpuattr::accounting
