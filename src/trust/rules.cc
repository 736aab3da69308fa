#include "gpuattr/trust/rules.h"

#include <algorithm>
#include <array>

namespace gpuattr::trust {
namespace {

std::string SelectorText(const std::map<std::string, std::string>& selector) {
  std::string s = "{";
  for (const auto& [k, v] : selector) s += (s.size() > 1 ? ", " : "") + k + ": " + v;
  return s + "}";
}

// The label a rule for this pod would most likely select on.
std::map<std::string, std::string> SuggestedSelector(const kube::Pod& pod) {
  for (std::string_view key : {"app.kubernetes.io/name", "app", "k8s-app", "name"}) {
    auto it = pod.labels.find(std::string(key));
    if (it != pod.labels.end()) return {{it->first, it->second}};
  }
  return {};
}

}  // namespace

bool ExporterRule::Matches(const kube::Pod& pod) const {
  if (pod.namespace_ != namespace_) return false;
  return std::all_of(selector.begin(), selector.end(), [&](const auto& kv) {
    auto it = pod.labels.find(kv.first);
    return it != pod.labels.end() && it->second == kv.second;
  });
}

std::string ExporterRule::Describe() const {
  return "namespace " + namespace_ + ", selector " + SelectorText(selector);
}

std::vector<std::string> DefaultQueryApiNamespaces() {
  return {"monitoring", "prometheus", "kube-prometheus-stack", "observability", "victoria-metrics",
          "thanos",     "mimir",      "openshift-monitoring",  "gpu-operator"};
}

std::string ExporterTrust(const kube::Pod& pod, bool pinned,
                          const std::vector<ExporterRule>& rules) {
  if (pinned) return "pinned";
  if (const kube::OwnerReference* ds = pod.OwnedBy("DaemonSet"))
    return "owned by DaemonSet " + pod.namespace_ + "/" + ds->name;
  for (size_t i = 0; i < rules.size(); ++i)
    if (rules[i].Matches(pod))
      return "trust rule " + std::to_string(i + 1) + " (" + rules[i].Describe() + ")";
  return {};
}

std::string HowToTrustExporter(const kube::Pod& pod, int32_t port) {
  ExporterRule rule{pod.namespace_, SuggestedSelector(pod)};
  return "not owned by a DaemonSet, not pinned and matching no trust rule; to trust it, pin it "
         "(--target " +
         pod.namespace_ + "/" + pod.name + ":" + std::to_string(port) +
         ") or add a rule to discovery.trust.exporters ({namespace: " + rule.namespace_ +
         ", selector: " + SelectorText(rule.selector) + "})";
}

bool InferenceTrusted(bool holds_gpu, bool pinned) { return holds_gpu || pinned; }

std::string HowToTrustInference(std::string_view ns, std::string_view pod, int32_t port) {
  return "the pod holds no GPU (no nvidia.com/ resource, no DRA device), so it may not speak for "
         "one; to trust it, pin it (--target " +
         std::string(ns) + "/" + std::string(pod) + ":" + std::to_string(port) + ")";
}

bool QueryApiTrusted(std::string_view ns, bool pinned, const std::vector<std::string>& namespaces) {
  return pinned || std::find(namespaces.begin(), namespaces.end(), ns) != namespaces.end();
}

std::string HowToTrustQueryApi(std::string_view ns, std::string_view service,
                               std::string_view port) {
  return "namespace " + std::string(ns) +
         " is not in discovery.trust.query_api_namespaces; to trust it, add it there or pin the "
         "service (--target " +
         std::string(ns) + "/svc/" + std::string(service) + ":" + std::string(port) + ")";
}

}  // namespace gpuattr::trust
