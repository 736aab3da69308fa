// Who may speak for what (docs/design.md#trust). Anyone who may run a pod can serve a body that
// looks like dcgm-exporter, so a body is believed only from where it is expected:
//   - a dcgm or per-process exporter speaks for its node's devices only when its pod is owned by
//     a DaemonSet, is pinned (--target), or matches a configured trust rule
//     (discovery.trust.exporters: a namespace and a label selector);
//   - a vLLM/SGLang server speaks for itself only when it holds a GPU (an nvidia.com/ resource or
//     a DRA device), or is pinned;
//   - a Prometheus-compatible query API speaks for the cluster when pinned or when its Service is
//     in one of discovery.trust.query_api_namespaces.
// Pure functions over the pod or service; the answers carry the text the status page shows.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/kube/objects.h"

namespace gpuattr::trust {

// discovery.trust.exporters[]: the pods of `namespace_` whose labels include every pair of
// `selector` (an empty selector matches every pod of the namespace).
struct ExporterRule {
  std::string namespace_;
  std::map<std::string, std::string> selector;

  bool Matches(const kube::Pod& pod) const;
  std::string Describe() const;  // "namespace gpu-mon, selector {app: gpu-exporter}"
  bool operator==(const ExporterRule&) const = default;
};

// The monitoring namespaces of the usual stacks (kube-prometheus-stack, Prometheus operator,
// OpenShift, VictoriaMetrics, Thanos, Mimir, the GPU operator): the default of
// discovery.trust.query_api_namespaces.
std::vector<std::string> DefaultQueryApiNamespaces();

// Why `pod` may speak for its node's devices as a dcgm or per-process exporter: "owned by
// DaemonSet gpu-operator/nvidia-dcgm-exporter", "pinned", "trust rule 1 (namespace ..., selector
// ...)". Empty: it may not.
std::string ExporterTrust(const kube::Pod& pod, bool pinned,
                          const std::vector<ExporterRule>& rules);

// What makes an untrusted exporter trusted, for the probe's reason: the pin, or the rule to add.
std::string HowToTrustExporter(const kube::Pod& pod, int32_t port);

// A vLLM/SGLang body is believed from a pod that holds a GPU, or a pinned one.
bool InferenceTrusted(bool holds_gpu, bool pinned);
std::string HowToTrustInference(std::string_view ns, std::string_view pod, int32_t port);

// A query API is believed when pinned or in a trusted namespace.
bool QueryApiTrusted(std::string_view ns, bool pinned, const std::vector<std::string>& namespaces);
std::string HowToTrustQueryApi(std::string_view ns, std::string_view service,
                               std::string_view port);

}  // namespace gpuattr::trust
