// The stages of one cycle, in order, as one function: the daemon's sessions, the golden tests and
// the scale benchmark all run exactly this.
//
//   attribute (devices, cards, pods, namespaces, node power; each device with its card's health)
//   → allocate (the scheduler's view: requests, capacity, pending pods and hints)
//   → node health (worst device state, withdrawn devices)
//   → inference (rates against the previous cycle, tokens per joule)
//   → ledger (idle runs, energy counters; GPU-hours of every card, docs/accounting.md)
//   → rightsizing (per workload: observations over the window, a recommendation)
//
// Pure but for the long-lived state it is handed (StageState): no I/O, no clock (the cycle's time
// comes in the input).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "gpuattr/accounting/accounting.h"
#include "gpuattr/accounting/prices.h"
#include "gpuattr/attribution/attribution.h"
#include "gpuattr/inference/inference.h"
#include "gpuattr/kube/objects.h"
#include "gpuattr/kube/shard.h"
#include "gpuattr/ledger/ledger.h"
#include "gpuattr/model/snapshot.h"
#include "gpuattr/rightsizing/rightsizing.h"
#include "gpuattr/sources/readings.h"

namespace gpuattr::app {

// Everything one cycle read, gathered once and never changed afterwards.
struct CycleInput {
  std::string cluster;
  // The objects the stages work on: the whole cluster, or one shard's share of it.
  std::shared_ptr<const kube::ClusterObjects> objects;  // never null
  std::vector<sources::ExporterReadings> readings;      // every exporter that answered
  double now_unix = 0;                                  // wall time: pending ages, the ledger
  std::chrono::steady_clock::time_point now;            // monotonic: inference rates
  // Sharded (kube/shard.h): which shard this is, and the whole cluster's objects, read only for
  // what pending pods could get (their hints). Null when not sharded.
  kube::Shard shard;
  std::shared_ptr<const kube::ClusterObjects> cluster_objects;
};

// The readings of the nodes `shard` owns (an exporter reads its own node; a query API answers
// for every node). Pure.
std::vector<sources::ExporterReadings> OwnedReadings(std::vector<sources::ExporterReadings> all,
                                                     const kube::Shard& shard);

// `whole` (the input of an unsharded cycle) cut down to what `shard` works on: its objects
// (kube::ShardObjects), its nodes' readings, and the whole cluster kept for pending pods' hints.
// The session cuts its objects before discovery instead, so that a shard only probes and scrapes
// its own nodes' exporters; the result is the same. Pure.
CycleInput ShardInput(const CycleInput& whole, const kube::Shard& shard);

// Each attributed pod's uid and workload (rightsizing::WorkloadOf, the workload rightsizing
// records it under) from its object, for gpuattr_pod_info; uid empty and workload absent when the
// object is unknown (e.g. a pod named only by an exporter). Built in the stage because the cycle's
// output keeps no pod objects. Pure.
std::vector<model::PodIdentity> PodIdentities(const attribution::Attribution& a,
                                              const kube::ClusterObjects& objects);

struct StageParams {
  attribution::AttributionParams attribution;  // idle thresholds
  // GPU-hours (docs/accounting.md#prices): the price rules (null: every card unpriced), the
  // currency of the cost counters and the bases published.
  std::shared_ptr<const accounting::PriceList> prices;
  std::string currency = "USD";
  std::vector<accounting::Basis> bases{accounting::kAllBases.begin(), accounting::kAllBases.end()};
  // The namespace labels that name teams (accounting.namespace_labels).
  std::vector<std::string> namespace_labels{"team"};
};

// What one cluster keeps from cycle to cycle.
struct StageState {
  ledger::Ledger ledger;                  // idle runs and energy counters (saved by the session)
  inference::InferenceTracker inference;  // the previous readings of every inference server
  rightsizing::Tracker rightsizing;       // observations per workload (saved by the session)
};

model::CycleOutput RunStages(const CycleInput& input, StageState& state, const StageParams& params);
// The same, releasing the input's readings as soon as the stages that read them are done: at
// 1,000 nodes they are 18 MB that would otherwise sit under the ledger's and the rightsizing's
// work, the daemon's peak (docs/performance.md, "2026-12-04, peak RSS").
model::CycleOutput RunStages(CycleInput&& input, StageState& state, const StageParams& params);

}  // namespace gpuattr::app
