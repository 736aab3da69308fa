// The recommendation rule of docs/design.md#rightsizing, pure: from what a workload holds and
// what it used, the smallest offering that fits, and why
// (docs/rightsizing.md#reading-a-recommendation).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/rightsizing/profiles.h"

namespace gpuattr::rightsizing {

// In the order that decides when several hold (no_mig_model stands in for fits_smaller and
// right_sized on cards without MIG).
enum class Reason {
  kInsufficientData,
  kMemoryBound,
  kComputeBound,
  kNeedsLarger,
  kFitsSmaller,
  kRightSized,
  kNoMigModel,
};
std::string_view ReasonName(Reason reason);  // "insufficient_data", "memory_bound", ...

// What one pod holds on one device (the `current` of docs/design.md#rightsizing).
struct Holding {
  std::string model;    // the card model as the exporter names it
  std::string profile;  // a MIG slice: its profile mapped onto the table (CanonicalProfile)
  int replicas = 1;     // a time-slicing replica: the device is shared r ways (1: not shared)
  std::optional<double> device_memory_bytes;  // the device's real total, as the exporter says
  bool operator==(const Holding&) const = default;
};

// "whole", "3g.40gb" or "share-1/4": the `current` and `recommended` label vocabulary.
std::string HoldingLabel(const Holding& h);
// The compute share held: 1 for a whole GPU, g/G for a slice, 1/r for a replica (a replica of a
// slice: g/G/r). G is the table's, else 7.
double ComputeShare(const Holding& h);
// Orders holdings by size (compute share, then memory) for "a workload whose pods hold different
// kinds reports the largest". True when `a` is smaller than `b`.
bool SmallerHolding(const Holding& a, const Holding& b);

struct RecommendInput {
  Holding current;  // the largest kind the workload's pods hold (or last held)
  // Profiles the cluster's nodes advertise for this card model that the table lacks.
  std::vector<MigProfile> advertised;
  std::optional<double> peak_memory_bytes;  // of any one pod, over the window
  std::optional<double> p95_utilization;    // of the held devices, over the window
  double observed_seconds = 0;
  double min_observation_seconds = 86400;
  double headroom = 0.2;
};

struct Recommendation {
  std::string current;      // HoldingLabel(current)
  std::string recommended;  // same vocabulary
  Reason reason = Reason::kInsufficientData;
  double current_share = 1;      // ComputeShare(current)
  double recommended_share = 1;  // the recommended offering's compute share
};

Recommendation Recommend(const RecommendInput& in);

}  // namespace gpuattr::rightsizing
