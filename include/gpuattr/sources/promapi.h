// Prometheus-compatible query APIs as a source (docs/design.md#query-apis, docs/fallback.md): an
// instant query's JSON answer → series → label repair → HA de-duplication → the same DcgmReadings /
// ProcessReadings the direct scrape produces, one set per node. Pure: no I/O, no clock.
//
// The readers (dcgm.h, process.h) take samples as an expo::Exposition; SamplesAsExposition builds
// one over owned series, so both paths share the one alias table and grouping.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuattr/expo/parser.h"
#include "gpuattr/kube/pod_id.h"
#include "gpuattr/sources/limits.h"
#include "gpuattr/sources/readings.h"
#include "gpuattr/util/status.h"

namespace gpuattr::sources {

using LabelPairs = std::vector<std::pair<std::string, std::string>>;  // sorted by name

// One series of an instant-query vector as the API returned it.
struct QuerySeries {
  LabelPairs labels;  // every label, __name__ included
  double value = 0;
  double timestamp = 0;  // seconds
};

struct DecodedQuery {
  std::vector<QuerySeries> series;
  size_t invalid_series = 0;  // entries without a metric or a [ts, "value"] pair: skipped
  std::string first_invalid;  // why the first one was skipped
};

// Decodes `{"status":"success","data":{"resultType":"vector","result":[...]}}`. `source` (e.g.
// "query API monitoring/prometheus-k8s:9090") names the service in every error.
Result<DecodedQuery> DecodeQueryResponse(std::string_view body, std::string_view source);

struct RepairedSeries;

// What label repair needs to know about the pods a series names (from the cluster objects).
struct PodLookup {
  // True when namespace/pod is a metrics exporter itself (the pod Prometheus scraped), not a
  // workload: its labels on a series say nothing about who uses the GPU.
  std::function<bool(std::string_view ns, std::string_view pod)> is_exporter;
  // The pod's spec.nodeName, "" when unknown.
  std::function<std::string(std::string_view ns, std::string_view pod)> node_of;
  // Whether a repaired series may stand, by its scrape target (trust/query_target.h): "" when it
  // may (the judge may fill its node from the target's pod), else the reason it is rejected.
  // Unset: every series stands.
  std::function<std::string_view(RepairedSeries& series)> judge;
};

// A series after repair: what the exporter itself said, plus the node it reports.
struct RepairedSeries {
  std::string name;
  LabelPairs labels;  // sorted; no __name__, no Prometheus target labels, no node labels
  std::string node;   // "" when no rule found one
  double value = 0;
  double timestamp = 0;
  // The scrape target as the series' target labels name it (docs/design.md#trust): the classic
  // kubernetes_namespace/kubernetes_pod_name, and namespace/pod when they are the target's (next
  // to exported_pod, or dcgm's own pod_name spelling, or naming the exporter itself). Every one
  // must be a trusted exporter; none: the target cannot be told.
  std::vector<kube::PodId> targets;
  // namespace/pod read as the workload beside a kubernetes_pod_name target: under the Prometheus
  // Operator's convention they could be the real target (the body left them out and forged
  // kubernetes_*), so they must name a pod that holds a GPU on the target's node.
  std::optional<kube::PodId> workload;
};

// Labels Prometheus (or its HA setup) adds, dropped before reading and de-duplication.
bool IsDroppedTargetLabel(std::string_view name);

// The repair rules (docs/design.md#query-apis):
//  - every exported_<x> label wins over <x> (exported_namespace/exported_pod/exported_container);
//  - without exported_pod, a pod label naming the exporter itself (lookup.is_exporter), or one
//    next to dcgm-exporter's own pod_name/pod_namespace, is dropped with namespace and container:
//    the series is unattributed;
//  - instance, job, endpoint, service, prometheus, prometheus_replica, __replica__ are dropped;
//  - node from node, kubernetes_node, nodename; else the scraped exporter pod's node; else
//    Hostname/hostname;
//  - the scrape target (targets, workload) from kubernetes_namespace/kubernetes_pod_name and the
//    namespace/pod the rules above read as the target's.
// nullopt when the series has no __name__.
std::optional<RepairedSeries> RepairSeries(const QuerySeries& series, const PodLookup& lookup);

// HA replicas: series equal after repair (name, labels, node) are one; the freshest sample wins,
// ties keep the first. Order of first appearance is kept. Returns how many were dropped.
size_t DeduplicateReplicas(std::vector<RepairedSeries>& series);

// The series as an Exposition whose views point into `series` (which must outlive it and stay
// unchanged), for the exposition readers.
expo::Exposition SamplesAsExposition(const std::vector<RepairedSeries>& series);

// One node's readings from a query API.
struct PromNodeReadings {
  std::string node;
  std::optional<DcgmReadings> dcgm;        // when some dcgm family reported the node
  std::optional<ProcessReadings> process;  // when some per-process family did
};

// Groups repaired series by node and reads each group with ReadDcgm / ReadProcess. Sorted by node.
// A node whose series break one of `limits` (samples, devices, pods per device: one node is one
// exporter's body) is left out whole and described in `rejected` ("node n1: rejected whole: ...").
std::vector<PromNodeReadings> ReadPromSeries(const std::vector<RepairedSeries>& series,
                                             const BodyLimits& limits = BodyLimits::Unlimited(),
                                             std::vector<std::string>* rejected = nullptr);

// One instant-query answer read whole, the pure part of a fallback cycle: decode → the label
// budget → repair → the judge (lookup.judge, when set) → de-duplicate HA replicas → read per node.
struct QueryAnswer {
  std::vector<PromNodeReadings> nodes;  // sorted by node
  // Series dropped, by reason: a label over the budget (label_too_long, bad_label;
  // label_budget.h), or the judge's (PodLookup::judge).
  std::map<std::string, uint64_t> rejected;
  size_t invalid_series = 0;                // entries the decoder skipped
  std::string first_invalid;                // why the first one was skipped
  size_t unnamed_series = 0;                // series without __name__
  std::vector<std::string> rejected_nodes;  // nodes over a limit, left out (ReadPromSeries)
};
Result<QueryAnswer> ReadQueryAnswer(std::string_view body, std::string_view source,
                                    const PodLookup& lookup,
                                    const BodyLimits& limits = BodyLimits::Unlimited());

// Every family name the readers use (dcgm fields, dcgm exporter families, per-process
// families), from the alias table, sorted.
std::vector<std::string> NeededFamilies();
// `{__name__=~"A|B|..."}` over NeededFamilies().
std::string NeededFamiliesSelector();
// The discovery probe: `count by (__name__) ({__name__=~"..."})`.
std::string ProbeQuery();
// The cycle's one data query: the selector itself.
std::string DataQuery();

}  // namespace gpuattr::sources
