// Why a pending GPU pod waits: the first hint that applies.
#include "gpuattr/allocation/pending.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "gpuattr/allocation/resources.h"
#include "gpuattr/attribution/node_shape.h"

namespace gpuattr::allocation {
namespace {

int64_t Get(const ResourceCounts& counts, const std::string& key) {
  auto it = counts.find(key);
  return it == counts.end() ? 0 : it->second;
}

bool IsDraResource(std::string_view resource) {
  return resource.starts_with(std::string(kGpuDraDriver) + "/");
}

// Devices the cluster offers, largest first, ties by name (as shown).
std::vector<std::pair<std::string, int64_t>> OfferedDevices(const Offer& offer) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& [resource, count] : offer.cluster_allocatable)
    if (count > 0 && (IsDeviceResource(resource) || IsDraResource(resource)))
      out.emplace_back(ShortResourceName(resource), count);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return out;
}

// A profile asked for as nvidia.com/mig-<profile> where nodes offer those slices as
// nvidia.com/gpu (mig.strategy=single, GKE partitions).
std::optional<Hint> SlicesAsGpu(const std::string& resource, const Offer& offer) {
  constexpr std::string_view kMig = "nvidia.com/mig-";
  if (!resource.starts_with(kMig) || !IsDeviceResource(resource)) return std::nullopt;
  auto it = offer.gpu_slices.find(resource.substr(kMig.size()));
  if (it == offer.gpu_slices.end() || it->second <= 0) return std::nullopt;
  const std::string message = "No node offers " + ShortResourceName(resource) +
                              ". Nodes offer these slices as nvidia.com/gpu (one MIG profile per "
                              "node): request nvidia.com/gpu there instead.";
  return Hint{resource, "resource_not_offered", message,
              message + " The cluster offers " + std::to_string(it->second) + " such slices."};
}

Hint NotOffered(const std::string& resource, const Offer& offer) {
  if (auto hint = SlicesAsGpu(resource, offer)) return *hint;
  std::string message = "No node offers " + ShortResourceName(resource) + ".";
  std::string text = message;
  auto offered = OfferedDevices(offer);
  if (offered.empty()) {
    text += " The cluster offers no GPU devices.";
  } else {
    text += " The cluster offers:";
    for (size_t i = 0; i < offered.size(); ++i)
      text += (i ? ", " : " ") + offered[i].first + " \u00d7" + std::to_string(offered[i].second);
    text += ".";
  }
  return Hint{resource, "resource_not_offered", std::move(message), std::move(text)};
}

// nvidia.com/gpu asked for where nodes offer only MIG slices: suggest the most offered slice.
std::optional<Hint> MigPartitioned(const std::string& resource, const Offer& offer) {
  if (resource != "nvidia.com/gpu") return std::nullopt;
  std::optional<std::pair<std::string, int64_t>> best;
  for (const auto& [name, count] : offer.cluster_allocatable)
    if (count > 0 && name.starts_with("nvidia.com/mig-") && IsDeviceResource(name))
      if (!best || count > best->second) best.emplace(name, count);
  if (!best) return std::nullopt;
  const std::string why =
      "No node offers whole GPUs (nvidia.com/gpu): the GPUs are MIG-partitioned; request ";
  // The example slice is the most offered one, which may change: in the text only.
  return Hint{resource, "mig_partitioned", why + "a MIG slice (nvidia.com/mig-<profile>).",
              why + "a slice such as " + best->first + "."};
}

size_t IdleHolders(const Offer& offer, const std::string& resource) {
  size_t n = 0;
  for (const auto& [held, count] : offer.idle_holders)
    // A claim for "a mig device" (gpu.nvidia.com/mig) is served by any MIG profile.
    if (held == resource || (resource == std::string(kGpuDraDriver) + "/mig" &&
                             held.starts_with(std::string(kGpuDraDriver) + "/mig-")))
      n += count;
  return n;
}

Hint Waiting(const std::string& resource, int64_t count, const Offer& offer) {
  const std::string shown = ShortResourceName(resource);
  std::string label = "Waiting for free " + shown + " on one node.";
  std::string message = "Waiting for " + std::to_string(count) + " free " + shown + " on one node";
  const int64_t free = Get(offer.node_max_free, resource);
  if (free >= count && !IsDraResource(resource))
    message += " (a node has " + std::to_string(free) +
               " free: the pod may also wait for other resources, taints or affinity)";
  const size_t idle = IdleHolders(offer, resource);
  const std::string where = offer.idle_scope.empty() ? "" : " on " + offer.idle_scope;
  if (idle == 0)
    message += "; no idle pod" + where + " holds " + shown + ".";
  else
    message += "; " + std::to_string(idle) + (idle == 1 ? " idle pod" : " idle pods") + where +
               (idle == 1 ? " holds " : " hold ") + shown + " (reclaimable capacity).";
  return Hint{resource, "waiting_for_free_device", std::move(label), std::move(message)};
}

}  // namespace

Offer SummariseOffer(const std::vector<NodeResource>& node_resources, const DraView& dra,
                     const std::vector<PodRequest>& holders,
                     const std::map<kube::PodId, bool>& idle) {
  Offer offer;
  for (const NodeResource& r : node_resources) {
    offer.cluster_allocatable[r.resource] += r.allocatable;
    int64_t& max = offer.node_max[r.resource];
    max = std::max(max, r.allocatable);
    int64_t& max_free = offer.node_max_free[r.resource];
    max_free = std::max(max_free, r.free);
  }
  for (const auto& [node, types] : dra.node_types)
    for (const auto& [type, count] : types) {
      int64_t& max = offer.dra_type_node_max[type];
      max = std::max(max, count);
    }
  for (const PodRequest& p : holders) {
    auto it = idle.find(p.pod);
    if (it == idle.end() || !it->second) continue;
    for (const ResourceCounts* held : {&p.requested, &p.replicas})
      for (const auto& [resource, count] : *held) ++offer.idle_holders[resource];
  }
  return offer;
}

std::map<std::string, int64_t> GpuSlicesOffered(const kube::ClusterObjects& objects) {
  std::map<std::string, int64_t> out;
  for (const auto& [name, node] : objects.nodes) {
    const attribution::NodeShape shape = attribution::NodeShapeOf(node);
    if (!shape.UnitsAreSlices() || shape.slice_profile.empty()) continue;
    auto it = node.allocatable.find("nvidia.com/gpu");
    if (it == node.allocatable.end() || it->second <= 0) continue;
    out[shape.slice_profile] += PhysicalDevices(node, "nvidia.com/gpu", it->second);
  }
  return out;
}

std::string DraWantResource(const DraWant& want) {
  return std::string(kGpuDraDriver) + "/" + want.type;
}

Hint HintFor(const ResourceCounts& extended, const std::vector<DraWant>& wants,
             const Offer& offer) {
  for (const auto& [resource, count] : extended)
    if (Get(offer.cluster_allocatable, resource) <= 0) {
      if (auto hint = MigPartitioned(resource, offer)) return *hint;
      return NotOffered(resource, offer);
    }
  for (const auto& [resource, count] : extended) {
    const int64_t most = Get(offer.node_max, resource);
    if (count > most)
      return Hint{resource, "exceeds_node_max",
                  "Needs more " + ShortResourceName(resource) + " on one node than any node has.",
                  "Needs " + std::to_string(count) + " " + ShortResourceName(resource) +
                      " on one node; the most any node has is " + std::to_string(most) + "."};
  }
  for (const DraWant& want : wants) {
    auto it = offer.dra_type_node_max.find(want.type);
    const int64_t most = it == offer.dra_type_node_max.end() ? 0 : it->second;
    if (most <= 0) {
      std::string message = "No node publishes a " + want.type +
                            " device in a DRA ResourceSlice (claim " + want.claim + ").";
      return Hint{DraWantResource(want), "dra_no_device", message, message};
    }
    if (!want.all && want.count > most)
      return Hint{DraWantResource(want), "dra_exceeds_node_max",
                  "Needs more " + want.type + " on one node than any node offers (claim " +
                      want.claim + ").",
                  "Needs " + std::to_string(want.count) + " " + want.type + " on one node (claim " +
                      want.claim + "); the most any node offers is " + std::to_string(most) + "."};
  }
  // Waiting: about the first resource no node has enough of free right now, else the first.
  for (const auto& [resource, count] : extended)
    if (Get(offer.node_max_free, resource) < count) return Waiting(resource, count, offer);
  if (!extended.empty()) return Waiting(extended.begin()->first, extended.begin()->second, offer);
  if (!wants.empty())
    return Waiting(DraWantResource(wants.front()), wants.front().all ? 1 : wants.front().count,
                   offer);
  const std::string message = "Waiting for the scheduler (its GPU claims are allocated).";
  return Hint{"", "waiting_for_free_device", message, message};
}

}  // namespace gpuattr::allocation
