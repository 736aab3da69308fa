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
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "gpuattr/ledger/state.h"
#include "gpuattr/util/status.h"

namespace gpuattr::ledger {

inline constexpr std::string_view kStateFormat = "gpuattr-state";
// Version 2 added each cluster's "accounting" (GPU-hours, docs/accounting.md#state); version 1
// files still load, with empty accounting.
inline constexpr int kStateVersion = 2;
inline constexpr int kOldestStateVersion = 1;

using StateFileContents = std::map<std::string, LedgerState>;  // cluster label → its state

std::string EncodeStateFile(const StateFileContents& contents);
// The same bytes, handed to `sink` in pieces of about 64 KB as they are made (no document).
void EncodeStateFile(const StateFileContents& contents,
                     const std::function<void(std::string_view)>& sink);
// Errors (not JSON, truncated, another format or version, a field of the wrong type) say what
// is wrong, without the file name (the caller adds it).
Result<StateFileContents> DecodeStateFile(std::string_view text);

}  // namespace gpuattr::ledger
