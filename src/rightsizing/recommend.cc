// docs/design.md#rightsizing, "Recommendation".
#include "gpuattr/rightsizing/recommend.h"

#include <algorithm>
#include <limits>

namespace gpuattr::rightsizing {
namespace {

constexpr double kMemoryBound = 0.95;    // peak ≥ 95 % of what the current kind offers
constexpr double kComputeBound = 0.9;    // p95 utilisation of the held device
constexpr int kShares[] = {7, 4, 3, 2};  // time-slicing shares on cards without MIG, smallest first

// One candidate offering.
struct Offering {
  std::string label;
  double compute = 1;
  std::optional<double> memory_bytes;  // unknown: fits no memory need
  bool whole = false;
};

// The candidates' order: fewest compute, the whole GPU before a profile of all G slices, then
// least memory.
bool Smaller(const Offering& a, const Offering& b) {
  if (a.compute != b.compute) return a.compute < b.compute;
  if (a.whole != b.whole) return a.whole;
  return a.memory_bytes.value_or(std::numeric_limits<double>::infinity()) <
         b.memory_bytes.value_or(std::numeric_limits<double>::infinity());
}

bool Fits(const Offering& o, double need_memory, double need_compute) {
  return o.memory_bytes && *o.memory_bytes >= need_memory && o.compute >= need_compute;
}

// The card's row of the table. A whole card's memory tells A100 40GB from 80GB when its name
// does not; a slice's memory is the slice's, so it is not used.
const MigModel* ModelOf(const Holding& h) {
  return MigModelOf(h.model, h.profile.empty() ? h.device_memory_bytes : std::nullopt);
}

int SlicesOf(const Holding& h) {
  const MigModel* model = ModelOf(h);
  return model ? model->slices : 7;
}

std::string ShareLabel(int k) { return "share-1/" + std::to_string(k); }

// The candidates for `in`, sorted smallest first, and the offering the workload holds now.
struct Candidates {
  std::vector<Offering> offerings;
  Offering current;
  bool mig = false;  // the card model has MIG profiles (else shares: no_mig_model)
};

Candidates MigCandidates(const RecommendInput& in, const MigModel* model) {
  const Holding& h = in.current;
  const int slices = model ? model->slices : 7;
  Candidates c;
  c.mig = true;
  std::vector<MigProfile> profiles = model ? model->profiles : std::vector<MigProfile>{};
  for (const MigProfile& p : in.advertised)
    if (std::find(profiles.begin(), profiles.end(), p) == profiles.end()) profiles.push_back(p);
  std::optional<MigProfile> held = h.profile.empty() ? std::nullopt : ParseProfile(h.profile);
  if (held && std::none_of(profiles.begin(), profiles.end(),
                           [&](const MigProfile& p) { return p.name == held->name; }))
    profiles.push_back(*held);  // taken as written
  double whole_memory = 0;
  for (const MigProfile& p : profiles) {
    c.offerings.push_back(
        {p.name, static_cast<double>(std::min(p.g, slices)) / slices, p.memory_gb * 1e9, false});
    whole_memory = std::max(whole_memory, p.memory_gb * 1e9);
  }
  // The whole card: its real memory when the pod holds it whole, else the largest profile's.
  if (h.profile.empty() && h.replicas <= 1 && h.device_memory_bytes)
    whole_memory = *h.device_memory_bytes;
  Offering whole{"whole", 1, whole_memory > 0 ? std::optional(whole_memory) : std::nullopt, true};
  c.offerings.push_back(whole);
  std::sort(c.offerings.begin(), c.offerings.end(), Smaller);
  if (held) {
    c.current = *std::find_if(c.offerings.begin(), c.offerings.end(),
                              [&](const Offering& o) { return !o.whole && o.label == held->name; });
    if (h.replicas > 1) c.current.compute /= h.replicas;
  } else if (h.replicas > 1) {
    const auto k = static_cast<double>(h.replicas);
    c.current = {ShareLabel(h.replicas), 1 / k,
                 h.device_memory_bytes ? std::optional(*h.device_memory_bytes / k) : std::nullopt,
                 false};
  } else {
    c.current = whole;
  }
  return c;
}

Candidates ShareCandidates(const Holding& h) {
  Candidates c;
  const std::optional<double> total = h.device_memory_bytes;
  for (int k : kShares)
    c.offerings.push_back(
        {ShareLabel(k), 1.0 / k, total ? std::optional(*total / k) : std::nullopt, false});
  c.offerings.push_back({"whole", 1, total, true});
  c.current = c.offerings.back();
  if (h.replicas > 1) {
    const auto k = static_cast<double>(h.replicas);
    c.current = {ShareLabel(h.replicas), 1 / k, total ? std::optional(*total / k) : std::nullopt,
                 false};
  }
  return c;
}

// The memory the current kind offers, for memory_bound: the device's real total as the exporter
// reports it (a share 1/k: the total ÷ k), else the name's GB.
std::optional<double> OfferedMemory(const Holding& h, const Offering& current) {
  if (h.device_memory_bytes) return *h.device_memory_bytes / std::max(1, h.replicas);
  return current.memory_bytes;
}

}  // namespace

std::string_view ReasonName(Reason reason) {
  switch (reason) {
    case Reason::kInsufficientData:
      return "insufficient_data";
    case Reason::kMemoryBound:
      return "memory_bound";
    case Reason::kComputeBound:
      return "compute_bound";
    case Reason::kNeedsLarger:
      return "needs_larger";
    case Reason::kFitsSmaller:
      return "fits_smaller";
    case Reason::kRightSized:
      return "right_sized";
    case Reason::kNoMigModel:
      return "no_mig_model";
  }
  return "insufficient_data";
}

std::string HoldingLabel(const Holding& h) {
  if (!h.profile.empty()) return h.profile;
  if (h.replicas > 1) return ShareLabel(h.replicas);
  return "whole";
}

double ComputeShare(const Holding& h) {
  double share = 1;
  if (std::optional<MigProfile> p = ParseProfile(h.profile)) {
    const int slices = SlicesOf(h);
    share = static_cast<double>(std::min(p->g, slices)) / slices;
  }
  return share / std::max(1, h.replicas);
}

bool SmallerHolding(const Holding& a, const Holding& b) {
  const double ca = ComputeShare(a), cb = ComputeShare(b);
  if (ca != cb) return ca < cb;
  const std::optional<MigProfile> pa = ParseProfile(a.profile), pb = ParseProfile(b.profile);
  const double ma = pa ? pa->memory_gb * 1e9 : a.device_memory_bytes.value_or(0);
  const double mb = pb ? pb->memory_gb * 1e9 : b.device_memory_bytes.value_or(0);
  if (ma != mb) return ma < mb;
  return HoldingLabel(a) < HoldingLabel(b);  // a stable order for equal sizes
}

Recommendation Recommend(const RecommendInput& in) {
  const Holding& h = in.current;
  const MigModel* model = ModelOf(h);
  const bool mig = model != nullptr || !h.profile.empty() || !in.advertised.empty();
  const Candidates c = mig ? MigCandidates(in, model) : ShareCandidates(h);

  Recommendation r;
  r.current = c.current.label;
  r.current_share = c.current.compute;
  r.recommended = r.current;
  r.recommended_share = r.current_share;
  if (in.observed_seconds < in.min_observation_seconds || !in.peak_memory_bytes ||
      !in.p95_utilization) {
    r.reason = Reason::kInsufficientData;
    return r;
  }
  const std::optional<double> offered = OfferedMemory(h, c.current);
  if (offered && *in.peak_memory_bytes >= kMemoryBound * *offered) {
    r.reason = Reason::kMemoryBound;
    return r;
  }
  if (*in.p95_utilization >= kComputeBound) {
    r.reason = Reason::kComputeBound;
    return r;
  }
  const double need_memory = *in.peak_memory_bytes * (1 + in.headroom);
  const double need_compute = *in.p95_utilization * c.current.compute * (1 + in.headroom);
  auto it = std::find_if(c.offerings.begin(), c.offerings.end(),
                         [&](const Offering& o) { return Fits(o, need_memory, need_compute); });
  const Offering& best = it != c.offerings.end()
                             ? *it
                             : *std::find_if(c.offerings.begin(), c.offerings.end(),
                                             [](const Offering& o) { return o.whole; });
  r.recommended = best.label;
  r.recommended_share = best.compute;
  // A profile of all G slices recommended whole has the same compute: right-sized.
  const bool same =
      best.label == c.current.label || (best.whole && !c.current.whole && c.current.compute >= 1);
  if (same) {
    r.reason = mig ? Reason::kRightSized : Reason::kNoMigModel;
  } else if (Smaller(c.current, best)) {
    r.reason = Reason::kNeedsLarger;
  } else {
    r.reason = mig ? Reason::kFitsSmaller : Reason::kNoMigModel;
  }
  return r;
}

}  // namespace gpuattr::rightsizing
