// Which pods might be GPU exporters or inference servers, and on which port
// (docs/design.md#candidates). Pure functions over a ClusterObjects snapshot: no I/O, no clock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/kube/objects.h"
#include "gpuattr/trust/rules.h"

namespace gpuattr::discovery {

// Why a pod is probed: as a possible GPU exporter (dcgm/process), as a possible inference server
// (vLLM/SGLang), or both. The role decides how long a negative result is cached.
enum class Role : uint8_t { kExporter, kInference };
std::string_view RoleName(Role role);  // "exporter", "inference"

struct Candidate {
  std::string namespace_;
  std::string pod;
  std::string uid;  // the pod's uid: a replaced pod with the same name is a new candidate
  std::string resource_version;  // the pod's: an untrusted verdict lasts while it is unchanged
  std::string node;              // spec.nodeName
  // Where a direct scrape goes (docs/deploy.md#direct-scraping): the pod's status.podIP ("" until
  // it has one) and "https" when its prometheus.io/scheme annotation says so, else "http".
  std::string ip;
  std::string scheme = "http";
  int32_t port = 0;
  std::string port_source;  // "annotation", "named metrics", "named http", "8000", "first", "pin"
  Role role = Role::kExporter;
  bool pinned = false;
  std::string why;  // what matched: "image nvcr.io/nvidia/k8s/dcgm-exporter:3.3", "pin ns/p:9400"
  // Trust (docs/design.md#trust, trust/rules.h), set by MarkTrust from the pod object before
  // any request: why the pod may speak for its node's devices ("" when it may not, with trust_hint
  // saying how to trust it) and how strongly (the duplicate-device order), and whether it holds
  // a GPU (an inference server speaks only for a pod that does).
  std::string trust;
  std::string trust_hint;
  trust::Rank rank = trust::Rank::kNone;
  bool holds_gpu = false;

  // "namespace/pod:port": the cache key and the status page's name for it.
  std::string Key() const;
};

// The pod name with its node's name removed (static pods are named `<x>-<node>`), so that
// kube-apiserver-gpu-node-1 does not look like a GPU pod.
std::string NameWithoutNode(std::string_view pod_name, std::string_view node_name);

// What makes the pod look like a GPU exporter: the (node-stripped) name, a container image, or a
// label key or value containing dcgm|gpu|nvidia|cuda (case-insensitive). nullopt: nothing.
std::optional<std::string> ExporterKeywordMatch(const kube::Pod& pod);
// vllm|sglang|tritonserver|text-generation-inference|kserve|predictor in the same places.
std::optional<std::string> InferenceKeywordMatch(const kube::Pod& pod);

// Any container (app or init) requests or limits an `nvidia.com/` resource (> 0).
bool RequestsNvidiaResource(const kube::Pod& pod);
// The node advertises an `nvidia.com/` resource in capacity or allocatable (even at 0).
bool AdvertisesNvidiaResource(const kube::Node& node);

struct PortChoice {
  int32_t port = 0;
  std::string source;
};
// A candidate for `pod` on `port` (namespace, name, uid, node copied from the pod).
Candidate MakeCandidate(const kube::Pod& pod, const PortChoice& port, Role role, std::string why);

// Exporter port: annotation prometheus.io/port, else the container port named `metrics`, else the
// first declared port. nullopt when the pod declares none.
std::optional<PortChoice> ExporterPort(const kube::Pod& pod);
// Inference port: annotation, `metrics`, `http`, a declared 8000, the first declared port.
// nullopt when the pod declares no port and has no port annotation: such a pod is never probed
// (guessing :8000 on every GPU job pod meant thousands of failing proxy GETs per cycle).
std::optional<PortChoice> InferencePort(const kube::Pod& pod);

// Running pods that look like GPU exporters and declare a port, sorted by key.
std::vector<Candidate> ExporterCandidates(const kube::ClusterObjects& objects);
// Running pods with every container ready that hold a GPU resource or a DRA GPU device, or look
// like an inference server, and declare a port (or have a port annotation), sorted by key.
std::vector<Candidate> InferenceCandidates(const kube::ClusterObjects& objects);

// Both lists from one pass over the pods, and how many pods qualified as an exporter or
// inference candidate but were left out for declaring no port (each pod counted once).
struct CandidateScan {
  std::vector<Candidate> exporters;
  std::vector<Candidate> inference;
  size_t no_port = 0;
};
CandidateScan ScanCandidates(const kube::ClusterObjects& objects);

// The politeness gate: probing is worth it only when some node advertises an `nvidia.com/`
// resource, some pod requests one, a DRA ResourceSlice publishes a GPU, or some pod looks like an
// exporter. `reason` says which (or,
// when closed, what was checked).
struct GpuPresence {
  bool present = false;
  std::string reason;
};
GpuPresence DetectGpuPresence(const kube::ClusterObjects& objects);

// Fills trust, trust_hint, rank and holds_gpu of every candidate from its pod (pins are trusted).
void MarkTrust(std::vector<Candidate>& candidates, const kube::ClusterObjects& objects,
               const trust::ExporterTrustConfig& config);

// A candidate that may speak in no role: not pinned, no trusted exporter and holding no GPU (so
// no inference server either). It is never fetched (docs/design.md#trust): whatever it serves, it
// may not say it.
bool TrustedInNoRole(const Candidate& candidate);

// Merges candidate lists by key (namespace/pod:port): an entry found as both exporter and
// inference candidate keeps the exporter role (its shorter cache) and both reasons; a pinned one
// stays pinned. Sorted by key.
std::vector<Candidate> MergeCandidates(std::vector<Candidate> a, std::vector<Candidate> b);

}  // namespace gpuattr::discovery
