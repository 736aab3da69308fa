// Who may speak for what (docs/design.md#trust, docs/security.md). Anyone who may run a pod can
// serve a body that looks like dcgm-exporter, and tenants may create DaemonSets in their own
// namespaces and write any owner reference into a bare pod, so a body is believed only from where
// it is expected:
//   - a dcgm or per-process exporter speaks for its node's devices only when it is pinned
//     (--target), matches a configured trust rule (discovery.trust.exporters: a namespace and a
//     label selector), or is controlled (`controller: true`) by an `apps/v1` DaemonSet in one of
//     discovery.trust.exporter_namespaces. Decided from the pod object, before any request;
//   - a vLLM/SGLang server speaks for itself only when it holds a GPU (an nvidia.com/ resource or
//     a DRA device), or is pinned;
//   - a Prometheus-compatible query API speaks for the cluster when pinned or when its Service is
//     in one of discovery.trust.query_api_namespaces, and then each series only when its scrape
//     target passes the exporter rule (query_target.h).
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

// The namespaces the NVIDIA GPU Operator (gpu-operator; nvidia-gpu-operator on OpenShift), the
// NVIDIA device plugin (kube-system) and the dcgm-exporter chart (gpu-monitoring, monitoring,
// dcgm-exporter) install into: the default of discovery.trust.exporter_namespaces.
std::vector<std::string> DefaultExporterNamespaces();

// The monitoring namespaces of the common charts (kube-prometheus and kube-prometheus-stack:
// monitoring, kube-prometheus-stack; OpenShift: openshift-monitoring; victoria-metrics-k8s-stack:
// victoria-metrics): the default of discovery.trust.query_api_namespaces. Generic names a tenant
// may be able to create (prometheus, observability, thanos, mimir) are not in it.
std::vector<std::string> DefaultQueryApiNamespaces();

// What decides who may speak for devices, beyond pins.
struct ExporterTrustConfig {
  std::vector<ExporterRule> rules;                                    // discovery.trust.exporters
  std::vector<std::string> namespaces = DefaultExporterNamespaces();  // ...exporter_namespaces
  bool operator==(const ExporterTrustConfig&) const = default;
};

// Why an exporter is trusted, strongest first: the order in which two exporters reporting one
// device are preferred (docs/design.md#trust). kNone: not trusted.
enum class Rank : uint8_t { kPinned = 0, kRule = 1, kDaemonSet = 2, kNone = 3 };

struct ExporterVerdict {
  Rank rank = Rank::kNone;
  // "pinned", "trust rule 1 (namespace ..., selector ...)", "controlled by DaemonSet
  // gpu-operator/nvidia-dcgm-exporter"; "" when not trusted.
  std::string why;
  bool trusted() const { return rank != Rank::kNone; }
};

// The owner reference that makes `pod` a DaemonSet's pod: `controller: true`, `kind: DaemonSet`,
// `apiVersion: apps/v1`. nullptr otherwise (a hand-written reference to another group, or one that
// is not the controller, proves nothing).
const kube::OwnerReference* DaemonSetController(const kube::Pod& pod);

// Whether `pod` may speak for its node's devices as a dcgm or per-process exporter, and why.
ExporterVerdict JudgeExporter(const kube::Pod& pod, bool pinned, const ExporterTrustConfig& config);

// What makes an untrusted exporter trusted, for the status page: what is missing (the DaemonSet
// is in a namespace that is no exporter namespace, the owner reference is not an apps/v1
// controller reference, ...) and the pin or the rule to add.
std::string HowToTrustExporter(const kube::Pod& pod, int32_t port);

// A vLLM/SGLang body is believed from a pod that holds a GPU, or a pinned one.
bool InferenceTrusted(bool holds_gpu, bool pinned);
std::string HowToTrustInference(std::string_view ns, std::string_view pod, int32_t port);

// A query API is believed when pinned or in a trusted namespace.
bool QueryApiTrusted(std::string_view ns, bool pinned, const std::vector<std::string>& namespaces);
std::string HowToTrustQueryApi(std::string_view ns, std::string_view service,
                               std::string_view port);

}  // namespace gpuattr::trust
