#include "gpuattr/trust/rules.h"

#include <algorithm>

namespace gpuattr::trust {
namespace {

constexpr std::string_view kDaemonSetApiVersion = "apps/v1";

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

bool Listed(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Why the pod's owner references make no exporter of it, in a few words.
std::string OwnerProblem(const kube::Pod& pod) {
  if (const kube::OwnerReference* ds = DaemonSetController(pod))
    return "its DaemonSet " + ds->name + " is in namespace " + pod.namespace_ +
           ", which is not in discovery.trust.exporter_namespaces (tenants may create "
           "DaemonSets in their own namespaces)";
  if (const kube::OwnerReference* o = pod.OwnedBy("DaemonSet")) {
    if (!o->controller) return "its DaemonSet owner reference is not the controller reference";
    return "its DaemonSet owner reference names apiVersion \"" + o->api_version + "\", not apps/v1";
  }
  return "not controlled by a DaemonSet";
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

std::vector<std::string> DefaultExporterNamespaces() {
  return {"gpu-operator",   "nvidia-gpu-operator", "kube-system",
          "gpu-monitoring", "monitoring",          "dcgm-exporter"};
}

std::vector<std::string> DefaultQueryApiNamespaces() {
  return {"monitoring", "kube-prometheus-stack", "openshift-monitoring", "victoria-metrics"};
}

const kube::OwnerReference* DaemonSetController(const kube::Pod& pod) {
  const kube::OwnerReference* c = pod.Controller();
  if (c == nullptr || c->kind != "DaemonSet" || c->api_version != kDaemonSetApiVersion)
    return nullptr;
  return c;
}

ExporterVerdict JudgeExporter(const kube::Pod& pod, bool pinned,
                              const ExporterTrustConfig& config) {
  if (pinned) return {Rank::kPinned, "pinned"};
  for (size_t i = 0; i < config.rules.size(); ++i)
    if (config.rules[i].Matches(pod))
      return {Rank::kRule,
              "trust rule " + std::to_string(i + 1) + " (" + config.rules[i].Describe() + ")"};
  if (const kube::OwnerReference* ds = DaemonSetController(pod))
    if (Listed(config.namespaces, pod.namespace_))
      return {Rank::kDaemonSet, "controlled by DaemonSet " + pod.namespace_ + "/" + ds->name};
  return {};
}

std::string HowToTrustExporter(const kube::Pod& pod, int32_t port) {
  ExporterRule rule{pod.namespace_, SuggestedSelector(pod)};
  std::string hint =
      OwnerProblem(pod) +
      ", not pinned and matching no trust rule; to trust it, pin it (--target " + pod.namespace_ +
      "/" + pod.name + ":" + std::to_string(port) +
      ") or add a rule to discovery.trust.exporters ({namespace: " + rule.namespace_ +
      ", selector: " + SelectorText(rule.selector) + "})";
  if (DaemonSetController(pod))
    hint += ", or add " + pod.namespace_ +
            " to discovery.trust.exporter_namespaces if only administrators may create pods "
            "there";
  return hint;
}

bool InferenceTrusted(bool holds_gpu, bool pinned) { return holds_gpu || pinned; }

std::string HowToTrustInference(std::string_view ns, std::string_view pod, int32_t port) {
  return "the pod holds no GPU (no nvidia.com/ resource, no DRA device), so it may not speak for "
         "one; to trust it, pin it (--target " +
         std::string(ns) + "/" + std::string(pod) + ":" + std::to_string(port) + ")";
}

bool QueryApiTrusted(std::string_view ns, bool pinned, const std::vector<std::string>& namespaces) {
  return pinned || Listed(namespaces, ns);
}

std::string HowToTrustQueryApi(std::string_view ns, std::string_view service,
                               std::string_view port) {
  return "namespace " + std::string(ns) +
         " is not in discovery.trust.query_api_namespaces; to trust it, pin the service "
         "(--target " +
         std::string(ns) + "/svc/" + std::string(service) + ":" + std::string(port) +
         ", the safer choice) or add the namespace there";
}

}  // namespace gpuattr::trust
