// The recommendation rule (docs/design.md#rightsizing) over cases worked out by hand. Unless a
// case says otherwise: observed 7 days (min_observation 1 day), headroom 0.2, so
//   need memory  = peak × 1.2
//   need compute = p95 × current share × 1.2
// and the candidates are tried smallest first (fewest slices, the whole GPU before a profile of
// all G slices, then least memory). A profile offers the GB in its name (10^9 bytes).
#include "gpuattr/rightsizing/recommend.h"

#include <gtest/gtest.h>

#include <ostream>

namespace gpuattr::rightsizing {
namespace {

constexpr double kDay = 86400;
constexpr double kMiB = 1024.0 * 1024.0;

struct Case {
  const char* name;
  Holding current;
  double peak_bytes;
  double p95;
  std::string recommended;
  Reason reason;
  double recommended_share;
  std::vector<MigProfile> advertised = {};
  double observed_seconds = 7 * kDay;
};

// The case's name, not its 192 bytes in hex, in test listings and CTest's names.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

RecommendInput InputOf(const Case& c) {
  RecommendInput in;
  in.current = c.current;
  in.advertised = c.advertised;
  in.peak_memory_bytes = c.peak_bytes;
  in.p95_utilization = c.p95;
  in.observed_seconds = c.observed_seconds;
  in.min_observation_seconds = kDay;
  in.headroom = 0.2;
  return in;
}

Holding Whole(const char* model, double total_bytes) { return {model, "", 1, total_bytes}; }
Holding Slice(const char* model, const char* profile, std::optional<double> total = {}) {
  return {model, profile, 1, total};
}
Holding Share(const char* model, int r, double total_bytes) { return {model, "", r, total_bytes}; }

const Case kCases[] = {
    // A100 80GB, whole (81,920 MiB), peak 12 GB, p95 10 %: need 14.4 GB and 0.12.
    // 1g.10gb: 10 GB < 14.4 ✗; 1g.20gb: 20 GB ✓, 1/7 = 0.143 ≥ 0.12 ✓.
    {"a100_80_whole_fits_1g20", Whole("NVIDIA A100-SXM4-80GB", 81920 * kMiB), 12e9, 0.10, "1g.20gb",
     Reason::kFitsSmaller, 1.0 / 7},
    // A100 40GB, whole (40,960 MiB), peak 12 GB, p95 25 %: need 14.4 GB and 0.3.
    // 1g.5gb, 2g.10gb: memory ✗; 3g.20gb: 20 GB ✓, 3/7 = 0.43 ✓.
    {"a100_40_whole_fits_3g20", Whole("NVIDIA A100-PCIE-40GB", 40960 * kMiB), 12e9, 0.25, "3g.20gb",
     Reason::kFitsSmaller, 3.0 / 7},
    // H100 80GB on 3g.40gb (42 GB real), peak 30 GB (71 % of 42: not memory bound), p95 50 %:
    // need 36 GB and 0.5 × 3/7 × 1.2 = 0.257. 1g.*, 2g.20gb: memory ✗; 3g.40gb ✓ = current.
    {"h100_3g40_right_sized", Slice("NVIDIA H100 80GB HBM3", "3g.40gb", 42e9), 30e9, 0.50,
     "3g.40gb", Reason::kRightSized, 3.0 / 7},
    // H100 NVL on 1g.12gb (device total unknown: 12 GB from the name), peak 11 GB (92 %: not
    // memory bound), p95 80 %: need 13.2 GB and 0.8 × 1/7 × 1.2 = 0.137.
    // 1g.12gb: 12 < 13.2 ✗; 1g.24gb: 24 GB ✓, 1/7 ✓ → more memory than now: needs_larger.
    {"h100_nvl_1g12_needs_larger", Slice("NVIDIA H100 NVL", "1g.12gb"), 11e9, 0.80, "1g.24gb",
     Reason::kNeedsLarger, 1.0 / 7},
    // H200 whole (143,771 MiB), peak 60 GB, p95 30 %: need 72 GB and 0.36. 1g.*, 2g.35gb ✗;
    // 3g.71gb and 4g.71gb: 71 GB < 72 ✗ (the name's GB is conservative); whole ✓ = current.
    {"h200_whole_right_sized", Whole("NVIDIA H200", 143771 * kMiB), 60e9, 0.30, "whole",
     Reason::kRightSized, 1},
    // B200 whole (183,359 MiB), peak 40 GB, p95 20 %: need 48 GB and 0.24.
    // 1g.23gb, 1g.45gb, 2g.45gb: memory ✗ (45 < 48); 3g.90gb: 90 GB ✓, 3/7 ✓.
    {"b200_whole_fits_3g90", Whole("NVIDIA B200", 183359 * kMiB), 40e9, 0.20, "3g.90gb",
     Reason::kFitsSmaller, 3.0 / 7},
    // A30 whole (24,576 MiB), G = 4, peak 5 GB, p95 30 %: need 6 GB and 0.36.
    // 1g.6gb: 1/4 = 0.25 < 0.36 ✗; 2g.12gb: 0.5 ✓, 12 GB ✓.
    {"a30_whole_fits_2g12", Whole("NVIDIA A30", 24576 * kMiB), 5e9, 0.30, "2g.12gb",
     Reason::kFitsSmaller, 0.5},
    // L4 (no MIG), whole (23,034 MiB = 24.15 GB), peak 4 GB, p95 15 %: need 4.8 GB and 0.18.
    // share-1/7: 0.143 ✗; share-1/4: 0.25 ✓, 24.15/4 = 6.04 GB ✓.
    {"l4_whole_share_1_4", Whole("NVIDIA L4", 23034 * kMiB), 4e9, 0.15, "share-1/4",
     Reason::kNoMigModel, 0.25},
    // T4 (no MIG) on share-1/4 of 15,360 MiB (16.1 GB: 4.03 GB each), peak 3.5 GB (87 %: not
    // memory bound), p95 60 %: need 4.2 GB and 0.6 × 1/4 × 1.2 = 0.18.
    // share-1/7 ✗ compute; share-1/4: 4.03 GB < 4.2 ✗; share-1/3: 5.37 GB ✓, 0.33 ✓ → larger.
    {"t4_share_needs_larger", Share("Tesla T4", 4, 15360 * kMiB), 3.5e9, 0.60, "share-1/3",
     Reason::kNeedsLarger, 1.0 / 3},
    // T4 on share-1/2 (8.05 GB), peak 2 GB, p95 20 %: need 2.4 GB and 0.2 × 0.5 × 1.2 = 0.12.
    // share-1/7: 2.3 GB < 2.4 ✗; share-1/4: 4.03 GB ✓, 0.25 ✓ → smaller, no MIG: no_mig_model.
    {"t4_share_smaller", Share("Tesla T4", 2, 15360 * kMiB), 2e9, 0.20, "share-1/4",
     Reason::kNoMigModel, 0.25},
    // L4 whole, peak 10 GB, p95 50 %: need 12 GB and 0.6: shares ✗ (1/2: 0.5 < 0.6); whole.
    {"l4_whole_stays", Whole("NVIDIA L4", 23034 * kMiB), 10e9, 0.50, "whole", Reason::kNoMigModel,
     1},
    // The cluster advertises 1g.15gb on A100 80GB nodes, which the table lacks. As the first
    // case (need 14.4 GB and 0.12): 1g.10gb ✗; 1g.15gb: 15 GB ✓, 1/7 ✓, before 1g.20gb.
    {"advertised_profile_not_in_table",
     Whole("NVIDIA A100-SXM4-80GB", 81920 * kMiB),
     12e9,
     0.10,
     "1g.15gb",
     Reason::kFitsSmaller,
     1.0 / 7,
     {{"1g.15gb", 1, 15}}},
    // A profile the table lacks on a model it lacks (GH200): taken as written, G = 7. Peak 5 GB,
    // p95 30 %: need 6 GB and 0.3 × 1/7 × 1.2 = 0.051: 1g.12gb ✓ = current.
    {"profile_as_written", Slice("NVIDIA GH200 480GB", "1g.12gb"), 5e9, 0.30, "1g.12gb",
     Reason::kRightSized, 1.0 / 7},
    // A100 80GB on 7g.80gb (81 GB real), peak 70 GB (86 %), p95 50 %: need 84 GB and 0.6.
    // Nothing fits (whole offers the largest profile's 80 GB): whole, the same compute as
    // 7 of 7 slices: right_sized.
    {"all_slices_recommended_whole", Slice("NVIDIA A100-SXM4-80GB", "7g.80gb", 81e9), 70e9, 0.5,
     "whole", Reason::kRightSized, 1},
    // memory_bound: A100 40GB on 3g.20gb (20,480 MiB = 21.47 GB real), peak 20.5 GB = 95.5 % ≥
    // 95 %; recommended = current.
    {"memory_bound", Slice("NVIDIA A100-SXM4-40GB", "3g.20gb", 20480 * kMiB), 20.5e9, 0.30,
     "3g.20gb", Reason::kMemoryBound, 3.0 / 7},
    // compute_bound: A100 80GB whole, peak 5 GB (would fit 1g.10gb), p95 92 % ≥ 90 %.
    {"compute_bound", Whole("NVIDIA A100-SXM4-80GB", 81920 * kMiB), 5e9, 0.92, "whole",
     Reason::kComputeBound, 1},
    // insufficient_data: observed 1 h < 1 day, though 1g.10gb would fit.
    {"insufficient_data",
     Whole("NVIDIA A100-SXM4-80GB", 81920 * kMiB),
     5e9,
     0.10,
     "whole",
     Reason::kInsufficientData,
     1,
     {},
     3600},
    // Order: insufficient_data before memory_bound (both hold).
    {"order_insufficient_before_memory",
     Slice("NVIDIA A100-SXM4-40GB", "3g.20gb", 20480 * kMiB),
     21e9,
     0.95,
     "3g.20gb",
     Reason::kInsufficientData,
     3.0 / 7,
     {},
     3600},
    // Order: memory_bound before compute_bound (peak 97.8 %, p95 95 %: both hold).
    {"order_memory_before_compute", Slice("NVIDIA A100-SXM4-40GB", "3g.20gb", 20480 * kMiB), 21e9,
     0.95, "3g.20gb", Reason::kMemoryBound, 3.0 / 7},
    // Order: compute_bound before needs_larger (H100 NVL 1g.12gb, peak 11 GB needs 1g.24gb, p95
    // 95 %).
    {"order_compute_before_needs_larger", Slice("NVIDIA H100 NVL", "1g.12gb"), 11e9, 0.95,
     "1g.12gb", Reason::kComputeBound, 1.0 / 7},
    // Order on a card without MIG: compute_bound before no_mig_model (T4 share-1/2, p95 91 %).
    {"order_compute_before_no_mig", Share("Tesla T4", 2, 15360 * kMiB), 1e9, 0.91, "share-1/2",
     Reason::kComputeBound, 0.5},
};

class RecommendCases : public ::testing::TestWithParam<Case> {};

TEST_P(RecommendCases, AsWorkedOutByHand) {
  const Case& c = GetParam();
  const Recommendation r = Recommend(InputOf(c));
  EXPECT_EQ(r.current, HoldingLabel(c.current));
  EXPECT_EQ(r.recommended, c.recommended);
  EXPECT_EQ(ReasonName(r.reason), ReasonName(c.reason));
  EXPECT_NEAR(r.recommended_share, c.recommended_share, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Rightsizing, RecommendCases, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(RightsizingRecommend, NoUtilisationOrMemoryIsInsufficientData) {
  Case c = kCases[0];
  RecommendInput in = InputOf(c);
  in.p95_utilization.reset();
  EXPECT_EQ(Recommend(in).reason, Reason::kInsufficientData);
  in = InputOf(c);
  in.peak_memory_bytes.reset();
  EXPECT_EQ(Recommend(in).reason, Reason::kInsufficientData);
}

TEST(RightsizingRecommend, HeadroomMovesTheNeed) {
  // Peak 9 GB on A100 80GB whole: 1g.10gb fits with no headroom (9 ≤ 10), not with 20 %
  // (10.8 > 10).
  RecommendInput in;
  in.current = Whole("NVIDIA A100-SXM4-80GB", 81920 * kMiB);
  in.peak_memory_bytes = 9e9;
  in.p95_utilization = 0.05;
  in.observed_seconds = 7 * kDay;
  in.headroom = 0;
  EXPECT_EQ(Recommend(in).recommended, "1g.10gb");
  in.headroom = 0.2;
  EXPECT_EQ(Recommend(in).recommended, "1g.20gb");
}

TEST(RightsizingProfiles, TableAndMapping) {
  ASSERT_NE(MigModelOf("NVIDIA A100-SXM4-80GB"), nullptr);
  EXPECT_EQ(MigModelOf("NVIDIA A100-SXM4-80GB")->family, "A100 80GB");
  EXPECT_EQ(MigModelOf("NVIDIA A100-SXM4-40GB")->family, "A100 40GB");
  EXPECT_EQ(MigModelOf("NVIDIA A100 PCIe", 85e9)->family, "A100 80GB");  // told by its memory
  EXPECT_EQ(MigModelOf("NVIDIA H100 PCIe")->family, "H100 80GB");
  EXPECT_EQ(MigModelOf("NVIDIA H100 NVL")->family, "H100 NVL 94GB");
  EXPECT_EQ(MigModelOf("NVIDIA H200 NVL")->family, "H200 141GB");
  EXPECT_EQ(MigModelOf("NVIDIA B200")->family, "B200");
  EXPECT_EQ(MigModelOf("NVIDIA A30")->slices, 4);
  EXPECT_EQ(MigModelOf("NVIDIA L4"), nullptr);
  EXPECT_EQ(MigModelOf("Tesla T4"), nullptr);
  EXPECT_EQ(MigModelOf("NVIDIA A300X"), nullptr);
  EXPECT_EQ(MigModelOf("NVIDIA GH200 480GB"), nullptr);

  const MigModel* nvl = MigModelOf("NVIDIA H100 NVL");
  EXPECT_EQ(CanonicalProfile(nvl, "1g.11gb")->name, "1g.12gb");  // dcgm's name, within 10 %
  EXPECT_EQ(CanonicalProfile(nvl, "1g.22gb")->name, "1g.24gb");
  EXPECT_EQ(CanonicalProfile(MigModelOf("NVIDIA A100-SXM4-80GB"), "7g.79gb")->name, "7g.80gb");
  EXPECT_EQ(CanonicalProfile(MigModelOf("NVIDIA A100-SXM4-80GB"), "nvidia.com/mig-3g.40gb")->name,
            "3g.40gb");
  EXPECT_EQ(CanonicalProfile(nvl, "2g.30gb")->name, "2g.30gb");  // as written
  EXPECT_FALSE(CanonicalProfile(nvl, "whole").has_value());
  EXPECT_FALSE(ParseProfile("3g.40").has_value());
  EXPECT_FALSE(ParseProfile("1g.10gb+me").has_value());
}

TEST(RightsizingRecommend, LabelsSharesAndOrder) {
  EXPECT_EQ(HoldingLabel(Whole("NVIDIA L4", 1)), "whole");
  EXPECT_EQ(HoldingLabel(Share("NVIDIA L4", 4, 1)), "share-1/4");
  EXPECT_EQ(HoldingLabel(Slice("NVIDIA A30", "2g.12gb")), "2g.12gb");
  EXPECT_DOUBLE_EQ(ComputeShare(Slice("NVIDIA A30", "2g.12gb")), 0.5);
  EXPECT_DOUBLE_EQ(ComputeShare(Slice("NVIDIA A100-SXM4-80GB", "3g.40gb")), 3.0 / 7);
  EXPECT_DOUBLE_EQ(ComputeShare(Share("Tesla T4", 4, 1)), 0.25);
  EXPECT_TRUE(SmallerHolding(Slice("NVIDIA A100-SXM4-80GB", "1g.10gb"),
                             Slice("NVIDIA A100-SXM4-80GB", "1g.20gb")));
  EXPECT_TRUE(SmallerHolding(Slice("NVIDIA A100-SXM4-80GB", "3g.40gb"),
                             Whole("NVIDIA A100-SXM4-80GB", 85e9)));
  EXPECT_FALSE(SmallerHolding(Whole("NVIDIA L4", 24e9), Share("NVIDIA L4", 2, 24e9)));
}

}  // namespace
}  // namespace gpuattr::rightsizing
