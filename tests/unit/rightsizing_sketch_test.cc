// The utilisation sketch against exact percentiles (docs/rightsizing.md#the-utilisation-sketch).
#include "gpuattr/rightsizing/sketch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace gpuattr::rightsizing {
namespace {

constexpr double kAlpha = UtilizationSketch::kRelativeAccuracy;

// The value of rank q × (n − 1) in sorted order, as Quantile defines it.
double Exact(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(std::floor(q * static_cast<double>(v.size() - 1)))];
}

void ExpectWithinBound(const std::vector<double>& data, const UtilizationSketch& s, double q) {
  const double exact = Exact(data, q);
  const std::optional<double> got = s.Quantile(q);
  ASSERT_TRUE(got.has_value());
  if (exact < UtilizationSketch::kMinIndexed) {
    EXPECT_EQ(*got, 0.0) << "q=" << q << " exact=" << exact;
  } else {
    EXPECT_LE(std::abs(*got - exact), kAlpha * exact * (1 + 1e-9))
        << "q=" << q << " exact=" << exact << " got=" << *got;
  }
}

// Random utilisation of several shapes: uniform, mostly idle, mostly busy, dcgm's whole percents,
// a share of exact zeros.
std::vector<double> RandomData(std::mt19937_64& rng, int shape, size_t n) {
  std::uniform_real_distribution<double> uniform(0, 1);
  std::vector<double> v;
  v.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    double x = uniform(rng);
    switch (shape) {
      case 0:
        break;
      case 1:
        x = std::pow(x, 6);
        break;  // mostly near 0
      case 2:
        x = 1 - std::pow(x, 6);
        break;  // mostly near 1
      case 3:
        x = std::round(x * 100) / 100;
        break;  // GPU_UTIL percents
      case 4:
        x = uniform(rng) < 0.3 ? 0 : x * x;
        break;
      default:
        x = std::pow(10, -5 * x);
        break;  // log-uniform over 1e-5..1
    }
    v.push_back(x);
  }
  return v;
}

TEST(RightsizingSketch, QuantilesWithinTheRelativeBound) {
  std::mt19937_64 rng(20261203);
  for (int shape = 0; shape < 6; ++shape) {
    for (size_t n : {1u, 2u, 7u, 100u, 5000u}) {
      const std::vector<double> data = RandomData(rng, shape, n);
      UtilizationSketch s;
      for (double x : data) s.Add(x);
      EXPECT_EQ(s.count(), n);
      for (double q : {0.0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 1.0}) ExpectWithinBound(data, s, q);
    }
  }
}

TEST(RightsizingSketch, ZeroAndTinyValuesUseTheZeroBucket) {
  UtilizationSketch s;
  s.Add(0);
  s.Add(0.005);  // below kMinIndexed: counted as 0
  s.Add(0.5);
  EXPECT_EQ(s.count(), 3u);
  EXPECT_EQ(s.zero_count(), 2u);
  EXPECT_EQ(s.Quantile(0.5), 0.0);  // rank 1 of {0, 0, 0.5}
  EXPECT_NEAR(*s.Quantile(1.0), 0.5, 0.5 * kAlpha);
}

TEST(RightsizingSketch, EmptyOutOfRangeAndNan) {
  UtilizationSketch s;
  EXPECT_FALSE(s.Quantile(0.95).has_value());
  s.Add(std::nan(""));
  EXPECT_TRUE(s.empty());
  s.Add(1.7);  // a ratio above 1 counts as 1
  EXPECT_NEAR(*s.Quantile(0.95), 1.0, kAlpha * (1 + 1e-9));
  EXPECT_LE(*s.Quantile(0.95), 1.0);
}

TEST(RightsizingSketch, BucketsAreBounded) {
  UtilizationSketch s;
  for (int i = 0; i <= 100000; ++i) s.Add(static_cast<double>(i) / 100000);
  EXPECT_LE(s.buckets().size(), static_cast<size_t>(UtilizationSketch::kMaxBuckets));
  EXPECT_LE(s.bucket_slots(), static_cast<size_t>(UtilizationSketch::kMaxBuckets));
  // α = 2 %: γ ≈ 1.0408, log_γ(0.01) ≈ −115.1.
  EXPECT_EQ(UtilizationSketch::kMinIndex, -115);
  EXPECT_EQ(UtilizationSketch::kMaxBuckets, 116);
}

TEST(RightsizingSketch, MergeIsAssociativeAndEqualsOneSketchOfAll) {
  std::mt19937_64 rng(7);
  const std::vector<double> a = RandomData(rng, 0, 300);
  const std::vector<double> b = RandomData(rng, 4, 500);
  const std::vector<double> c = RandomData(rng, 5, 200);
  UtilizationSketch sa, sb, sc, all;
  for (double x : a) sa.Add(x), all.Add(x);
  for (double x : b) sb.Add(x), all.Add(x);
  for (double x : c) sc.Add(x), all.Add(x);

  UtilizationSketch left = sa;  // (a ∪ b) ∪ c
  left.Merge(sb);
  left.Merge(sc);
  UtilizationSketch bc = sb;  // a ∪ (b ∪ c)
  bc.Merge(sc);
  UtilizationSketch right = sa;
  right.Merge(bc);
  UtilizationSketch swapped = sc;  // (c ∪ a) ∪ b: commutative too
  swapped.Merge(sa);
  swapped.Merge(sb);

  EXPECT_EQ(left, right);
  EXPECT_EQ(left, all);
  EXPECT_EQ(swapped, all);
  std::vector<double> pooled = a;
  pooled.insert(pooled.end(), b.begin(), b.end());
  pooled.insert(pooled.end(), c.begin(), c.end());
  ExpectWithinBound(pooled, left, 0.95);
}

// The running window sketch (docs/rightsizing.md#cost): taking a part back out gives the sketch
// of the other parts, the same as merging them anew; what cannot be exact is refused.
TEST(RightsizingSketch, SubtractUndoesMerge) {
  std::mt19937_64 rng(11);
  UtilizationSketch sa, sb, sc;
  for (double x : RandomData(rng, 0, 300)) sa.Add(x);
  for (double x : RandomData(rng, 4, 500)) sb.Add(x);
  sc.Add(0.02);  // a low bucket that only c has
  UtilizationSketch window = sa;
  window.Merge(sb);
  window.Merge(sc);
  UtilizationSketch bc = sb;
  bc.Merge(sc);
  ASSERT_TRUE(window.Subtract(sa));
  EXPECT_EQ(window, bc);  // emptied ends trimmed: the very sketch Merge gives
  ASSERT_TRUE(window.Subtract(sc));
  EXPECT_EQ(window, sb);
  ASSERT_TRUE(window.Subtract(sb));
  EXPECT_EQ(window, UtilizationSketch{});

  UtilizationSketch small;
  small.Add(0.5);
  EXPECT_FALSE(small.Subtract(sa));  // samples it lacks
  EXPECT_EQ(small.count(), 1u);
  UtilizationSketch saturated;
  saturated.Add(0.5, UINT32_MAX);
  saturated.Add(0.5, 10);  // the bucket stays at 2^32 − 1: how many were taken is lost
  EXPECT_FALSE(saturated.Subtract(small));
}

TEST(RightsizingSketch, FromPartsRefusesWhatAddCouldNotMake) {
  UtilizationSketch s;
  s.Add(0);
  s.Add(0.3);
  s.Add(0.9);
  auto back = UtilizationSketch::FromParts(s.zero_count(), s.buckets());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, s);
  EXPECT_FALSE(UtilizationSketch::FromParts(0, {{1, 3}}).has_value());            // above 1
  EXPECT_FALSE(UtilizationSketch::FromParts(0, {{-500, 3}}).has_value());         // below the floor
  EXPECT_FALSE(UtilizationSketch::FromParts(0, {{-3, 0}}).has_value());           // empty bucket
  EXPECT_FALSE(UtilizationSketch::FromParts(0, {{-3, 1}, {-5, 1}}).has_value());  // unsorted
}

}  // namespace
}  // namespace gpuattr::rightsizing
