// Allocation group: what pods request, what GPU nodes offer and have free, why GPU pods pend.
#include "gpuattr/metrics/allocation.h"

#include "gpuattr/metrics/attribution_labels.h"

namespace gpuattr::metrics {
namespace {

constexpr FamilySpec kPodRequested{
    "gpuattr_pod_requested_devices", MetricType::kGauge,
    "Devices the pod holds (Running, or Pending and bound to a node), per resource as Kubernetes "
    "names it: the scheduler's effective request (max of the app containers' sum and each init "
    "container, plus sidecars; limits else requests), and 1 per DRA device allocated to a claim "
    "reserved for the pod (gpu.nvidia.com/gpu, gpu.nvidia.com/mig-<profile>). Never "
    "time-slicing replicas (see gpuattr_pod_requested_replicas)."};
constexpr FamilySpec kNamespaceRequested{
    "gpuattr_namespace_requested_devices", MetricType::kGauge,
    "Sum of gpuattr_pod_requested_devices over the namespace's pods, per resource."};
constexpr FamilySpec kPodReplicas{
    "gpuattr_pod_requested_replicas", MetricType::kGauge,
    "Time-slicing replicas the pod holds, per resource as Kubernetes names it: *.shared "
    "resources, and nvidia.com/gpu (or nvidia.com/mig-<profile>) on a node labelled "
    "<resource>.replicas > 1. Replicas are not devices: never add them to "
    "gpuattr_pod_requested_devices."};
constexpr FamilySpec kNamespaceReplicas{
    "gpuattr_namespace_requested_replicas", MetricType::kGauge,
    "Sum of gpuattr_pod_requested_replicas over the namespace's pods, per resource."};
constexpr FamilySpec kNamespacePending{
    "gpuattr_namespace_pending_pods", MetricType::kGauge,
    "GPU pods of the namespace the scheduler has not placed yet (Pending without a node, "
    "requesting an nvidia.com/ device resource or replica, or a GPU DRA claim)."};
constexpr FamilySpec kNodeCapacity{
    "gpuattr_node_devices_capacity", MetricType::kGauge,
    "Physical GPU devices of the node: node capacity of nvidia.com/gpu, nvidia.com/mig-* and "
    "nvidia.com/gpu.*, plus gpu.nvidia.com DRA devices in its ResourceSlices. On a time-sliced "
    "node (label <resource>.replicas = r > 1) the resource's replicas, renamed to .shared or "
    "not, count replicas / r; .shared replicas without that label count 0."};
constexpr FamilySpec kNodeAllocatable{
    "gpuattr_node_devices_allocatable", MetricType::kGauge,
    "Physical GPU devices the scheduler may place: node allocatable of the device resources "
    "(time-sliced: replicas / r) plus DRA devices."};
constexpr FamilySpec kNodeUnhealthy{
    "gpuattr_node_devices_unhealthy", MetricType::kGauge,
    "GPU devices the device plugin withholds as unhealthy: capacity - allocatable."};
constexpr FamilySpec kNodeRequested{
    "gpuattr_node_devices_requested", MetricType::kGauge,
    "GPU devices held by pods bound to the node (Running, or Pending and bound) plus allocated "
    "DRA devices of the node. Time-slicing replicas are not devices and are not counted (see "
    "gpuattr_node_resource_requested)."};
constexpr FamilySpec kNodeBusy{"gpuattr_node_devices_busy", MetricType::kGauge,
                               "Devices seen on the node with utilisation >= 5% or a pod on them."};
constexpr FamilySpec kNodeSeen{"gpuattr_node_devices_seen", MetricType::kGauge,
                               "Devices (whole GPUs and MIG slices) the exporters reported on "
                               "the node."};
constexpr FamilySpec kResourceAllocatable{
    "gpuattr_node_resource_allocatable", MetricType::kGauge,
    "Node allocatable of the resource (DRA: devices the node's ResourceSlices publish)."};
constexpr FamilySpec kResourceRequested{
    "gpuattr_node_resource_requested", MetricType::kGauge,
    "Amount of the resource held by pods bound to the node (DRA: allocated devices)."};
constexpr FamilySpec kResourceFree{"gpuattr_node_resource_free", MetricType::kGauge,
                                   "max(0, allocatable - requested) of the resource on the node "
                                   "(MIG: free slices of that profile)."};
constexpr FamilySpec kPendingSeconds{"gpuattr_pending_pod_seconds", MetricType::kGauge,
                                     "Seconds since the unscheduled GPU pod was created."};
constexpr FamilySpec kPendingHint{
    "gpuattr_pending_pod_hint", MetricType::kGauge,
    "Always 1: why the unscheduled GPU pod waits. hint: resource_not_offered, mig_partitioned, "
    "exceeds_node_max, dra_no_device, dra_exceeds_node_max, waiting_for_free_device; message "
    "says it for people without changing numbers, so the series survives a count changing (the "
    "offers, limits and idle pods holding the resource are on the status page)."};

constexpr FamilySpec kFamilies[] = {
    kPodRequested,      kNamespaceRequested, kPodReplicas,     kNamespaceReplicas,
    kNamespacePending,  kNodeCapacity,       kNodeAllocatable, kNodeUnhealthy,
    kNodeRequested,     kNodeBusy,           kNodeSeen,        kResourceAllocatable,
    kResourceRequested, kResourceFree,       kPendingSeconds,  kPendingHint};

void Build(const model::Snapshot& s, FamilyWriter& w) {
  for (const model::ClusterSnapshot& c : s.clusters)
    if (c.latest.output) WriteAllocation(c.latest.output->allocation, w);
}

Labels NodeLabels(const std::string& cluster, const std::string& node) {
  return Labels{{"cluster", cluster}, {"node", node}};
}

Labels WithResource(Labels l, std::string_view resource) {
  l.emplace("resource", resource);
  return l;
}

void AddCount(FamilyWriter& w, const FamilySpec& spec, const Labels& labels,
              const std::optional<int64_t>& value) {
  if (value) w.Add(spec, labels, static_cast<double>(*value));
}

}  // namespace

void WriteAllocation(const allocation::Allocation& a, FamilyWriter& w) {
  for (const allocation::PodRequest& p : a.pods)
    for (const auto& [resource, count] : p.requested)
      w.Add(kPodRequested, WithResource(PodLabels(a.cluster, p.pod), resource),
            static_cast<double>(count));
  for (const allocation::NamespaceAllocation& ns : a.namespaces)
    for (const auto& [resource, count] : ns.requested)
      w.Add(kNamespaceRequested,
            Labels{{"cluster", a.cluster}, {"namespace", ns.name}, {"resource", resource}},
            static_cast<double>(count));
  for (const allocation::PodRequest& p : a.pods)
    for (const auto& [resource, count] : p.replicas)
      w.Add(kPodReplicas, WithResource(PodLabels(a.cluster, p.pod), resource),
            static_cast<double>(count));
  for (const allocation::NamespaceAllocation& ns : a.namespaces)
    for (const auto& [resource, count] : ns.replicas)
      w.Add(kNamespaceReplicas,
            Labels{{"cluster", a.cluster}, {"namespace", ns.name}, {"resource", resource}},
            static_cast<double>(count));
  for (const allocation::NamespaceAllocation& ns : a.namespaces)
    w.Add(kNamespacePending, Labels{{"cluster", a.cluster}, {"namespace", ns.name}},
          static_cast<double>(ns.pending_pods));

  for (const allocation::NodeAllocation& n : a.nodes)
    AddCount(w, kNodeCapacity, NodeLabels(a.cluster, n.node), n.capacity);
  for (const allocation::NodeAllocation& n : a.nodes)
    AddCount(w, kNodeAllocatable, NodeLabels(a.cluster, n.node), n.allocatable);
  for (const allocation::NodeAllocation& n : a.nodes)
    AddCount(w, kNodeUnhealthy, NodeLabels(a.cluster, n.node), n.unhealthy);
  for (const allocation::NodeAllocation& n : a.nodes)
    w.Add(kNodeRequested, NodeLabels(a.cluster, n.node), static_cast<double>(n.requested));
  for (const allocation::NodeAllocation& n : a.nodes)
    w.Add(kNodeBusy, NodeLabels(a.cluster, n.node), static_cast<double>(n.busy));
  for (const allocation::NodeAllocation& n : a.nodes)
    w.Add(kNodeSeen, NodeLabels(a.cluster, n.node), static_cast<double>(n.seen));

  for (const allocation::NodeResource& r : a.node_resources)
    w.Add(kResourceAllocatable, WithResource(NodeLabels(a.cluster, r.node), r.resource),
          static_cast<double>(r.allocatable));
  for (const allocation::NodeResource& r : a.node_resources)
    w.Add(kResourceRequested, WithResource(NodeLabels(a.cluster, r.node), r.resource),
          static_cast<double>(r.requested));
  for (const allocation::NodeResource& r : a.node_resources)
    w.Add(kResourceFree, WithResource(NodeLabels(a.cluster, r.node), r.resource),
          static_cast<double>(r.free));

  for (const allocation::PendingPod& p : a.pending)
    if (p.age_seconds) w.Add(kPendingSeconds, PodLabels(a.cluster, p.pod), *p.age_seconds);
  for (const allocation::PendingPod& p : a.pending) {
    Labels l = PodLabels(a.cluster, p.pod);
    if (!p.hint.resource.empty()) l.emplace("resource", p.hint.resource);
    l.emplace("hint", p.hint.code);
    l.emplace("message", p.hint.message);
    w.Add(kPendingHint, std::move(l), 1);
  }
}

constinit const FamilyGroup kAllocationGroup{"allocation", kFamilies, &Build};

}  // namespace gpuattr::metrics
