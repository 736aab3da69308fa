// The utilisation sketch (docs/rightsizing.md#the-utilisation-sketch): DDSketch's logarithmic
// buckets (Masson, Rim and Lee, VLDB 2019) over utilisation ratios, with a zero bucket. Mergeable
// (bucket counts add), so a workload's samples from many pods and many days pool into one p95.
//
// - A value x in [kMinIndexed, 1] goes to bucket i = ceil(log_γ x), γ = (1 + α) / (1 − α),
//   α = kRelativeAccuracy; bucket i stands for 2γ^i / (γ + 1), within α of every value in it.
// - x below kMinIndexed (0 included) goes to the zero bucket and reads back as 0; x above 1 is
//   counted as 1 (ratios are at most 1); NaN is ignored. Below 1 % a p95 changes no
//   recommendation (docs/rightsizing.md#the-utilisation-sketch).
// - Counts are kept dense from the lowest to the highest bucket used, 4 bytes each: at most
//   kMaxBuckets (116) of them, whatever the number of samples (464 bytes).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace gpuattr::rightsizing {

class UtilizationSketch {
 public:
  static constexpr double kRelativeAccuracy = 0.02;
  static constexpr double kMinIndexed = 1e-2;  // 1 % utilisation
  static const int kMinIndex;                  // ceil(log_γ kMinIndexed): −115
  static const int kMaxBuckets;                // indexes kMinIndex..0

  struct Bucket {
    int32_t index = 0;
    uint64_t count = 0;
    bool operator==(const Bucket&) const = default;
  };

  void Add(double ratio, uint64_t count = 1);
  void Merge(const UtilizationSketch& other);
  // Takes back what Merge(other) added (a running window sketch dropping an old slot). False,
  // and unchanged, when that cannot be exact: `other` has samples this sketch lacks, or a bucket
  // here has saturated; the caller then merges again from the parts.
  bool Subtract(const UtilizationSketch& other);
  // The q-quantile (0 ≤ q ≤ 1) of the samples: the value of rank q × (n − 1) in sorted order,
  // within α relative (0 for the zero bucket). Absent when empty.
  std::optional<double> Quantile(double q) const;

  uint64_t count() const { return count_; }
  uint64_t zero_count() const { return zero_count_; }
  bool empty() const { return count_ == 0; }
  std::vector<Bucket> buckets() const;                    // sorted by index, counts > 0
  size_t bucket_slots() const { return counts_.size(); }  // dense counts held (memory)

  // Rebuilds a sketch from its parts (the state file). Buckets out of range or with a zero count
  // are refused (false), so a hand-edited file cannot grow a sketch beyond its bound.
  static std::optional<UtilizationSketch> FromParts(uint64_t zero_count,
                                                    std::vector<Bucket> buckets);

  // The bucket of `ratio` (kMinIndexed ≤ ratio ≤ 1) and the value that bucket stands for.
  static int32_t IndexOf(double ratio);
  static double ValueOf(int32_t index);

  bool operator==(const UtilizationSketch&) const = default;

 private:
  void AddToBucket(int32_t index, uint64_t count);

  uint64_t count_ = 0;
  uint64_t zero_count_ = 0;
  int32_t first_index_ = 0;       // the bucket of counts_[0]
  std::vector<uint32_t> counts_;  // dense; saturates at 2^32 − 1 per bucket
};

}  // namespace gpuattr::rightsizing
