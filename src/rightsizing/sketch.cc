#include "gpuattr/rightsizing/sketch.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

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
  if (counts_.empty()) {
    first_index_ = index;
    counts_.push_back(0);
  } else if (index < first_index_) {
    counts_.insert(counts_.begin(), static_cast<size_t>(first_index_ - index), 0);
    first_index_ = index;
  } else if (const auto at = static_cast<size_t>(index - first_index_); at >= counts_.size()) {
    counts_.resize(at + 1, 0);
  }
  uint32_t& c = counts_[static_cast<size_t>(index - first_index_)];
  c = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{c} + count, UINT32_MAX));
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
  if (other.counts_.empty()) return;
  // Widen to both ranges once, then add bucket by bucket (a cycle merges 8 slots per workload).
  const int32_t last = other.first_index_ + static_cast<int32_t>(other.counts_.size()) - 1;
  AddToBucket(other.first_index_, 0);
  AddToBucket(last, 0);
  uint32_t* into = counts_.data() + (other.first_index_ - first_index_);
  for (size_t i = 0; i < other.counts_.size(); ++i)
    into[i] =
        static_cast<uint32_t>(std::min<uint64_t>(uint64_t{into[i]} + other.counts_[i], UINT32_MAX));
}

bool UtilizationSketch::Subtract(const UtilizationSketch& other) {
  if (other.count_ > count_ || other.zero_count_ > zero_count_) return false;
  if (other.count_ == 0) return true;
  const int32_t last = first_index_ + static_cast<int32_t>(counts_.size()) - 1;
  const int32_t other_last = other.first_index_ + static_cast<int32_t>(other.counts_.size()) - 1;
  if (!other.counts_.empty() && (other.first_index_ < first_index_ || other_last > last))
    return false;
  const size_t offset =
      other.counts_.empty() ? 0 : static_cast<size_t>(other.first_index_ - first_index_);
  for (size_t i = 0; i < other.counts_.size(); ++i) {
    const uint32_t c = counts_[offset + i];
    if (c == UINT32_MAX || c < other.counts_[i]) return false;
  }
  for (size_t i = 0; i < other.counts_.size(); ++i) counts_[offset + i] -= other.counts_[i];
  count_ -= other.count_;
  zero_count_ -= other.zero_count_;
  // Trim the emptied ends, so the sketch is the one Merge of the remaining parts would give.
  size_t begin = 0;
  while (begin < counts_.size() && counts_[begin] == 0) ++begin;
  size_t end = counts_.size();
  while (end > begin && counts_[end - 1] == 0) --end;
  counts_.erase(counts_.begin() + static_cast<std::ptrdiff_t>(end), counts_.end());
  counts_.erase(counts_.begin(), counts_.begin() + static_cast<std::ptrdiff_t>(begin));
  first_index_ = counts_.empty() ? 0 : first_index_ + static_cast<int32_t>(begin);
  return true;
}

std::vector<UtilizationSketch::Bucket> UtilizationSketch::buckets() const {
  std::vector<Bucket> out;
  for (size_t i = 0; i < counts_.size(); ++i)
    if (counts_[i] > 0) out.push_back({first_index_ + static_cast<int32_t>(i), counts_[i]});
  return out;
}

std::optional<double> UtilizationSketch::Quantile(double q) const {
  if (count_ == 0) return std::nullopt;
  const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(count_ - 1);
  // The first bucket whose cumulative count passes the rank holds the sample of that rank.
  uint64_t seen = zero_count_;
  if (static_cast<double>(seen) > rank) return 0.0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (static_cast<double>(seen) > rank) return ValueOf(first_index_ + static_cast<int32_t>(i));
  }
  return ValueOf(first_index_ + static_cast<int32_t>(counts_.size()) - 1);
}

std::optional<UtilizationSketch> UtilizationSketch::FromParts(uint64_t zero_count,
                                                              std::vector<Bucket> buckets) {
  UtilizationSketch s;
  s.zero_count_ = zero_count;
  s.count_ = zero_count;
  for (size_t i = 0; i < buckets.size(); ++i) {
    const Bucket& b = buckets[i];
    if (b.index < kMinIndex || b.index > 0 || b.count == 0 || b.count > UINT32_MAX)
      return std::nullopt;
    if (i > 0 && buckets[i - 1].index >= b.index) return std::nullopt;
    s.count_ += b.count;
    s.AddToBucket(b.index, b.count);
  }
  return s;
}

}  // namespace gpuattr::rightsizing
