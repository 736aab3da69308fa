// The stages of one cycle, in order, as one function: the daemon's sessions, the golden tests and
// the scale benchmark all run exactly this.
//
//   attribute (devices, cards, pods, namespaces, node power; each device with its card's health)
//   → allocate (the scheduler's view: requests, capacity, pending pods and hints)
//   → node health (worst device state, withdrawn devices)
//   → inference (rates against the previous cycle, tokens per joule)
//   → ledger (idle runs, energy counters)
//
// Pure but for the long-lived state it is handed (StageState): no I/O, no clock (the cycle's time
// comes in the input).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "gpuattr/attribution/attribution.h"
#include "gpuattr/inference/inference.h"
#include "gpuattr/kube/objects.h"
#include "gpuattr/ledger/ledger.h"
#include "gpuattr/publish/snapshot.h"
#include "gpuattr/sources/readings.h"

namespace gpuattr::app {

// Everything one cycle read, gathered once and never changed afterwards.
struct CycleInput {
  std::string cluster;
  std::shared_ptr<const kube::ClusterObjects> objects;  // never null
  std::vector<sources::ExporterReadings> readings;      // every exporter that answered
  double now_unix = 0;                                  // wall time: pending ages, the ledger
  std::chrono::steady_clock::time_point now;            // monotonic: inference rates
};

struct StageParams {
  attribution::AttributionParams attribution;  // idle thresholds
};

// What one cluster keeps from cycle to cycle.
struct StageState {
  ledger::Ledger ledger;                  // idle runs and energy counters (saved by the session)
  inference::InferenceTracker inference;  // the previous readings of every inference server
};

publish::CycleOutput RunStages(const CycleInput& input, StageState& state,
                               const StageParams& params);

}  // namespace gpuattr::app
