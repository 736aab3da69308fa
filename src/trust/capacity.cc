#include "gpuattr/trust/capacity.h"

#include <algorithm>
#include <set>
#include <string>

#include "gpuattr/allocation/dra.h"
#include "gpuattr/allocation/resources.h"
#include "gpuattr/kube/dra_gpus.h"

namespace gpuattr::trust {
namespace {

// Device-plugin cards, and whether the node advertises any nvidia.com/ resource at all.
std::pair<int64_t, bool> PluginCards(const kube::Node& node) {
  std::map<std::string, int64_t> amount;  // resource → the larger of capacity and allocatable
  bool advertised = false;
  for (const kube::ResourceList* list : {&node.capacity, &node.allocatable})
    for (const auto& [name, value] : *list) {
      if (!allocation::IsNvidiaResource(name)) continue;
      advertised = true;
      if (!allocation::IsTrackedResource(name)) continue;
      int64_t& a = amount[name];
      a = std::max(a, value);
    }
  int64_t cards = 0;
  for (const auto& [name, value] : amount) {
    // Replicas whose per-card count the node does not say could each be a card: the upper bound.
    const int64_t devices = allocation::PhysicalDevices(node, name, value);
    cards += devices == 0 && allocation::IsReplicaResource(name) ? value : devices;
  }
  return {cards, advertised};
}

// DRA cards: a GPU device's UUID, a MIG device's parent UUID (else the device's name).
std::pair<int64_t, bool> DraCards(const kube::ClusterObjects& objects, std::string_view node) {
  std::set<std::string> cards;
  for (const auto& [name, slice] : objects.resource_slices) {
    if (slice.driver != kube::kNvidiaDraDriver || slice.node_name != node) continue;
    for (const kube::DraDevice& d : slice.devices) {
      if (!kube::IsDraGpuDevice(slice, d)) continue;
      const bool mig = allocation::DraDeviceType(d) == "mig";
      const std::string& id = mig ? d.parent_uuid : d.uuid;
      cards.insert(id.empty() ? slice.pool + "/" + d.name : id);
    }
  }
  return {static_cast<int64_t>(cards.size()), !cards.empty()};
}

}  // namespace

std::optional<int64_t> AdvertisedCards(const kube::ClusterObjects& objects, std::string_view node) {
  const kube::Node* n = objects.FindNode(node);
  if (n == nullptr) return std::nullopt;
  auto [plugin, advertised] = PluginCards(*n);
  auto [dra, has_dra] = DraCards(objects, node);
  if (!advertised && !has_dra) return std::nullopt;
  return plugin + dra;
}

}  // namespace gpuattr::trust
