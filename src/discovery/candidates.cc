#include "gpuattr/discovery/candidates.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>

#include "gpuattr/kube/dra_gpus.h"
#include "gpuattr/util/strings.h"

namespace gpuattr::discovery {
namespace {

// "hami": HAMi's device plugin DaemonSet (hami-device-plugin, image projecthami/hami) names no
// other.
constexpr std::array<std::string_view, 5> kExporterWords = {"dcgm", "gpu", "nvidia", "cuda",
                                                            "hami"};
constexpr std::array<std::string_view, 6> kInferenceWords = {
    "vllm", "sglang", "tritonserver", "text-generation-inference", "kserve", "predictor"};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

template <size_t N>
std::optional<std::string_view> FindWord(std::string_view text,
                                         const std::array<std::string_view, N>& words) {
  const std::string lower = Lower(text);
  for (std::string_view w : words)
    if (lower.find(w) != std::string::npos) return w;
  return std::nullopt;
}

template <size_t N>
std::optional<std::string> KeywordMatch(const kube::Pod& pod,
                                        const std::array<std::string_view, N>& words) {
  if (auto w = FindWord(NameWithoutNode(pod.name, pod.node_name), words))
    return "name " + pod.name + " (" + std::string(*w) + ")";
  for (const auto& c : pod.containers)
    if (auto w = FindWord(c.image, words)) return "image " + c.image + " (" + std::string(*w) + ")";
  for (const auto& [k, v] : pod.labels) {
    if (auto w = FindWord(k, words)) return "label " + k + "=" + v + " (" + std::string(*w) + ")";
    if (auto w = FindWord(v, words)) return "label " + k + "=" + v + " (" + std::string(*w) + ")";
  }
  return std::nullopt;
}

bool IsNvidia(const std::string& resource) { return resource.rfind("nvidia.com/", 0) == 0; }

bool ListHasNvidia(const kube::ResourceList& list, bool positive_only) {
  for (const auto& [name, qty] : list)
    if (IsNvidia(name) && (!positive_only || qty > 0)) return true;
  return false;
}

std::optional<int32_t> ParsePort(std::string_view text) {
  int32_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v < 1 || v > 65535)
    return std::nullopt;
  return v;
}

std::optional<PortChoice> AnnotatedPort(const kube::Pod& pod) {
  auto it = pod.annotations.find("prometheus.io/port");
  if (it == pod.annotations.end()) return std::nullopt;
  if (auto p = ParsePort(it->second)) return PortChoice{*p, "annotation"};
  return std::nullopt;  // unparseable annotation: fall back to the declared ports
}

std::optional<PortChoice> NamedPort(const kube::Pod& pod, std::string_view name) {
  for (const auto& c : pod.containers)
    for (const auto& p : c.ports)
      if (p.name == name && p.container_port > 0)
        return PortChoice{p.container_port, "named " + std::string(name)};
  return std::nullopt;
}

std::optional<PortChoice> DeclaredPort(const kube::Pod& pod, int32_t port) {
  for (const auto& c : pod.containers)
    for (const auto& p : c.ports)
      if (p.container_port == port) return PortChoice{port, std::to_string(port)};
  return std::nullopt;
}

std::optional<PortChoice> FirstPort(const kube::Pod& pod) {
  for (const auto& c : pod.containers)
    for (const auto& p : c.ports)
      if (p.container_port > 0) return PortChoice{p.container_port, "first"};
  return std::nullopt;
}

void SortByKey(std::vector<Candidate>& v) {
  std::sort(v.begin(), v.end(),
            [](const Candidate& a, const Candidate& b) { return a.Key() < b.Key(); });
}

}  // namespace

Candidate MakeCandidate(const kube::Pod& pod, const PortChoice& port, Role role, std::string why) {
  Candidate c;
  c.namespace_ = pod.namespace_;
  c.pod = pod.name;
  c.uid = pod.uid;
  c.resource_version = pod.resource_version;
  c.node = pod.node_name;
  c.ip = pod.ip;
  if (auto it = pod.annotations.find("prometheus.io/scheme");
      it != pod.annotations.end() && Lower(Trim(it->second)) == "https")
    c.scheme = "https";
  c.port = port.port;
  c.port_source = port.source;
  c.role = role;
  c.why = std::move(why);
  return c;
}

std::string_view RoleName(Role role) { return role == Role::kExporter ? "exporter" : "inference"; }

std::string Candidate::Key() const { return namespace_ + "/" + pod + ":" + std::to_string(port); }

std::string NameWithoutNode(std::string_view pod_name, std::string_view node_name) {
  std::string name(pod_name);
  if (node_name.empty()) return name;
  // Case-insensitive: node names are lower-case DNS names, and so are pod names.
  const std::string lower_node = Lower(node_name);
  std::string lower = Lower(name);
  for (size_t at = lower.find(lower_node); at != std::string::npos; at = lower.find(lower_node)) {
    name.erase(at, lower_node.size());
    lower.erase(at, lower_node.size());
  }
  return name;
}

std::optional<std::string> ExporterKeywordMatch(const kube::Pod& pod) {
  return KeywordMatch(pod, kExporterWords);
}

std::optional<std::string> InferenceKeywordMatch(const kube::Pod& pod) {
  return KeywordMatch(pod, kInferenceWords);
}

bool RequestsNvidiaResource(const kube::Pod& pod) {
  auto any = [](const std::vector<kube::Container>& cs) {
    for (const auto& c : cs)
      if (ListHasNvidia(c.requests, true) || ListHasNvidia(c.limits, true)) return true;
    return false;
  };
  return any(pod.containers) || any(pod.init_containers);
}

bool AdvertisesNvidiaResource(const kube::Node& node) {
  return ListHasNvidia(node.capacity, false) || ListHasNvidia(node.allocatable, false);
}

std::optional<PortChoice> ExporterPort(const kube::Pod& pod) {
  if (auto p = AnnotatedPort(pod)) return p;
  if (auto p = NamedPort(pod, "metrics")) return p;
  return FirstPort(pod);
}

std::optional<PortChoice> InferencePort(const kube::Pod& pod) {
  if (auto p = AnnotatedPort(pod)) return p;
  if (auto p = NamedPort(pod, "metrics")) return p;
  if (auto p = NamedPort(pod, "http")) return p;
  if (auto p = DeclaredPort(pod, 8000)) return p;
  return FirstPort(pod);
}

CandidateScan ScanCandidates(const kube::ClusterObjects& objects) {
  CandidateScan out;
  std::optional<kube::DraGpuIndex> dra;  // built only when some claim or slice exists
  if (!objects.resource_claims.empty()) dra = kube::IndexDraGpus(objects);
  for (const auto& [key, pod] : objects.pods) {
    if (pod.phase != "Running") continue;
    bool portless = false;
    if (auto why = ExporterKeywordMatch(pod)) {
      if (auto port = ExporterPort(pod))
        out.exporters.push_back(MakeCandidate(pod, *port, Role::kExporter, std::move(*why)));
      else
        portless = true;
    }
    if (pod.all_containers_ready) {
      std::optional<std::string> why;
      if (RequestsNvidiaResource(pod)) {
        why = "holds an nvidia.com/ resource";
      } else if (dra) {
        auto held = dra->holders.find(pod.Id());
        if (held != dra->holders.end()) why = "holds a DRA GPU device (claim " + held->second + ")";
      }
      if (!why) why = InferenceKeywordMatch(pod);
      if (why) {
        if (auto port = InferencePort(pod))
          out.inference.push_back(MakeCandidate(pod, *port, Role::kInference, std::move(*why)));
        else
          portless = true;
      }
    }
    if (portless) ++out.no_port;
  }
  SortByKey(out.exporters);
  SortByKey(out.inference);
  return out;
}

std::vector<Candidate> ExporterCandidates(const kube::ClusterObjects& objects) {
  return ScanCandidates(objects).exporters;
}

std::vector<Candidate> InferenceCandidates(const kube::ClusterObjects& objects) {
  return ScanCandidates(objects).inference;
}

GpuPresence DetectGpuPresence(const kube::ClusterObjects& objects) {
  for (const auto& [name, node] : objects.nodes)
    if (AdvertisesNvidiaResource(node))
      return {true, "node " + name + " advertises an nvidia.com/ resource"};
  for (const auto& [key, pod] : objects.pods)
    if (RequestsNvidiaResource(pod))
      return {true, "pod " + key + " requests an nvidia.com/ resource"};
  for (const auto& [name, slice] : objects.resource_slices)
    for (const kube::DraDevice& d : slice.devices)
      if (kube::IsDraGpuDevice(slice, d))
        return {true, "DRA ResourceSlice " + name + " publishes GPU device " + d.name};
  for (const auto& [key, pod] : objects.pods)
    if (pod.phase == "Running")
      if (auto why = ExporterKeywordMatch(pod))
        return {true, "pod " + key + " looks like an exporter: " + *why};
  return {false,
          "no node advertises an nvidia.com/ resource, no pod requests one and no pod "
          "looks like a GPU exporter (" +
              std::to_string(objects.nodes.size()) + " nodes, " +
              std::to_string(objects.pods.size()) + " pods checked)"};
}

void MarkTrust(std::vector<Candidate>& candidates, const kube::ClusterObjects& objects,
               const trust::ExporterTrustConfig& config) {
  std::optional<kube::DraGpuIndex> dra;  // built only when some claim exists
  if (!objects.resource_claims.empty()) dra = kube::IndexDraGpus(objects);
  for (Candidate& c : candidates) {
    const kube::Pod* pod = objects.FindPod(c.namespace_, c.pod);
    if (pod == nullptr) {  // not a pod of this snapshot: only a pin speaks
      c.trust = c.pinned ? "pinned" : "";
      c.rank = c.pinned ? trust::Rank::kPinned : trust::Rank::kNone;
      c.trust_hint = "its pod is not among the cluster's pods; to trust it, pin it (--target " +
                     c.namespace_ + "/" + c.pod + ":" + std::to_string(c.port) + ")";
      c.holds_gpu = false;
      continue;
    }
    trust::ExporterVerdict verdict = trust::JudgeExporter(*pod, c.pinned, config);
    c.trust = std::move(verdict.why);
    c.rank = verdict.rank;
    c.trust_hint = c.trust.empty() ? trust::HowToTrustExporter(*pod, c.port) : std::string();
    c.holds_gpu = RequestsNvidiaResource(*pod) || (dra && dra->holders.count(pod->Id()) > 0);
  }
}

bool TrustedInNoRole(const Candidate& candidate) {
  return !candidate.pinned && candidate.trust.empty() && !candidate.holds_gpu;
}

std::vector<Candidate> MergeCandidates(std::vector<Candidate> a, std::vector<Candidate> b) {
  std::map<std::string, Candidate> by_key;
  for (auto* list : {&a, &b}) {
    for (auto& c : *list) {
      std::string key = c.Key();
      auto it = by_key.find(key);
      if (it == by_key.end()) {
        by_key.emplace(std::move(key), std::move(c));
        continue;
      }
      Candidate& have = it->second;
      if (c.role == Role::kExporter) have.role = Role::kExporter;
      if (c.pinned) {
        have.pinned = true;
        have.port_source = c.port_source;
      }
      if (have.why.find(c.why) == std::string::npos) have.why += "; " + c.why;
    }
  }
  std::vector<Candidate> out;
  out.reserve(by_key.size());
  for (auto& [k, c] : by_key) out.push_back(std::move(c));
  return out;
}

}  // namespace gpuattr::discovery
