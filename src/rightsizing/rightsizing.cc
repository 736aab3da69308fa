// docs/design.md#rightsizing, "Observations"; the rules are in rightsizing.h.
#include "gpuattr/rightsizing/rightsizing.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "holding.h"

namespace gpuattr::rightsizing {
namespace {

// What one cycle saw of one workload.
struct CycleSeen {
  size_t pods = 0;
  kube::PodId last_pod;  // pod_devices come sorted by pod: a new pod is a new id
  bool data = false;
  std::optional<Holding> largest;
  double largest_share = 0;  // ComputeShare(*largest)
  std::optional<double> peak_memory_bytes;
  UtilizationSketch utilization;
  std::vector<double> held_shares;  // one per (pod, device) it holds now
};

void MaxInto(std::optional<double>& into, std::optional<double> v) {
  if (v && (!into || *v > *into)) into = v;
}

struct WorkloadHash {
  size_t operator()(const WorkloadId& id) const {
    const std::hash<std::string> h;
    return h(id.namespace_) ^ (h(id.kind) * 31) ^ (h(id.name) * 1000003);
  }
};
using Seen = std::unordered_map<WorkloadId, CycleSeen, WorkloadHash>;

// Groups this cycle's pods on devices by workload.
Seen SeeCycle(const attribution::Attribution& attribution, const kube::ClusterObjects& objects) {
  Seen seen;
  const kube::Pod* pod = nullptr;  // the previous link's, reused for its next devices
  CycleSeen* s_of_pod = nullptr;
  for (const attribution::PodDevice& link : attribution.pod_devices) {
    if (link.sharing == attribution::Sharing::kUnrequested) continue;  // asked for nothing
    if (link.device >= attribution.devices.size()) continue;
    if (pod == nullptr || pod->namespace_ != link.pod.namespace_ || pod->name != link.pod.name) {
      pod = objects.FindPod(link.pod.namespace_, link.pod.name);
      s_of_pod = nullptr;
    }
    if (pod == nullptr) continue;
    const attribution::Device& device = attribution.devices[link.device];
    if (s_of_pod == nullptr) {
      s_of_pod = &seen[WorkloadOf(*pod)];
      if (s_of_pod->pods == 0 || s_of_pod->last_pod != link.pod) {
        ++s_of_pod->pods;
        s_of_pod->last_pod = link.pod;
      }
    }
    CycleSeen& s = *s_of_pod;
    const Holding h = HoldingOf(link, device, *pod, objects.FindNode(device.id.node));
    // Most pods of a workload hold the same kind: compare and parse only when it differs.
    if (!s.largest) {
      s.largest = h;
      s.largest_share = ComputeShare(h);
      s.held_shares.push_back(s.largest_share);
    } else if (h == *s.largest) {
      s.held_shares.push_back(s.largest_share);
    } else {
      const double share = ComputeShare(h);
      s.held_shares.push_back(share);
      if (SmallerHolding(*s.largest, h)) {
        s.largest = h;
        s.largest_share = share;
      }
    }
    const std::optional<double> util = link.utilization ? link.utilization : device.utilization;
    if (!util && !link.memory_used_bytes) continue;  // unknown this cycle: adds nothing
    s.data = true;
    MaxInto(s.peak_memory_bytes, link.memory_used_bytes);
    if (util) s.utilization.Add(*util);
  }
  return seen;
}

// The slot `now` falls in, created at the end when it is new.
WindowSlot& SlotAt(WorkloadRecord& r, double now, double slot_seconds) {
  const double start = std::floor(now / slot_seconds) * slot_seconds;
  if (r.slots.empty() || r.slots.back().start_unix < start) r.slots.push_back({start, 0, {}, {}});
  return r.slots.back();  // a clock that went back adds to the newest slot
}

// Drops the slots wholly before the window, and then the workloads left with none.
void Expire(RightsizingState& state, double now, double window, double slot_seconds) {
  for (auto it = state.workloads.begin(); it != state.workloads.end();) {
    std::vector<WindowSlot>& slots = it->second.slots;
    std::erase_if(slots,
                  [&](const WindowSlot& s) { return s.start_unix + slot_seconds <= now - window; });
    it = slots.empty() ? state.workloads.erase(it) : std::next(it);
  }
}

WorkloadView ViewOf(const WorkloadId& id, const WorkloadRecord& r, const CycleSeen* now,
                    const AdvertisedProfiles& advertised, const RightsizingParams& params) {
  WorkloadView v;
  v.id = id;
  UtilizationSketch util;
  for (const WindowSlot& s : r.slots) {
    v.observed_seconds += s.observed_seconds;
    MaxInto(v.memory_peak_bytes, s.peak_memory_bytes);
    util.Merge(s.utilization);
  }
  v.utilization_p95 = util.Quantile(0.95);
  RecommendInput in;
  in.current = r.current;
  if (auto it = advertised.find(r.current.model); it != advertised.end())
    in.advertised = it->second;
  in.peak_memory_bytes = v.memory_peak_bytes;
  in.p95_utilization = v.utilization_p95;
  in.observed_seconds = v.observed_seconds;
  in.min_observation_seconds = params.min_observation_seconds;
  in.headroom = params.headroom;
  v.recommendation = Recommend(in);
  if (now != nullptr) {
    v.pods = now->pods;
    for (double held : now->held_shares) {
      v.gpu_equivalents += held;
      v.reclaimable_gpu_equivalents += std::max(0.0, held - v.recommendation.recommended_share);
    }
  }
  return v;
}

}  // namespace

Tracker::Tracker(RightsizingParams params, RightsizingState initial)
    : params_(params), state_(std::move(initial)) {}

RightsizingView Tracker::Record(const attribution::Attribution& attribution,
                                const kube::ClusterObjects& objects, double now_unix) {
  const double slot_seconds = params_.window_seconds / kSlotsPerWindow;
  double interval = 0;
  if (state_.last_cycle_unix) {
    const double dt = now_unix - *state_.last_cycle_unix;
    if (dt > 0 && dt <= params_.max_gap_seconds) interval = dt;
  }
  state_.last_cycle_unix = now_unix;

  const Seen seen = SeeCycle(attribution, objects);
  for (const auto& [id, s] : seen) {
    if (!s.data) continue;
    WorkloadRecord& r = state_.workloads[id];
    if (s.largest) {
      // Utilisation of another kind of device says nothing about this one: start over.
      if (!r.slots.empty() && (HoldingLabel(r.current) != HoldingLabel(*s.largest) ||
                               r.current.model != s.largest->model))
        r.slots.clear();
      r.current = *s.largest;
    }
    r.last_seen_unix = now_unix;
    WindowSlot& slot = SlotAt(r, now_unix, slot_seconds);
    slot.observed_seconds += interval;
    MaxInto(slot.peak_memory_bytes, s.peak_memory_bytes);
    slot.utilization.Merge(s.utilization);
  }
  Expire(state_, now_unix, params_.window_seconds, slot_seconds);

  const AdvertisedProfiles advertised = AdvertisedByModel(attribution, objects);
  RightsizingView view;
  view.workloads.reserve(state_.workloads.size());
  for (const auto& [id, r] : state_.workloads) {
    auto it = seen.find(id);
    view.workloads.push_back(
        ViewOf(id, r, it == seen.end() ? nullptr : &it->second, advertised, params_));
  }
  return view;
}

}  // namespace gpuattr::rightsizing
