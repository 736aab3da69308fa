// The state file's JSON format (docs/ledger.md), pure: one section per cluster.
//
//   {"format": "gpuattr-state", "version": 2,
//    "clusters": {"kind-gpu": {"last_cycle_unix": 1764474000.5,
//                              "pods": [{"namespace": "ml", "pod": "trainer-0", "node": "gpu-1",
//                                        "uid": "6f1c…", "idle_since_unix": 1764470000,
//                                        "last_idle_unix": 1764474000.5, "joules": 5400.5,
//                                        "last_power_watts": 250.0,
//                                        "last_power_unix": 1764474000.5}],
//                              "namespaces": [{"namespace": "ml", "joules": 9000.25,
//                                              "last_seen_unix": 1764474000.5}]}}}
//
// Optional fields are left out when unknown. Files written before uid, last_idle_unix and
// last_power_unix existed are read as they were meant: those times are the last cycle's.
//
// An optional top-level "rightsizing" object holds, per cluster, the rightsizing observations
// (rightsizing/state.h; docs/rightsizing.md#in-the-state-file); files without it load with none:
//
//   "rightsizing": {"kind-gpu": {"last_cycle_unix": 1764474000.5,
//     "workloads": [{"current": {"device_memory_bytes": 85899345920, "model": "NVIDIA A100…",
//                                "profile": "", "replicas": 1},
//                    "kind": "Deployment", "last_seen_unix": 1764474000.5, "name": "chat",
//                    "namespace": "ml",
//                    "slots": [{"observed_seconds": 3600, "peak_memory_bytes": 12000000000,
//                               "start_unix": 1764460800, "utilization": "-57:3 0 12",
//                               "utilization_zero": 40}]}]}}
//
// "utilization" is the sketch's dense counts: the first bucket's index, then one count per
// bucket from there ("" when only the zero bucket has samples).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "gpuattr/ledger/state.h"
#include "gpuattr/rightsizing/state.h"
#include "gpuattr/util/status.h"

namespace gpuattr::ledger {

inline constexpr std::string_view kStateFormat = "gpuattr-state";
// Version 2 added each cluster's "accounting" (GPU-hours, docs/accounting.md#state); version 1
// files still load, with empty accounting. The accounting's "days" and "namespace_labels" (the
// daily totals, docs/accounting.md#daily-totals) are optional keys of version 2: files without
// them load with none, and a gpuattr that predates them reads the rest.
inline constexpr int kStateVersion = 2;
inline constexpr int kOldestStateVersion = 1;

using StateFileContents = std::map<std::string, LedgerState>;  // cluster label → its state
// cluster label → its rightsizing observations (the "rightsizing" section)
using RightsizingContents = std::map<std::string, rightsizing::RightsizingState>;

// `rightsizing` (when not null and not empty) is written as the "rightsizing" section.
std::string EncodeStateFile(const StateFileContents& contents,
                            const RightsizingContents* rightsizing = nullptr);
// The same bytes, handed to `sink` in pieces of about 64 KB as they are made (no document).
void EncodeStateFile(const StateFileContents& contents,
                     const std::function<void(std::string_view)>& sink,
                     const RightsizingContents* rightsizing = nullptr);

// The sections of one write by reference, so that a writer can put a state it holds next to
// copies of the others' without copying its own (StateFile::Save).
struct StateFileSections {
  std::map<std::string_view, const LedgerState*> clusters;
  std::map<std::string_view, const rightsizing::RightsizingState*> rightsizing;
};
StateFileSections SectionsOf(const StateFileContents& contents,
                             const RightsizingContents* rightsizing = nullptr);
void EncodeStateFile(const StateFileSections& sections,
                     const std::function<void(std::string_view)>& sink);
// Errors (not JSON, truncated, another format or version, a field of the wrong type) say what
// is wrong, without the file name (the caller adds it). The "rightsizing" section goes to
// `rightsizing` when not null (else it is only checked).
Result<StateFileContents> DecodeStateFile(std::string_view text,
                                          RightsizingContents* rightsizing = nullptr);

}  // namespace gpuattr::ledger
