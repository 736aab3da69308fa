// Allocate: pods' requests, namespaces, GPU nodes and pending pods with hints, in one pure pass.
#include <algorithm>
#include <optional>

#include "gpuattr/allocation/allocation.h"
#include "gpuattr/allocation/dra.h"
#include "gpuattr/allocation/nodes.h"
#include "gpuattr/allocation/pending.h"
#include "gpuattr/allocation/resources.h"
#include "gpuattr/attribution/node_shape.h"

namespace gpuattr::allocation {
namespace {

struct Unscheduled {
  PendingPod pending;
  ResourceCounts extended;
  std::vector<DraWant> wants;
};

std::vector<NamespaceAllocation> Namespaces(const std::vector<PodRequest>& holders,
                                            const std::vector<PendingPod>& pending) {
  std::map<std::string, NamespaceAllocation> by_name;
  for (const PodRequest& p : holders) {
    NamespaceAllocation& ns = by_name[p.pod.namespace_];
    for (const auto& [resource, count] : p.requested) ns.requested[resource] += count;
    for (const auto& [resource, count] : p.replicas) ns.replicas[resource] += count;
  }
  for (const PendingPod& p : pending) ++by_name[p.pod.namespace_].pending_pods;
  std::vector<NamespaceAllocation> out;
  out.reserve(by_name.size());
  for (auto& [name, ns] : by_name) {
    ns.name = name;
    out.push_back(std::move(ns));
  }
  return out;
}

// What a pod holding resources holds (its effective requests and its DRA devices); none when
// it holds no tracked resource.
// What a pod holds: devices (extended resources and DRA devices) and, apart, time-slicing replicas.
std::optional<PodRequest> Held(const kube::Pod& pod, const kube::ClusterObjects& objects,
                               const DraView& dra) {
  PodRequest held{{pod.namespace_, pod.name}, pod.node_name, {}, {}};
  const kube::Node* node = objects.FindNode(pod.node_name);
  for (auto& [resource, count] : EffectiveRequests(pod))
    (CountsReplicas(node, resource) ? held.replicas : held.requested)[resource] = count;
  if (auto it = dra.pod_held.find(held.pod); it != dra.pod_held.end())
    for (const auto& [resource, count] : it->second) held.requested[resource] += count;
  if (held.requested.empty() && held.replicas.empty()) return std::nullopt;
  return held;
}

}  // namespace

Allocation Allocate(const AllocationInput& input) {
  const kube::ClusterObjects& objects = input.objects;
  Allocation out;
  out.cluster = input.cluster;
  const DraView dra = ReadDra(objects);

  std::vector<Unscheduled> unscheduled;
  for (const auto& [key, pod] : objects.pods) {
    const kube::PodId id{pod.namespace_, pod.name};
    if (HoldsResources(pod)) {
      if (auto held = Held(pod, objects, dra)) out.pods.push_back(std::move(*held));
    } else if (IsUnscheduled(pod)) {
      ResourceCounts extended = EffectiveRequests(pod);
      PodClaims claims = ReadPodClaims(pod, objects);
      if (extended.empty() && !claims.gpu) continue;  // not a GPU pod
      Unscheduled u;
      u.pending.pod = id;
      if (pod.creation_unix > 0)
        u.pending.age_seconds =
            std::max(0.0, input.now_unix - static_cast<double>(pod.creation_unix));
      u.pending.requested = extended;
      for (const DraWant& want : claims.wants)
        u.pending.requested[DraWantResource(want)] += want.all ? 1 : want.count;
      u.extended = std::move(extended);
      u.wants = std::move(claims.wants);
      unscheduled.push_back(std::move(u));
    }
  }
  std::sort(out.pods.begin(), out.pods.end(),
            [](const PodRequest& a, const PodRequest& b) { return a.pod < b.pod; });

  NodeView nodes = BuildNodes(objects, input.attribution, dra, out.pods);
  out.nodes = std::move(nodes.nodes);
  for (const NodeAllocation& n : out.nodes)
    if (const kube::Node* node = objects.FindNode(n.node)) {
      const std::string text = attribution::UnrecognisedText(attribution::NodeShapeOf(*node));
      if (!text.empty()) out.shape_notes.push_back("node " + n.node + ": " + text);
    }
  out.node_resources = std::move(nodes.node_resources);

  std::map<kube::PodId, bool> idle;
  for (const attribution::Pod& p : input.attribution.pods)
    if (p.idle) idle[p.id] = *p.idle;
  Offer offer;
  if (input.offer_objects && !unscheduled.empty()) {
    // One shard's objects: what the cluster offers is read from the whole cluster's objects.
    const kube::ClusterObjects& all = *input.offer_objects;
    const DraView all_dra = ReadDra(all);
    std::vector<PodRequest> all_holders;
    for (const auto& [key, pod] : all.pods)
      if (HoldsResources(pod))
        if (auto held = Held(pod, all, all_dra)) all_holders.push_back(std::move(*held));
    const NodeView all_nodes = BuildNodes(all, input.attribution, all_dra, all_holders);
    offer = SummariseOffer(all_nodes.node_resources, all_dra, all_holders, idle);
    offer.gpu_slices = GpuSlicesOffered(all);
  } else {
    offer = SummariseOffer(out.node_resources, dra, out.pods, idle);
    if (!unscheduled.empty()) offer.gpu_slices = GpuSlicesOffered(objects);
  }
  offer.idle_scope = input.idle_scope;
  for (Unscheduled& u : unscheduled) {
    u.pending.hint = HintFor(u.extended, u.wants, offer);
    out.pending.push_back(std::move(u.pending));
  }
  std::sort(out.pending.begin(), out.pending.end(),
            [](const PendingPod& a, const PendingPod& b) { return a.pod < b.pod; });

  out.namespaces = Namespaces(out.pods, out.pending);
  return out;
}

}  // namespace gpuattr::allocation
