#include "gpuattr/attribution/kube_view.h"

#include <algorithm>
#include <charconv>

namespace gpuattr::attribution {
namespace {

bool IsGpuResourceName(std::string_view name) { return name.starts_with("nvidia.com/"); }

bool ListHasGpu(const kube::ResourceList& list) {
  for (const auto& [name, amount] : list)
    if (amount > 0 && IsGpuResourceName(name)) return true;
  return false;
}

bool ContainersHaveGpu(const std::vector<kube::Container>& containers) {
  for (const kube::Container& c : containers)
    if (ListHasGpu(c.requests) || ListHasGpu(c.limits)) return true;
  return false;
}

}  // namespace

bool RequestsGpuResource(const kube::Pod& pod) {
  return ContainersHaveGpu(pod.containers) || ContainersHaveGpu(pod.init_containers);
}

bool HoldsGpuResources(const kube::Pod& pod) {
  if (!RequestsGpuResource(pod)) return false;
  return pod.phase == "Running" || (pod.phase == "Pending" && !pod.node_name.empty());
}

bool RequestsAnyGpu(const kube::Pod& pod) {
  return RequestsGpuResource(pod) || !pod.resource_claims.empty();
}

int64_t ReplicasLabel(const kube::Node& node, std::string_view device_resource) {
  // nvidia.com/gpu: the node shape's replicas (GKE's client count and HAMi's split count too).
  if (device_resource == "nvidia.com/gpu") return NodeShapeOf(node).replicas;
  auto it = node.labels.find(std::string(device_resource) + ".replicas");
  if (it == node.labels.end()) return 1;
  int64_t replicas = 0;
  const std::string& v = it->second;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), replicas);
  return ec == std::errc() && p == v.data() + v.size() && replicas > 1 ? replicas : 1;
}

NodeSharing NodeSharingOf(const kube::Node& node) {
  constexpr std::string_view kGpu = "nvidia.com/gpu", kMig = "nvidia.com/mig-", kShared = ".shared";
  auto advertised = [&](const std::string& name) {
    int64_t amount = 0;
    for (const kube::ResourceList* list : {&node.capacity, &node.allocatable})
      if (auto it = list->find(name); it != list->end()) amount = std::max(amount, it->second);
    return amount;
  };
  NodeSharing out;
  const NodeShape shape = NodeShapeOf(node);
  out.shared_as = shape.kind == ShapeKind::kHami ? Sharing::kHami
                  : shape.mps_sharing            ? Sharing::kMps
                                                 : Sharing::kTimeSliced;
  out.shape = shape;
  out.whole_gpus = advertised(std::string(kGpu) + std::string(kShared)) > 0 || shape.replicas > 1;
  bool mig_resources = false;
  for (const kube::ResourceList* list : {&node.capacity, &node.allocatable})
    for (const auto& [name, amount] : *list) {
      if (!name.starts_with(kMig)) continue;
      mig_resources = true;
      if (name.ends_with(kShared) && amount > 0) out.mig_slices = true;
    }
  for (const auto& [key, value] : node.labels) {
    std::string_view k = key;
    if (k.starts_with(kMig) && k.ends_with(".replicas") &&
        ReplicasLabel(node, k.substr(0, k.size() - std::string_view(".replicas").size())) > 1)
      out.mig_slices = true;
  }
  if (!mig_resources) out.mig_slices = out.mig_slices || out.whole_gpus;
  return out;
}

std::map<std::string, std::vector<kube::PodId>, std::less<>> GpuPodsByNode(
    const kube::ClusterObjects& objects) {
  std::map<std::string, std::vector<kube::PodId>, std::less<>> out;
  for (const auto& [key, pod] : objects.pods)
    if (!pod.node_name.empty() && HoldsGpuResources(pod))
      out[pod.node_name].push_back(kube::PodId{pod.namespace_, pod.name});
  for (auto& [node, pods] : out) std::sort(pods.begin(), pods.end());
  return out;
}

}  // namespace gpuattr::attribution
