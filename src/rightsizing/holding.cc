#include "holding.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>

#include "gpuattr/attribution/kube_view.h"
#include "gpuattr/attribution/node_shape.h"

namespace gpuattr::rightsizing {
namespace {

constexpr std::string_view kMigResource = "nvidia.com/mig-";

// The one MIG profile the pod's containers ask for, or empty (none, or several).
std::string_view RequestedProfile(const kube::Pod& pod) {
  std::string_view found;
  for (const auto* containers : {&pod.containers, &pod.init_containers})
    for (const kube::Container& c : *containers)
      for (const kube::ResourceList* list : {&c.requests, &c.limits})
        for (const auto& [name, amount] : *list) {
          if (amount <= 0 || !name.starts_with(kMigResource) || name.ends_with(".shared")) continue;
          const std::string_view profile = std::string_view(name).substr(kMigResource.size());
          if (!found.empty() && found != profile) return {};  // several: ambiguous
          found = profile;
        }
  return found;
}

// r as allocation reads it (GKE's and MPS's counts included: docs/design.md#node-shapes).
int ReplicasOf(const kube::Node* node, const std::string& resource) {
  if (node == nullptr) return 1;
  return static_cast<int>(attribution::ReplicasLabel(*node, resource));
}

}  // namespace

Holding HoldingOf(const attribution::PodDevice& link, const attribution::Device& device,
                  const kube::Pod& pod, const kube::Node* node) {
  Holding h;
  h.model = device.model;
  h.device_memory_bytes = device.memory_total_bytes;
  const bool slice = device.id.gpu_instance || !device.mig_profile.empty();
  const MigModel* model =
      MigModelOf(device.model, slice ? std::nullopt : device.memory_total_bytes);
  std::string resource = "nvidia.com/gpu";
  if (slice) {
    // Where every nvidia.com/gpu unit is a slice (mig.strategy=single, GKE partitions), pods
    // request nvidia.com/gpu: the slice's profile is the exporter's, else the node's, and a
    // shared slice has the node shape's replicas (docs/design.md#node-shapes). On mixed nodes
    // pods request nvidia.com/mig-<profile>, and its `.replicas` label tells the sharing. The
    // shape is read only when needed (it parses the labels; most pods need it not).
    std::optional<attribution::NodeShape> shape;
    auto units_are_slices = [&] {
      if (!shape)
        shape = node != nullptr ? attribution::NodeShapeOf(*node) : attribution::NodeShape{};
      return shape->UnitsAreSlices();
    };
    const std::string_view requested = RequestedProfile(pod);
    std::string_view name = requested.empty() ? device.mig_profile : requested;
    if (name.empty() && units_are_slices()) name = shape->slice_profile;
    if (std::optional<MigProfile> p = CanonicalProfile(model, name)) h.profile = p->name;
    if (attribution::IsShared(link.sharing) && !(requested.empty() && units_are_slices()))
      resource = std::string(kMigResource) + std::string(name);
  }
  if (link.sharing == attribution::Sharing::kHami) {
    // A HAMi fraction held as the nearest share 1/k (docs/design.md#node-shapes).
    h.replicas = link.share > 0 ? std::max(1, static_cast<int>(std::lround(1 / link.share))) : 1;
  } else if (attribution::IsShared(link.sharing)) {
    h.replicas = ReplicasOf(node, resource);
    if (h.replicas <= 1 && device.pods && *device.pods > 1)
      h.replicas = static_cast<int>(*device.pods);
  }
  return h;
}

AdvertisedProfiles AdvertisedByModel(const attribution::Attribution& attribution,
                                     const kube::ClusterObjects& objects) {
  std::map<std::string, std::set<std::string>> models_by_node;
  for (const attribution::Card& c : attribution.cards) models_by_node[c.node].insert(c.model);
  AdvertisedProfiles out;
  for (const auto& [node_name, models] : models_by_node) {
    const kube::Node* node = objects.FindNode(node_name);
    if (node == nullptr) continue;
    for (const std::string& m : models) {
      const MigModel* model = MigModelOf(m);
      for (const auto& [name, amount] : node->capacity) {
        if (!name.starts_with(kMigResource) || name.ends_with(".shared")) continue;
        std::optional<MigProfile> p = CanonicalProfile(model, name);
        if (!p) continue;
        const bool in_table = model && std::find(model->profiles.begin(), model->profiles.end(),
                                                 *p) != model->profiles.end();
        std::vector<MigProfile>& list = out[m];
        if (!in_table && std::find(list.begin(), list.end(), *p) == list.end()) list.push_back(*p);
      }
    }
  }
  return out;
}

}  // namespace gpuattr::rightsizing
