// What one cycle of discovery and scraping found: the data behind the status page and the
// gpuattr_exporter_* and gpuattr_discovery_candidates families. Plain data.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpuattr/discovery/candidates.h"
#include "gpuattr/discovery/pins.h"
#include "gpuattr/discovery/probe.h"

namespace gpuattr::discovery {

// One probed candidate as the status page shows it.
struct ProbeRecord {
  Candidate candidate;
  ProbeVerdict verdict;
  double probed_unix = 0;   // when it was last probed
  bool this_cycle = false;  // probed in this cycle (else: the cached verdict)
};

// One row of the gpuattr_exporter_* families: a classified exporter, or a candidate/pin whose
// probe failed (kind "unknown").
struct ExporterStatus {
  std::string namespace_;
  std::string pod;
  std::string node;
  int32_t port = 0;
  std::string kind;  // dcgm, process, vllm, sglang, unknown
  bool up = false;
  int http_status = 0;
  std::string reason;  // why down; or the parse errors of an up one
  double duration_seconds = 0;
  uint64_t bytes = 0;
  uint64_t parse_errors = 0;
  // Lines dropped by the vetting (trust/vet.h), by reason; every reason present (0 included) for
  // an exporter that was read, empty for one that was not.
  std::map<std::string, uint64_t> rejected = {};
};

struct DiscoveryReport {
  std::string cluster;
  size_t pods_listed = 0;
  size_t nodes_listed = 0;
  bool gpu_present = false;  // the politeness gate: false → nothing was probed
  std::string gpu_presence;  // why (or what was checked)
  size_t candidates = 0;     // current candidates (pins included)
  size_t probed_this_cycle = 0;
  // Pods that looked like an exporter or held a GPU but declare no port (and have no
  // prometheus.io/port annotation): never probed.
  size_t skipped_no_port = 0;
  // Inference candidates due for a probe that the per-cycle budget left for a later cycle:
  // never probed yet, and re-probes of an expired verdict.
  size_t waiting_first_probe = 0;
  size_t waiting_reprobe = 0;
  size_t inference_probe_budget = 0;  // the per-cycle budget in force
  std::vector<ProbeRecord> probes;    // every candidate with a verdict, by key
  std::vector<PinStatus> pins;
  std::vector<ExporterStatus> exporters;  // by namespace, pod, port
  // Every outcome name, zeros included; plus "no_port" (skipped_no_port) and "waiting"
  // (waiting_first_probe: candidates without a verdict yet).
  std::map<std::string, uint64_t> outcome_counts;
  // When no exporter was found: how many pods were listed, how many candidates were probed, and
  // what to do. Empty otherwise.
  std::string nothing_found;
  bool rediscovery_next_cycle = false;
  // How this cycle read the GPU series: "exporters" (one proxy GET each) or "query_api"; the
  // reason code and the explanation (query_api.h, DescribeReadPath).
  std::string read_path = "exporters";
  std::string read_path_reason;
  std::string read_path_detail;
  // Sharded (kube/shard.h): "shard 1 of 3 owns 4 of 12 nodes"; "" when not sharded.
  std::string shard;
};

// `report` as a cycle that read none of its exporters publishes it: every exporter that was up is
// down, with no HTTP status and `reason`; the probes, pins and counts stay as they were. Pure.
DiscoveryReport MarkNotScraped(const DiscoveryReport& report, const std::string& reason);

}  // namespace gpuattr::discovery
