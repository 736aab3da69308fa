// Pinned targets (config `targets:` and `--target`, docs/design.md#pins and
// docs/design.md#interface):
//   ns/pod-prefix:port   an exporter pod: every Running pod of ns whose name starts with the
//                        prefix is probed on that port, keyword or not
//   ns/svc/name:port     a Prometheus-compatible query API behind the service proxy, probed
//                        first when the query-API fallback runs (discovery/query_api.h)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/discovery/candidates.h"
#include "gpuattr/kube/objects.h"
#include "gpuattr/util/status.h"

namespace gpuattr::discovery {

struct PodPin {
  std::string namespace_;
  std::string pod_prefix;
  int32_t port = 0;
  std::string text;  // as given
};

struct ServicePin {
  std::string namespace_;
  std::string service;
  std::string port;  // a number or a port name (the service proxy accepts both)
  std::string text;
};

struct Pins {
  std::vector<PodPin> pods;
  std::vector<ServicePin> services;
  bool empty() const { return pods.empty() && services.empty(); }
};

// Parses one pin; the error names the pin and what is wrong with it.
Result<PodPin> ParsePodPin(std::string_view text);
Result<ServicePin> ParseServicePin(std::string_view text);
// Parses every pin (two slashes: a service pin, one: a pod pin); the first bad one is the error.
Result<Pins> ParsePins(const std::vector<std::string>& texts);

// What became of a pin, for the status page.
struct PinStatus {
  std::string text;
  std::string kind;  // "pod" or "service"
  std::vector<std::string> matched_pods;
  std::string note;  // "2 Running pods match", "no Running pod in ns ml starts with x", ...
};

struct PinnedCandidates {
  std::vector<Candidate> candidates;  // sorted by key
  std::vector<PinStatus> statuses;    // one per pin, in the order given
};
// Resolves the pod pins against the objects (Running pods only).
PinnedCandidates ResolvePins(const Pins& pins, const kube::ClusterObjects& objects);

}  // namespace gpuattr::discovery
