// GPU node totals and per-resource allocatable/requested/free.
#include "gpuattr/allocation/nodes.h"

#include <algorithm>
#include <set>

#include "gpuattr/allocation/resources.h"
#include "gpuattr/attribution/node_shape.h"

namespace gpuattr::allocation {
namespace {

constexpr double kBusyUtilization = 0.05;

bool AdvertisesNvidia(const kube::Node& node) {
  auto any = [](const kube::ResourceList& l) {
    return std::any_of(l.begin(), l.end(),
                       [](const auto& kv) { return IsNvidiaResource(kv.first); });
  };
  return any(node.capacity) || any(node.allocatable);
}

// Physical devices in a node's resource list: device resources as they are, time-slicing
// replicas ÷ the node's replicas per device (resources.h).
int64_t DeviceTotal(const kube::Node& node, const ResourceCounts& counts) {
  int64_t total = 0;
  for (const auto& [name, value] : counts) total += PhysicalDevices(node, name, value);
  return total;
}

// Devices held: the device requests (replicas are never devices).
int64_t HeldDevices(const ResourceCounts& devices) {
  int64_t total = 0;
  for (const auto& [name, value] : devices) total += value;
  return total;
}

ResourceCounts Tracked(const kube::ResourceList& list) {
  ResourceCounts out;
  for (const auto& [name, value] : list)
    if (IsTrackedResource(name)) out[name] = value;
  return out;
}

template <typename Map>
const typename Map::mapped_type* Find(const Map& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

// The GPU nodes: those advertising an nvidia.com/ resource, publishing DRA devices, or with a
// device an exporter saw.
std::set<std::string> GpuNodeNames(const kube::ClusterObjects& objects,
                                   const attribution::Attribution& attribution,
                                   const DraView& dra) {
  std::set<std::string> names;
  for (const auto& [name, node] : objects.nodes)
    if (AdvertisesNvidia(node)) names.insert(name);
  for (const auto& [name, devices] : dra.node_devices) names.insert(name);
  for (const attribution::Device& d : attribution.devices) names.insert(d.id.node);
  return names;
}

// node → resource → held by its pods: devices (for the node's device total), and every
// resource in its own units (for the per-resource series).
struct HeldPerNode {
  std::map<std::string, ResourceCounts> devices, requested;
};

HeldPerNode HeldByPods(const std::vector<PodRequest>& holders, const DraView& dra) {
  HeldPerNode held;
  for (const PodRequest& p : holders) {
    for (const auto& [resource, count] : p.requested)
      if (IsTrackedResource(resource)) {
        held.devices[p.node][resource] += count;
        held.requested[p.node][resource] += count;
      }
    for (const auto& [resource, count] : p.replicas) held.requested[p.node][resource] += count;
  }
  for (const auto& [node, counts] : dra.node_allocated)
    for (const auto& [resource, count] : counts) {
      held.devices[node][resource] += count;
      held.requested[node][resource] += count;
    }
  return held;
}

struct Seen {
  size_t seen = 0, busy = 0;
};

// Devices seen and busy per node, in one pass over the devices (not one per node).
std::map<std::string_view, Seen> SeenPerNode(const attribution::Attribution& attribution) {
  std::vector<bool> linked(attribution.devices.size(), false);  // a pod is on the device
  for (const attribution::PodDevice& link : attribution.pod_devices)
    if (link.device < linked.size()) linked[link.device] = true;
  std::map<std::string_view, Seen> seen;
  for (size_t i = 0; i < attribution.devices.size(); ++i) {
    const attribution::Device& d = attribution.devices[i];
    Seen& s = seen[d.id.node];
    ++s.seen;
    const bool has_pod = linked[i] || (d.pods && *d.pods > 0);
    if (has_pod || (d.utilization && *d.utilization >= kBusyUtilization)) ++s.busy;
  }
  return seen;
}

// A node's tracked resources as its Node object lists them, DRA devices added to both.
struct NodeResources {
  ResourceCounts allocatable, capacity;
};

// Fills the device totals of `n` from its Node object and DRA devices; returns the resources.
NodeResources AddNodeObjectTotals(const kube::Node& node, const ResourceCounts* dra_devices,
                                  NodeAllocation& n) {
  NodeResources r;
  r.capacity = Tracked(node.capacity);
  r.allocatable = Tracked(node.allocatable);
  n.capacity = DeviceTotal(node, r.capacity);
  n.allocatable = DeviceTotal(node, r.allocatable);
  if (dra_devices)
    for (const auto& [resource, count] : *dra_devices) {
      r.capacity[resource] += count;  // DRA devices count in both (docs/design.md#allocation)
      r.allocatable[resource] += count;
      *n.capacity += count;
      *n.allocatable += count;
    }
  n.unhealthy = std::max<int64_t>(0, *n.capacity - *n.allocatable);
  return r;
}

// One series per resource the node offers or its pods hold, sorted by resource.
void AddResourceSeries(const std::string& name, const NodeResources& offered,
                       const ResourceCounts* held, std::vector<NodeResource>& out) {
  std::set<std::string> resources;
  for (const auto& [resource, count] : offered.allocatable) resources.insert(resource);
  for (const auto& [resource, count] : offered.capacity) resources.insert(resource);
  if (held)
    for (const auto& [resource, count] : *held) resources.insert(resource);
  for (const std::string& resource : resources) {
    NodeResource r;
    r.node = name;
    r.resource = resource;
    if (auto it = offered.allocatable.find(resource); it != offered.allocatable.end())
      r.allocatable = it->second;
    if (held)
      if (auto it = held->find(resource); it != held->end()) r.requested = it->second;
    r.free = std::max<int64_t>(0, r.allocatable - r.requested);
    out.push_back(std::move(r));
  }
}

// A node whose sharing labels gpuattr does not understand is counted as its resources say, but
// never as more physical GPUs than the exporters saw cards there (docs/design.md#node-shapes).
void CapUnrecognised(const kube::Node& node, const std::map<std::string_view, int64_t>& cards,
                     NodeAllocation& n) {
  if (attribution::NodeShapeOf(node).kind != attribution::ShapeKind::kUnrecognised) return;
  auto it = cards.find(node.name);
  if (it == cards.end() || !n.capacity || *n.capacity <= it->second) return;
  const int64_t withheld = *n.capacity - *n.allocatable;
  n.capacity = it->second;
  n.allocatable = std::max<int64_t>(0, it->second - std::max<int64_t>(0, withheld));
  n.unhealthy = *n.capacity - *n.allocatable;
}

}  // namespace

NodeView BuildNodes(const kube::ClusterObjects& objects,
                    const attribution::Attribution& attribution, const DraView& dra,
                    const std::vector<PodRequest>& holders) {
  const HeldPerNode held = HeldByPods(holders, dra);
  const std::map<std::string_view, Seen> seen = SeenPerNode(attribution);
  std::map<std::string_view, int64_t> cards;  // physical cards the exporters saw, per node
  for (const attribution::Card& c : attribution.cards) ++cards[c.node];
  NodeView view;
  for (const std::string& name : GpuNodeNames(objects, attribution, dra)) {
    NodeAllocation n;
    n.node = name;
    NodeResources offered;
    const kube::Node* node = objects.FindNode(name);
    if (node) offered = AddNodeObjectTotals(*node, Find(dra.node_devices, name), n);
    if (node) CapUnrecognised(*node, cards, n);
    if (const ResourceCounts* devices = Find(held.devices, name))
      n.requested = HeldDevices(*devices);
    if (auto it = seen.find(name); it != seen.end()) {
      n.seen = it->second.seen;
      n.busy = it->second.busy;
    }
    view.nodes.push_back(std::move(n));
    // Without the Node object its extended resources are unknown: no per-resource series (a
    // fake allocatable 0 would claim the node has nothing).
    if (node) AddResourceSeries(name, offered, Find(held.requested, name), view.node_resources);
  }
  return view;
}

}  // namespace gpuattr::allocation
