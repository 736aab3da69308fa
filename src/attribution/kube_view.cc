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

bool NodeSharesGpus(const kube::Node& node) {
  for (const kube::ResourceList* list : {&node.capacity, &node.allocatable})
    for (const auto& [name, amount] : *list)
      if (IsGpuResourceName(name) && name.ends_with(".shared")) return true;
  auto it = node.labels.find("nvidia.com/gpu.replicas");
  if (it == node.labels.end()) return false;
  long long replicas = 0;
  const std::string& v = it->second;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), replicas);
  return ec == std::errc() && p == v.data() + v.size() && replicas > 1;
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
