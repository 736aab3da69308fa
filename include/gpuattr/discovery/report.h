// What one cycle of discovery and scraping produced: the data behind the status page, the
// gpuattr_exporter_* and gpuattr_discovery_candidates families, and the one immutable input of
// the attribution stage. Plain data.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "gpuattr/discovery/candidates.h"
#include "gpuattr/discovery/pins.h"
#include "gpuattr/discovery/probe.h"
#include "gpuattr/kube/objects.h"
#include "gpuattr/sources/readings.h"

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
};

struct DiscoveryReport {
  std::string cluster;
  size_t pods_listed = 0;
  size_t nodes_listed = 0;
  bool gpu_present = false;  // the politeness gate: false → nothing was probed
  std::string gpu_presence;  // why (or what was checked)
  size_t candidates = 0;     // current candidates (pins included)
  size_t probed_this_cycle = 0;
  std::vector<ProbeRecord> probes;  // every candidate with a verdict, by key
  std::vector<PinStatus> pins;
  std::vector<ExporterStatus> exporters;           // by namespace, pod, port
  std::map<std::string, uint64_t> outcome_counts;  // every outcome name, zeros included
  // When no exporter was found: how many pods were listed, how many candidates were probed, and
  // what to do. Empty otherwise.
  std::string nothing_found;
  bool rediscovery_next_cycle = false;
};

// ---- The attribution stage's input (align: attribution::ExporterReadings and AttributionInput).
struct ExporterData {
  std::string namespace_;  // the exporter pod
  std::string pod;
  std::string node;                                   // the exporter pod's spec.nodeName
  sources::BodyKind kind = sources::BodyKind::kDcgm;  // kDcgm or kProcess
  std::variant<sources::DcgmReadings, sources::ProcessReadings> readings;
};

struct InferenceData {
  std::string namespace_;  // the serving pod
  std::string pod;
  std::string node;
  sources::BodyKind kind = sources::BodyKind::kVllm;  // kVllm or kSglang
  sources::InferenceReadings readings;
};

// Everything one cycle read, gathered once and never changed afterwards.
struct CycleInput {
  std::string cluster;
  std::shared_ptr<const kube::ClusterObjects> objects;  // never null in a built input
  std::vector<ExporterData> exporters;                  // successful scrapes only, by ns/pod
  std::vector<InferenceData> inference;
};

}  // namespace gpuattr::discovery
