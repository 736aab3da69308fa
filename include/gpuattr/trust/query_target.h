// Whether a query API's series may stand, by the pod Prometheus scraped it from
// (docs/design.md#trust). A trusted Prometheus scrapes whatever its ServiceMonitors and
// PodMonitors select, tenants' pods included: a plain ReplicaSet pod it scraped raised a GPU to
// 4,999 W (issue 25). So each series' scrape target must pass the exporters' rule (rules.h:
// pinned, a trust rule, or a DaemonSet in an exporter namespace), run on the series' node, and a
// series that names no target is accepted only from a pinned query API.
//
// The target is read from the target labels the series carries (sources::RepairedSeries::targets):
// `namespace`/`pod` as the Prometheus Operator attaches them (the body's own become exported_*),
// and `kubernetes_namespace`/`kubernetes_pod_name` of the classic relabelling. A body can add
// either spelling when Prometheus does not set it, so every spelling present must pass; pod
// labels read as the workload beside a classic target must name a pod that holds a GPU on the
// target's node. Pure.
#pragma once

#include <functional>
#include <string_view>

#include "gpuattr/kube/objects.h"
#include "gpuattr/sources/promapi.h"
#include "gpuattr/trust/rules.h"

namespace gpuattr::trust {

struct QueryTargetContext {
  const kube::ClusterObjects* objects = nullptr;
  ExporterTrustConfig config;
  std::function<bool(const kube::Pod&)> pinned;     // a pod pin names the pod
  std::function<bool(const kube::Pod&)> holds_gpu;  // an nvidia.com/ resource or a DRA device
  bool api_pinned = false;                          // the query API itself is pinned
};

// "" when `series` may stand (its node, when empty, becomes its target's); else the reason:
// no_target (no target label, from a query API that is not pinned), untrusted_target (a target
// that is no pod of the cluster or fails the exporter rule, or a workload beside a classic target
// that holds no GPU on its node), pod_on_other_node (a target on another node than the series').
std::string_view JudgeQueryTarget(sources::RepairedSeries& series, const QueryTargetContext& ctx);

}  // namespace gpuattr::trust
