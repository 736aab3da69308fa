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
  const kube::PodId* last_pod = nullptr;  // pod_devices come sorted by pod: a new pod is a new id
  bool data = false;
  std::optional<Holding> largest;
  double largest_share = 0;  // ComputeShare(*largest)
  std::optional<double> peak_memory_bytes;
  std::vector<double> utilization;  // samples, added to the slot's and the window's sketches
  struct Held {
    double share = 0;
    std::optional<double> price_per_hour;  // of the device's card, when priced
  };
  std::vector<Held> held;  // one per (pod, device) it holds now
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

// Finds the pods of pod_devices (sorted by namespace, then name) in the objects' map (sorted by
// "namespace/name": within a namespace the same order), so the next pod is mostly a step or two
// on from the last; otherwise (another namespace, many pods between) a lookup by key.
class PodWalker {
 public:
  explicit PodWalker(const kube::ClusterObjects& objects)
      : pods_(objects.pods), at_(objects.pods.end()) {}

  const kube::Pod* Find(const kube::PodId& id) {
    constexpr int kMaxSteps = 4;
    auto it = at_;
    for (int step = 0; step < kMaxSteps && it != pods_.end(); ++step, ++it)
      if (KeyIs(it->first, id)) return &(at_ = it)->second;
    at_ = pods_.find(id.Text());
    return at_ == pods_.end() ? nullptr : &at_->second;
  }

 private:
  static bool KeyIs(const std::string& key, const kube::PodId& id) {
    return key.size() == id.namespace_.size() + 1 + id.name.size() &&
           key.compare(id.namespace_.size() + 1, std::string::npos, id.name) == 0 &&
           key.compare(0, id.namespace_.size(), id.namespace_) == 0 &&
           key[id.namespace_.size()] == '/';
  }

  const std::map<std::string, kube::Pod>& pods_;
  std::map<std::string, kube::Pod>::const_iterator at_;
};

// The node object of each device (devices are sorted by node: a lookup per node, not per pod).
std::vector<const kube::Node*> NodesOfDevices(const attribution::Attribution& attribution,
                                              const kube::ClusterObjects& objects) {
  std::vector<const kube::Node*> out(attribution.devices.size(), nullptr);
  const std::string* last = nullptr;
  const kube::Node* node = nullptr;
  for (size_t i = 0; i < attribution.devices.size(); ++i) {
    const std::string& name = attribution.devices[i].id.node;
    if (last == nullptr || *last != name) node = objects.FindNode(name);
    last = &name;
    out[i] = node;
  }
  return out;
}

// ComputeShare of the few kinds a cluster's pods hold (it parses the profile name).
class ShareCache {
 public:
  double Of(const Holding& h) {
    for (const auto& [held, share] : known_)
      if (held == h) return share;
    const double share = ComputeShare(h);
    if (known_.size() < 16) known_.emplace_back(h, share);
    return share;
  }

 private:
  std::vector<std::pair<Holding, double>> known_;
};

// Groups this cycle's pods on devices by workload.
Seen SeeCycle(const attribution::Attribution& attribution, const kube::ClusterObjects& objects,
              const std::vector<std::optional<double>>* device_prices) {
  Seen seen;
  PodWalker walker(objects);
  const std::vector<const kube::Node*> nodes = NodesOfDevices(attribution, objects);
  const kube::PodId* pod_id = nullptr;  // the previous link's, reused for its next devices
  const kube::Pod* pod = nullptr;
  CycleSeen* s_of_pod = nullptr;
  ShareCache shares;
  std::optional<WorkloadId> last_workload;  // a workload's pods mostly come one after another
  CycleSeen* s_of_last = nullptr;
  for (const attribution::PodDevice& link : attribution.pod_devices) {
    if (link.sharing == attribution::Sharing::kUnrequested) continue;  // asked for nothing
    if (link.device >= attribution.devices.size()) continue;
    if (pod_id == nullptr || *pod_id != link.pod) {
      pod_id = &link.pod;
      pod = walker.Find(link.pod);
      s_of_pod = nullptr;
    }
    if (pod == nullptr) continue;
    const attribution::Device& device = attribution.devices[link.device];
    if (s_of_pod == nullptr) {
      WorkloadId id = WorkloadOf(*pod);
      if (!last_workload || *last_workload != id) {
        s_of_last = &seen[id];  // unordered_map: references stay valid as it grows
        last_workload = std::move(id);
      }
      s_of_pod = s_of_last;
      if (s_of_pod->last_pod == nullptr || *s_of_pod->last_pod != link.pod) {
        ++s_of_pod->pods;
        s_of_pod->last_pod = &link.pod;
      }
    }
    CycleSeen& s = *s_of_pod;
    const Holding h = HoldingOf(link, device, *pod, nodes[link.device]);
    // Most pods of a workload hold the same kind: compare and parse only when it differs.
    const std::optional<double> price = device_prices && link.device < device_prices->size()
                                            ? (*device_prices)[link.device]
                                            : std::nullopt;
    if (!s.largest) {
      s.largest = h;
      s.largest_share = shares.Of(h);
      s.held.push_back({s.largest_share, price});
    } else if (h == *s.largest) {
      s.held.push_back({s.largest_share, price});
    } else {
      const double share = shares.Of(h);
      s.held.push_back({share, price});
      if (SmallerHolding(*s.largest, h)) {
        s.largest = h;
        s.largest_share = share;
      }
    }
    const std::optional<double> util = link.utilization ? link.utilization : device.utilization;
    if (!util && !link.memory_used_bytes) continue;  // unknown this cycle: adds nothing
    s.data = true;
    MaxInto(s.peak_memory_bytes, link.memory_used_bytes);
    if (util) s.utilization.push_back(*util);
  }
  return seen;
}

// The slot `now` falls in, created at the end when it is new.
WindowSlot& SlotAt(WorkloadRecord& r, double now, double slot_seconds) {
  const double start = std::floor(now / slot_seconds) * slot_seconds;
  if (r.slots.empty() || r.slots.back().start_unix < start) r.slots.push_back({start, 0, {}, {}});
  return r.slots.back();  // a clock that went back adds to the newest slot
}

// The slots' sketches merged, from scratch.
UtilizationSketch WindowOf(const WorkloadRecord& r) {
  UtilizationSketch window;
  for (const WindowSlot& s : r.slots) window.Merge(s.utilization);
  return window;
}

// Drops the slots wholly before the window (taking their samples out of the running window
// sketch), and then the workloads left with none.
void Expire(RightsizingState& state, double now, double window, double slot_seconds) {
  for (auto it = state.workloads.begin(); it != state.workloads.end();) {
    WorkloadRecord& r = it->second;
    size_t old = 0;
    while (old < r.slots.size() && r.slots[old].start_unix + slot_seconds <= now - window) ++old;
    if (old > 0) {
      bool exact = true;
      for (size_t i = 0; i < old && exact; ++i) exact = r.window.Subtract(r.slots[i].utilization);
      r.slots.erase(r.slots.begin(), r.slots.begin() + static_cast<std::ptrdiff_t>(old));
      if (!exact) r.window = WindowOf(r);
    }
    it = r.slots.empty() ? state.workloads.erase(it) : std::next(it);
  }
}

WorkloadView ViewOf(const WorkloadId& id, const WorkloadRecord& r, const CycleSeen* now,
                    const AdvertisedProfiles& advertised, const RightsizingParams& params) {
  WorkloadView v;
  v.id = id;
  for (const WindowSlot& s : r.slots) {
    v.observed_seconds += s.observed_seconds;
    MaxInto(v.memory_peak_bytes, s.peak_memory_bytes);
  }
  v.utilization_p95 = r.window.Quantile(0.95);
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
    for (const CycleSeen::Held& held : now->held) {
      const double reclaimable = std::max(0.0, held.share - v.recommendation.recommended_share);
      v.gpu_equivalents += held.share;
      v.reclaimable_gpu_equivalents += reclaimable;
      if (held.price_per_hour)
        v.reclaimable_cost_per_hour =
            v.reclaimable_cost_per_hour.value_or(0) + reclaimable * *held.price_per_hour;
    }
  }
  return v;
}

}  // namespace

Tracker::Tracker(RightsizingParams params, RightsizingState initial)
    : params_(params), state_(std::move(initial)) {
  for (auto& [id, r] : state_.workloads) r.window = WindowOf(r);
}

RightsizingView Tracker::Record(const attribution::Attribution& attribution,
                                const kube::ClusterObjects& objects, double now_unix,
                                const std::vector<std::optional<double>>* device_prices) {
  const double slot_seconds = params_.window_seconds / kSlotsPerWindow;
  // The interval since the last successful cycle counts for a workload that cycle saw with data
  // too: one seen for the first time (or again after an unknown cycle) is observed from now on.
  const std::optional<double> previous = state_.last_cycle_unix;
  double interval = 0;
  if (previous) {
    const double dt = now_unix - *previous;
    if (dt > 0 && dt <= params_.max_gap_seconds) interval = dt;
  }
  state_.last_cycle_unix = now_unix;

  const Seen seen = SeeCycle(attribution, objects, device_prices);
  for (const auto& [id, s] : seen) {
    if (!s.data) continue;
    WorkloadRecord& r = state_.workloads[id];
    if (s.largest) {
      // Utilisation of another kind of device says nothing about this one: start over.
      if (!r.slots.empty() && (HoldingLabel(r.current) != HoldingLabel(*s.largest) ||
                               r.current.model != s.largest->model)) {
        r.slots.clear();
        r.window = {};
      }
      r.current = *s.largest;
    }
    // After a start over (slots cleared) the kind is new: observed from now on, too.
    const bool continued = previous && !r.slots.empty() && r.last_seen_unix == *previous;
    r.last_seen_unix = now_unix;
    WindowSlot& slot = SlotAt(r, now_unix, slot_seconds);
    if (continued) slot.observed_seconds += interval;
    MaxInto(slot.peak_memory_bytes, s.peak_memory_bytes);
    for (double u : s.utilization) {
      slot.utilization.Add(u);
      r.window.Add(u);
    }
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
