// NodeShapeOf (docs/design.md#node-shapes): every label set of issue 27, garbage and conflicting
// values (never more physical GPUs: the largest replica count wins), and the status page's text.
#include "gpuattr/attribution/node_shape.h"

#include <gtest/gtest.h>

#include <string>

#include "gpuattr/kube/decode.h"

namespace gpuattr::attribution {
namespace {

// As the decoder makes it: the registration annotation is read once, into hami_registration.
kube::Node NodeWith(std::map<std::string, std::string> labels,
                    std::map<std::string, std::string> annotations = {}) {
  kube::Node n;
  n.name = "n";
  n.labels = std::move(labels);
  if (auto it = annotations.find(std::string(kube::kHamiRegisterAnnotation));
      it != annotations.end())
    n.hami_registration = kube::ReadHamiRegistration(it->second);
  n.capacity["nvidia.com/gpu"] = 8;
  return n;
}

// The decoder reads the registration when the node arrives; a node without it has none, and
// the shape never reparses it (kube::Node keeps no annotation text).
TEST(NodeShape, DecodedNodeCarriesItsHamiRegistration) {
  auto hami = kube::DecodeText(
      &kube::DecodeNode, R"({"metadata":{"name":"h","annotations":{"hami.io/node-nvidia-register":)"
                         R"("[{\"id\":\"GPU-a\",\"count\":10},{\"id\":\"GPU-b\",\"count\":4}]",)"
                         R"("other":"x"}},"status":{"capacity":{"nvidia.com/gpu":"20"}}})");
  ASSERT_TRUE(hami.ok()) << hami.error().message;
  ASSERT_TRUE(hami->hami_registration.has_value());
  EXPECT_EQ(*hami->hami_registration, (kube::HamiRegistration{false, 2, 10}));
  EXPECT_EQ(NodeShapeOf(*hami).kind, ShapeKind::kHami);
  auto bad = kube::DecodeText(
      &kube::DecodeNode,
      R"({"metadata":{"name":"b","annotations":{"hami.io/node-nvidia-register":"{x"}}})");
  ASSERT_TRUE(bad.ok());
  EXPECT_TRUE(bad->hami_registration && bad->hami_registration->malformed);
  EXPECT_EQ(NodeShapeOf(*bad).kind, ShapeKind::kUnrecognised);
  auto plain = kube::DecodeText(&kube::DecodeNode, R"({"metadata":{"name":"p"}})");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->hami_registration.has_value());
}

TEST(NodeShape, NoSharingLabelsIsWholeGpus) {
  NodeShape s = NodeShapeOf(NodeWith({{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}));
  EXPECT_EQ(s.kind, ShapeKind::kWhole);
  EXPECT_EQ(s.replicas, 1);
  EXPECT_TRUE(s.slice_profile.empty());
  EXPECT_EQ(UnrecognisedText(s), "");
  EXPECT_EQ(NodeShapeOf(NodeWith({{"nvidia.com/mig.strategy", "none"}})).kind, ShapeKind::kWhole);
}

TEST(NodeShape, MigMixed) {
  EXPECT_EQ(NodeShapeOf(NodeWith({{"nvidia.com/mig.strategy", "mixed"}})).kind,
            ShapeKind::kMigMixed);
}

TEST(NodeShape, MigSingleTakesTheProfileFromTheProductSuffix) {
  NodeShape s =
      NodeShapeOf(NodeWith({{"nvidia.com/mig.strategy", "single"},
                            {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"}}));
  EXPECT_EQ(s.kind, ShapeKind::kMigSingle);
  EXPECT_TRUE(s.UnitsAreSlices());
  EXPECT_EQ(s.slice_profile, "1g.10gb");
  EXPECT_EQ(s.replicas, 1);
  // No suffix: the profile comes from the slices' GPU_I_PROFILE later.
  NodeShape bare = NodeShapeOf(NodeWith({{"nvidia.com/mig.strategy", "single"}}));
  EXPECT_EQ(bare.kind, ShapeKind::kMigSingle);
  EXPECT_EQ(bare.slice_profile, "");
  // A garbage suffix is no profile.
  NodeShape junk = NodeShapeOf(
      NodeWith({{"nvidia.com/mig.strategy", "single"}, {"nvidia.com/gpu.product", "X-MIG-lots"}}));
  EXPECT_EQ(junk.slice_profile, "");
}

TEST(NodeShape, TimeSlicingWithAndWithoutStrategyLabel) {
  NodeShape s = NodeShapeOf(NodeWith({{"nvidia.com/gpu.replicas", "4"}}));
  EXPECT_EQ(s.kind, ShapeKind::kTimeSlicing);
  EXPECT_EQ(s.replicas, 4);
  EXPECT_FALSE(s.mps_sharing);
  NodeShape labelled = NodeShapeOf(NodeWith(
      {{"nvidia.com/gpu.replicas", "4"}, {"nvidia.com/gpu.sharing-strategy", "time-slicing"}}));
  EXPECT_EQ(labelled.kind, ShapeKind::kTimeSlicing);
  // replicas=1 shares nothing.
  EXPECT_EQ(NodeShapeOf(NodeWith({{"nvidia.com/gpu.replicas", "1"}})).kind, ShapeKind::kWhole);
}

TEST(NodeShape, Mps) {
  NodeShape s = NodeShapeOf(
      NodeWith({{"nvidia.com/gpu.replicas", "3"}, {"nvidia.com/gpu.sharing-strategy", "mps"}}));
  EXPECT_EQ(s.kind, ShapeKind::kMps);
  EXPECT_EQ(s.replicas, 3);
  EXPECT_TRUE(s.mps_sharing);
  // MPS without its replica count cannot be read.
  NodeShape bare = NodeShapeOf(NodeWith({{"nvidia.com/gpu.sharing-strategy", "mps"}}));
  EXPECT_EQ(bare.kind, ShapeKind::kUnrecognised);
  EXPECT_EQ(UnrecognisedText(bare),
            "unrecognised sharing labels: nvidia.com/gpu.sharing-strategy=mps");
}

TEST(NodeShape, GkeTimeSharingAndMps) {
  NodeShape ts =
      NodeShapeOf(NodeWith({{"cloud.google.com/gke-gpu-sharing-strategy", "time-sharing"},
                            {"cloud.google.com/gke-max-shared-clients-per-gpu", "5"},
                            {"cloud.google.com/gke-accelerator", "nvidia-l4"}}));
  EXPECT_EQ(ts.kind, ShapeKind::kGkeTimeSharing);
  EXPECT_EQ(ts.replicas, 5);
  EXPECT_EQ(ts.model_hint, "nvidia-l4");
  EXPECT_FALSE(ts.mps_sharing);
  NodeShape mps = NodeShapeOf(NodeWith({{"cloud.google.com/gke-gpu-sharing-strategy", "mps"},
                                        {"cloud.google.com/gke-max-shared-clients-per-gpu", "2"}}));
  EXPECT_EQ(mps.kind, ShapeKind::kGkeMps);
  EXPECT_EQ(mps.replicas, 2);
  EXPECT_TRUE(mps.mps_sharing);
}

TEST(NodeShape, GkePartitionUnitsAreSlicesAndMayBeTimeShared) {
  NodeShape s = NodeShapeOf(NodeWith({{"cloud.google.com/gke-gpu-partition-size", "1g.5gb"},
                                      {"cloud.google.com/gke-accelerator", "nvidia-tesla-a100"}}));
  EXPECT_EQ(s.kind, ShapeKind::kGkePartition);
  EXPECT_EQ(s.slice_profile, "1g.5gb");
  EXPECT_EQ(s.model_hint, "nvidia-tesla-a100");
  NodeShape shared =
      NodeShapeOf(NodeWith({{"cloud.google.com/gke-gpu-partition-size", "1g.5gb"},
                            {"cloud.google.com/gke-gpu-sharing-strategy", "time-sharing"},
                            {"cloud.google.com/gke-max-shared-clients-per-gpu", "2"}}));
  EXPECT_EQ(shared.kind, ShapeKind::kGkePartition);
  EXPECT_EQ(shared.replicas, 2);
}

TEST(NodeShape, HamiRegistrationInBothFormats) {
  const std::string json =
      R"([{"id":"GPU-a","count":10,"devmem":24576,"devcore":100,"type":"NVIDIA-L4","health":true},)"
      R"({"id":"GPU-b","count":10,"devmem":24576,"devcore":100,"type":"NVIDIA-L4","health":true}])";
  NodeShape s = NodeShapeOf(NodeWith({}, {{"hami.io/node-nvidia-register", json}}));
  EXPECT_EQ(s.kind, ShapeKind::kHami);
  EXPECT_EQ(s.hami_cards, 2);
  EXPECT_EQ(s.replicas, 10);
  NodeShape old = NodeShapeOf(NodeWith(
      {}, {{"hami.io/node-nvidia-register",
            "GPU-a,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:GPU-b,8,32768,100,NVIDIA-Tesla "
            "V100-PCIE-32GB,0,true:"}}));
  EXPECT_EQ(old.kind, ShapeKind::kHami);
  EXPECT_EQ(old.hami_cards, 2);
  EXPECT_EQ(old.replicas, 10);  // the largest split: never more physical GPUs
}

TEST(NodeShape, MalformedHamiRegistrationIsNamedNotGuessed) {
  for (const char* bad : {"", "[]", "[{\"id\":\"GPU-a\"}]", "[{\"id\":\"GPU-a\",\"count\":0}]",
                          "{not json", "GPU-a,ten,1,1,x,0,true:", "GPU-a,10,1,1,x,0,true",
                          "GPU-a:", ",10,1:", "[{\"id\":\"GPU-a\",\"count\":99999999}]"}) {
    NodeShape s = NodeShapeOf(NodeWith({}, {{"hami.io/node-nvidia-register", bad}}));
    EXPECT_EQ(s.kind, ShapeKind::kUnrecognised) << bad;
    EXPECT_EQ(s.replicas, 1) << bad;
    EXPECT_EQ(UnrecognisedText(s),
              "unrecognised sharing labels: hami.io/node-nvidia-register=<malformed>")
        << bad;
  }
  std::string many = "[";
  for (int i = 0; i < 65; ++i) many += std::string(i ? "," : "") + R"({"id":"G","count":2})";
  EXPECT_EQ(NodeShapeOf(NodeWith({}, {{"hami.io/node-nvidia-register", many + "]"}})).kind,
            ShapeKind::kUnrecognised);
}

TEST(NodeShape, GarbageValuesAreNamedAndCountNothingExtra) {
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"nvidia.com/gpu.replicas", "four"},
           {"nvidia.com/gpu.replicas", "-4"},
           {"nvidia.com/gpu.replicas", "4x"},
           {"nvidia.com/gpu.replicas", "999999999999999999999"},
           {"nvidia.com/mig.strategy", "diagonal"},
           {"nvidia.com/gpu.sharing-strategy", "vgpu"},
           {"cloud.google.com/gke-gpu-sharing-strategy", "fractional"},
           {"cloud.google.com/gke-gpu-partition-size", "huge"},
           {"cloud.google.com/gke-gpu-partition-size", "9g.1gb"}}) {
    NodeShape s = NodeShapeOf(NodeWith({{key, value}}));
    EXPECT_EQ(s.kind, ShapeKind::kUnrecognised) << key << "=" << value;
    EXPECT_EQ(s.replicas, 1) << key;
    EXPECT_EQ(UnrecognisedText(s), "unrecognised sharing labels: " + key + "=" + value);
  }
  // GKE time-sharing without a (valid) client count.
  NodeShape s = NodeShapeOf(NodeWith({{"cloud.google.com/gke-gpu-sharing-strategy", "time-sharing"},
                                      {"cloud.google.com/gke-max-shared-clients-per-gpu", "0"}}));
  EXPECT_EQ(s.kind, ShapeKind::kUnrecognised);
  EXPECT_EQ(UnrecognisedText(s),
            "unrecognised sharing labels: cloud.google.com/gke-max-shared-clients-per-gpu=0");
}

TEST(NodeShape, ConflictingReplicaCountsTakeTheLargest) {
  NodeShape s = NodeShapeOf(NodeWith({{"nvidia.com/gpu.replicas", "2"},
                                      {"cloud.google.com/gke-gpu-sharing-strategy", "time-sharing"},
                                      {"cloud.google.com/gke-max-shared-clients-per-gpu", "8"}}));
  EXPECT_EQ(s.kind, ShapeKind::kUnrecognised);
  EXPECT_EQ(s.replicas, 8);  // 8 units: 1 physical GPU, never 4
  EXPECT_EQ(UnrecognisedText(s),
            "unrecognised sharing labels: cloud.google.com/gke-gpu-sharing-strategy=time-sharing, "
            "cloud.google.com/gke-max-shared-clients-per-gpu=8, nvidia.com/gpu.replicas=2");
}

TEST(NodeShape, ConflictingProfilesTrustNeither) {
  NodeShape s = NodeShapeOf(NodeWith({{"nvidia.com/mig.strategy", "single"},
                                      {"nvidia.com/gpu.product", "NVIDIA-A100-MIG-1g.10gb"},
                                      {"cloud.google.com/gke-gpu-partition-size", "3g.40gb"}}));
  EXPECT_EQ(s.kind, ShapeKind::kUnrecognised);
  EXPECT_EQ(s.slice_profile, "");
  EXPECT_EQ(UnrecognisedText(s),
            "unrecognised sharing labels: cloud.google.com/gke-gpu-partition-size=3g.40gb");
  // Mixed and single at once cannot both hold.
  NodeShape hami_mig =
      NodeShapeOf(NodeWith({{"nvidia.com/mig.strategy", "mixed"}},
                           {{"hami.io/node-nvidia-register", R"([{"id":"GPU-a","count":4}])"}}));
  EXPECT_EQ(hami_mig.kind, ShapeKind::kUnrecognised);
  EXPECT_EQ(hami_mig.replicas, 4);
}

TEST(NodeShape, MigProfileHelpers) {
  EXPECT_EQ(MigProfileOfProduct("NVIDIA-H100-80GB-HBM3-MIG-3g.40gb"), "3g.40gb");
  EXPECT_EQ(MigProfileOfProduct("NVIDIA-H100-80GB-HBM3"), "");
  EXPECT_TRUE(LooksLikeMigProfile("1g.10gb"));
  EXPECT_TRUE(LooksLikeMigProfile("7g.141gb"));
  EXPECT_TRUE(LooksLikeMigProfile("1g.10gb+me"));
  EXPECT_FALSE(LooksLikeMigProfile("1g10gb"));
  EXPECT_FALSE(LooksLikeMigProfile("0g.10gb"));
  EXPECT_FALSE(LooksLikeMigProfile("g.10gb"));
  EXPECT_FALSE(LooksLikeMigProfile("1g.gb"));
  EXPECT_EQ(ShapeKindName(ShapeKind::kGkeTimeSharing), "gke-time-sharing");
  EXPECT_EQ(ShapeKindName(ShapeKind::kMigSingle), "mig-single");
}

}  // namespace
}  // namespace gpuattr::attribution
