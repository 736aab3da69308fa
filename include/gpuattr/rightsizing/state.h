// What rightsizing carries from cycle to cycle (and across restarts, in the state file's
// "rightsizing" section): per workload, its observations in time slots over the window
// (docs/rightsizing.md#what-is-kept). Plain data.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "gpuattr/rightsizing/recommend.h"
#include "gpuattr/rightsizing/sketch.h"
#include "gpuattr/rightsizing/workload.h"

namespace gpuattr::rightsizing {

// The window is kept as kSlotsPerWindow slots of window / kSlotsPerWindow each, so that old
// observations leave it a slot at a time (a sketch cannot forget single samples).
inline constexpr int kSlotsPerWindow = 7;

struct WindowSlot {
  double start_unix = 0;  // the slot covers [start, start + window / kSlotsPerWindow)
  double observed_seconds = 0;
  std::optional<double> peak_memory_bytes;  // of any one pod on one device
  UtilizationSketch utilization;
  bool operator==(const WindowSlot&) const = default;
};

struct WorkloadRecord {
  Holding current;                // the largest kind its pods held when last seen
  double last_seen_unix = 0;      // the last cycle in which one of its pods had data
  std::vector<WindowSlot> slots;  // oldest first, each with observations; at most one per slot
  // Derived, not saved: the slots' sketches merged, kept by the Tracker as slots come and go
  // (docs/rightsizing.md#cost). Left out of ==, which compares what is saved.
  UtilizationSketch window;
  bool operator==(const WorkloadRecord& o) const {
    return current == o.current && last_seen_unix == o.last_seen_unix && slots == o.slots;
  }
};

struct RightsizingState {
  std::optional<double> last_cycle_unix;  // the last successful cycle (for observed seconds)
  std::map<WorkloadId, WorkloadRecord> workloads;
  bool operator==(const RightsizingState&) const = default;
};

}  // namespace gpuattr::rightsizing
