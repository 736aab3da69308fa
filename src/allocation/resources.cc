// Resource classification and the scheduler's effective request of a pod.
#include "gpuattr/allocation/resources.h"

#include <algorithm>

#include "gpuattr/attribution/kube_view.h"

namespace gpuattr::allocation {
namespace {

constexpr std::string_view kNvidiaPrefix = "nvidia.com/";
constexpr std::string_view kSharedSuffix = ".shared";

// Per container the limit wins: for extended resources Kubernetes requires request == limit, and
// a limit alone sets the request.
ResourceCounts ContainerCounts(const kube::Container& c) {
  ResourceCounts out;
  for (const auto& [name, value] : c.requests)
    if (IsTrackedResource(name)) out[name] = value;
  for (const auto& [name, value] : c.limits)
    if (IsTrackedResource(name)) out[name] = value;
  return out;
}

void AddTo(ResourceCounts& into, const ResourceCounts& add) {
  for (const auto& [name, value] : add) into[name] += value;
}

void MaxInto(ResourceCounts& into, const ResourceCounts& other) {
  for (const auto& [name, value] : other) into[name] = std::max(into[name], value);
}

}  // namespace

bool IsNvidiaResource(std::string_view resource) { return resource.starts_with(kNvidiaPrefix); }

bool IsDeviceResource(std::string_view resource) {
  if (!IsNvidiaResource(resource) || resource.ends_with(kSharedSuffix)) return false;
  std::string_view rest = resource.substr(kNvidiaPrefix.size());
  return rest == "gpu" || rest.starts_with("mig-") || rest.starts_with("gpu.");
}

bool IsReplicaResource(std::string_view resource) {
  if (!resource.ends_with(kSharedSuffix)) return false;
  return IsDeviceResource(resource.substr(0, resource.size() - kSharedSuffix.size()));
}

bool CountsReplicas(const kube::Node* node, std::string_view resource) {
  if (IsReplicaResource(resource)) return true;
  return node && IsDeviceResource(resource) && attribution::ReplicasLabel(*node, resource) > 1;
}

int64_t PhysicalDevices(const kube::Node& node, std::string_view resource, int64_t count) {
  std::string_view device = resource;
  if (IsReplicaResource(resource)) {
    device.remove_suffix(kSharedSuffix.size());
  } else if (!IsDeviceResource(resource)) {
    return 0;
  }
  const int64_t r = attribution::ReplicasLabel(node, device);
  if (r > 1) return count / r;
  return IsReplicaResource(resource) ? 0 : count;
}

std::string ShortResourceName(std::string_view resource) {
  if (resource.starts_with(kNvidiaPrefix)) resource.remove_prefix(kNvidiaPrefix.size());
  return std::string(resource);
}

ResourceCounts EffectiveRequests(const kube::Pod& pod) {
  ResourceCounts app;
  for (const kube::Container& c : pod.containers) AddTo(app, ContainerCounts(c));
  ResourceCounts sidecars;  // restartable init containers started so far
  ResourceCounts init_peak;
  for (const kube::Container& c : pod.init_containers) {
    ResourceCounts own = ContainerCounts(c);
    if (c.IsSidecar()) {
      AddTo(sidecars, own);
      MaxInto(init_peak, sidecars);  // the sidecar runs alongside the ones before it
    } else {
      AddTo(own, sidecars);  // a regular init container runs with the sidecars before it
      MaxInto(init_peak, own);
    }
  }
  AddTo(app, sidecars);  // sidecars keep running next to the app containers
  MaxInto(app, init_peak);
  std::erase_if(app, [](const auto& kv) { return kv.second <= 0; });
  return app;
}

bool HoldsResources(const kube::Pod& pod) {
  return pod.phase == "Running" || (pod.phase == "Pending" && !pod.node_name.empty());
}

bool IsUnscheduled(const kube::Pod& pod) { return pod.phase == "Pending" && pod.node_name.empty(); }

}  // namespace gpuattr::allocation
