#include "gpuattr/rightsizing/sketch.h"

#include <algorithm>
#include <cmath>

namespace gpuattr::rightsizing {
namespace {

const double kGamma =
    (1 + UtilizationSketch::kRelativeAccuracy) / (1 - UtilizationSketch::kRelativeAccuracy);
const double kLogGamma = std::log(kGamma);

}  // namespace

const int UtilizationSketch::kMinIndex =
    static_cast<int>(std::ceil(std::log(UtilizationSketch::kMinIndexed) / kLogGamma));
const int UtilizationSketch::kMaxBuckets = 1 - UtilizationSketch::kMinIndex;

int32_t UtilizationSketch::IndexOf(double ratio) {
  const double x = std::clamp(ratio, kMinIndexed, 1.0);
  const int i = static_cast<int>(std::ceil(std::log(x) / kLogGamma));
  return std::clamp(i, kMinIndex, 0);
}

double UtilizationSketch::ValueOf(int32_t index) {
  // The point within α of both ends of (γ^(i−1), γ^i]; bucket 0 holds values ≤ 1 only.
  return std::min(1.0, 2 * std::pow(kGamma, index) / (kGamma + 1));
}

void UtilizationSketch::AddToBucket(int32_t index, uint64_t count) {
  auto it = std::lower_bound(buckets_.begin(), buckets_.end(), index,
                             [](const Bucket& b, int32_t i) { return b.index < i; });
  if (it != buckets_.end() && it->index == index)
    it->count += count;
  else
    buckets_.insert(it, Bucket{index, count});
}

void UtilizationSketch::Add(double ratio, uint64_t count) {
  if (std::isnan(ratio) || count == 0) return;
  count_ += count;
  if (ratio < kMinIndexed) {
    zero_count_ += count;
    return;
  }
  AddToBucket(IndexOf(ratio), count);
}

void UtilizationSketch::Merge(const UtilizationSketch& other) {
  count_ += other.count_;
  zero_count_ += other.zero_count_;
  std::vector<Bucket> merged;
  merged.reserve(buckets_.size() + other.buckets_.size());
  auto a = buckets_.begin();
  auto b = other.buckets_.begin();
  while (a != buckets_.end() || b != other.buckets_.end()) {
    if (b == other.buckets_.end() || (a != buckets_.end() && a->index < b->index)) {
      merged.push_back(*a++);
    } else if (a == buckets_.end() || b->index < a->index) {
      merged.push_back(*b++);
    } else {
      merged.push_back({a->index, a->count + b->count});
      ++a;
      ++b;
    }
  }
  buckets_ = std::move(merged);
}

std::optional<double> UtilizationSketch::Quantile(double q) const {
  if (count_ == 0) return std::nullopt;
  const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(count_ - 1);
  // The first bucket whose cumulative count passes the rank holds the sample of that rank.
  uint64_t seen = zero_count_;
  if (static_cast<double>(seen) > rank) return 0.0;
  for (const Bucket& b : buckets_) {
    seen += b.count;
    if (static_cast<double>(seen) > rank) return ValueOf(b.index);
  }
  return ValueOf(buckets_.empty() ? 0 : buckets_.back().index);
}

std::optional<UtilizationSketch> UtilizationSketch::FromParts(uint64_t zero_count,
                                                              std::vector<Bucket> buckets) {
  UtilizationSketch s;
  s.zero_count_ = zero_count;
  s.count_ = zero_count;
  for (size_t i = 0; i < buckets.size(); ++i) {
    const Bucket& b = buckets[i];
    if (b.index < kMinIndex || b.index > 0 || b.count == 0) return std::nullopt;
    if (i > 0 && buckets[i - 1].index >= b.index) return std::nullopt;
    s.count_ += b.count;
  }
  s.buckets_ = std::move(buckets);
  return s;
}

}  // namespace gpuattr::rightsizing
