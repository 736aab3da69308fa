// Rightsizing (docs/design.md#rightsizing, docs/rightsizing.md): per workload, observations over
// a window and the smallest offering that fits them. Stateful, no I/O: the stages feed it each
// successful cycle's attribution with the pod and node objects; the session saves state().
//
// Each cycle, for every pod on a device (not a GPU it did not request) with data (memory used or
// utilisation known): one utilisation sample of the device it holds (the pod's own reading when
// the exporter gives one), the pod's memory on that device for the peak, and the interval since
// the last successful cycle (when at most max_gap_seconds) to its workload's observed time, once
// per workload. A pod whose data is missing this cycle (unknown) adds nothing. Slots whose time
// left the window are dropped, and a workload with no slot left is dropped with them. A workload
// whose largest kind changes (another profile, share or card model) starts its observations over:
// utilisation of one device says little about another.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuattr/attribution/types.h"
#include "gpuattr/kube/objects.h"
#include "gpuattr/rightsizing/recommend.h"
#include "gpuattr/rightsizing/state.h"
#include "gpuattr/rightsizing/workload.h"

namespace gpuattr::rightsizing {

struct RightsizingParams {
  double window_seconds = 7 * 86400;       // rightsizing.window
  double min_observation_seconds = 86400;  // rightsizing.min_observation
  double headroom = 0.2;                   // rightsizing.headroom
  double max_gap_seconds = 300;            // longer gaps add no observed time (the ledger's)
};

// One workload's row (the gpuattr_workload_* families).
struct WorkloadView {
  WorkloadId id;
  Recommendation recommendation;
  size_t pods = 0;  // its pods on a device now
  std::optional<double> memory_peak_bytes;
  std::optional<double> utilization_p95;
  double observed_seconds = 0;
  double gpu_equivalents = 0;              // Σ over its pods' devices of the compute share held
  double reclaimable_gpu_equivalents = 0;  // Σ of max(0, held share − recommended share)
  // The same sum, each term × the price per GPU-hour of that pod's card; priced cards only,
  // absent when none of its pods' cards is priced.
  std::optional<double> reclaimable_cost_per_hour;
};

struct RightsizingView {
  std::vector<WorkloadView> workloads;  // sorted by id
  std::string currency;                 // of the costs (accounting.currency)
};

class Tracker {
 public:
  explicit Tracker(RightsizingParams params = {}, RightsizingState initial = {});

  // Records one successful cycle at `now_unix` and returns every workload's row.
  // `device_prices`, when given, has the price per GPU-hour of each attribution device's card
  // (absent: unpriced), for the reclaimable cost.
  RightsizingView Record(const attribution::Attribution& attribution,
                         const kube::ClusterObjects& objects, double now_unix,
                         const std::vector<std::optional<double>>* device_prices = nullptr);

  const RightsizingState& state() const { return state_; }
  const RightsizingParams& params() const { return params_; }

 private:
  RightsizingParams params_;
  RightsizingState state_;
};

}  // namespace gpuattr::rightsizing
