// Compact, plain records of the Kubernetes objects gpuattr reads: only the fields discovery and
// attribution need (docs/design.md#discovery, docs/design.md#attribution and
// docs/design.md#kubernetes-access), so that a 15,000-pod cluster stays small in memory.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/kube/hami_register.h"
#include "gpuattr/kube/pod_id.h"

namespace gpuattr::kube {

// Extended resources only (everything except cpu, memory, ephemeral-storage, hugepages-*), in
// whole units: "nvidia.com/gpu" → 1, "nvidia.com/mig-1g.10gb" → 7.
using ResourceList = std::map<std::string, int64_t>;

struct ContainerPort {
  std::string name;  // may be empty
  int32_t container_port = 0;
};

struct Container {
  std::string name;
  std::string image;
  std::vector<ContainerPort> ports;
  ResourceList requests;
  ResourceList limits;
  std::string restart_policy;  // init containers only: "Always" marks a sidecar; else empty

  bool IsSidecar() const { return restart_policy == "Always"; }
};

// pod.spec.resourceClaims[] joined with status.resourceClaimStatuses[].
struct PodResourceClaim {
  std::string name;        // the pod-level name of the claim
  std::string claim_name;  // the ResourceClaim object's name; empty until generated from a template
};

struct PodCondition {
  bool present = false;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;  // e.g. "Unschedulable"
  std::string message;
};

// metadata.ownerReferences[]: who created the pod. A controller reference of an apps/v1
// DaemonSet in an exporter namespace is what lets an exporter speak for its node's devices
// (docs/design.md#trust); anyone who may create a pod may write any owner reference into it, so
// every field counts.
struct OwnerReference {
  std::string kind;  // "DaemonSet", "ReplicaSet", "StatefulSet", "Job", "Node", ...
  std::string name;
  bool controller = false;
  std::string api_version;  // "apps/v1", "batch/v1", "v1", ...

  bool operator==(const OwnerReference&) const = default;
};

struct Pod {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string node_name;  // empty until scheduled
  std::string phase;      // Pending, Running, Succeeded, Failed, Unknown
  // status.podIP (IPv4 or IPv6, unbracketed): where a direct scrape goes
  // (docs/deploy.md#direct-scraping). Empty until the pod has one. Only ever taken from the watched
  // object, never from a body.
  std::string ip;
  int64_t creation_unix = 0;
  std::map<std::string, std::string> labels;
  // Only prometheus.io/* and hami.io/vgpu-devices-allocated are kept.
  std::map<std::string, std::string> annotations;
  std::vector<OwnerReference> owners;
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  bool all_containers_ready = false;  // every app container reports ready
  std::vector<PodResourceClaim> resource_claims;
  PodCondition scheduled;  // the PodScheduled condition

  std::string Key() const { return namespace_ + "/" + name; }
  PodId Id() const { return {namespace_, name}; }
  // The owner of that kind, or nullptr.
  const OwnerReference* OwnedBy(std::string_view kind) const;
  // The owner reference with `controller: true` (Kubernetes allows one), or nullptr.
  const OwnerReference* Controller() const;
};

struct Node {
  std::string name;
  std::string uid;
  std::string resource_version;
  std::map<std::string, std::string>
      labels;  // all of them (gpu.replicas, mig.strategy, product, ...)
  // hami.io/node-nvidia-register, read when the node is decoded (kube/hami_register.h); no other
  // annotation of a node is kept.
  std::optional<HamiRegistration> hami_registration;
  ResourceList capacity;
  ResourceList allocatable;
  bool unschedulable = false;

  const std::string& Key() const { return name; }
};

// A namespace: only its labels matter (teams for the bill: accounting.namespace_labels).
struct Namespace {
  std::string name;
  std::string resource_version;
  std::map<std::string, std::string> labels;

  const std::string& Key() const { return name; }
};

struct ServicePort {
  std::string name;
  int32_t port = 0;
};

struct Service {
  std::string namespace_;
  std::string name;
  std::string resource_version;
  std::map<std::string, std::string> labels;
  std::vector<ServicePort> ports;
  // spec.clusterIP: "None" for a headless service, empty when not set.
  std::string cluster_ip;

  std::string Key() const { return namespace_ + "/" + name; }
};

// resource.k8s.io (DRA, docs/design.md#dra), decoded the same from v1, v1beta2 and v1beta1.
// One device a driver publishes in a ResourceSlice.
struct DraDevice {
  std::string name;          // "gpu-0", unique within the slice's pool
  std::string type;          // attribute "type": "gpu" or "mig" for gpu.nvidia.com; may be empty
  std::string uuid;          // attribute "uuid"
  std::string parent_uuid;   // attribute "parentUUID" (MIG devices: the card's UUID)
  std::string product_name;  // attribute "productName"
  std::string profile;       // attribute "profile" (MIG devices: "3g.40gb")
  std::optional<int64_t> memory_bytes;  // capacity "memory"
};

struct ResourceSlice {
  std::string name;
  std::string resource_version;
  std::string driver;     // "gpu.nvidia.com"
  std::string node_name;  // empty for slices not bound to one node
  std::string pool;
  std::vector<DraDevice> devices;

  const std::string& Key() const { return name; }
};

// spec.devices.requests[] (v1/v1beta2 `exactly`, v1beta1 inline).
struct DraRequest {
  std::string name;
  std::string device_class_name;  // "gpu.nvidia.com", "mig.nvidia.com", ...
  std::string allocation_mode;    // "ExactCount" (default) or "All"
  int64_t count = 1;              // ExactCount only
};

// status.allocation.devices.results[]: which device of which pool serves a request.
struct DraAllocatedDevice {
  std::string request;
  std::string driver;
  std::string pool;
  std::string device;  // DraDevice::name
};

// status.reservedFor[]: the consumers (pods) holding the claim.
struct DraConsumer {
  std::string resource;  // "pods"
  std::string name;
  std::string uid;
};

struct ResourceClaim {
  std::string namespace_;
  std::string name;
  std::string resource_version;
  std::vector<DraRequest> requests;
  bool allocated = false;  // status.allocation present
  std::vector<DraAllocatedDevice> results;
  std::vector<DraConsumer> reserved_for;

  std::string Key() const { return namespace_ + "/" + name; }
};

// An immutable view of one cluster's objects at one moment. `revision` grows with every change
// the cache applied, so equal revisions mean equal contents.
struct ClusterObjects {
  uint64_t revision = 0;
  std::map<std::string, Pod> pods;          // "namespace/name"
  std::map<std::string, Node> nodes;        // name
  std::map<std::string, Service> services;  // "namespace/name"
  // DRA objects; empty when the cluster serves no resource.k8s.io version (or DRA is not watched).
  std::map<std::string, ResourceSlice> resource_slices;  // name
  std::map<std::string, ResourceClaim> resource_claims;  // "namespace/name"
  // Empty when the namespaces cannot be listed (403) or are not watched.
  std::map<std::string, Namespace> namespaces;  // name

  const Pod* FindPod(std::string_view ns, std::string_view name) const;
  const Node* FindNode(std::string_view name) const;
  const Service* FindService(std::string_view ns, std::string_view name) const;
};

// True for resources gpuattr keeps: not cpu, memory, ephemeral-storage, pods or hugepages-*.
bool IsExtendedResource(std::string_view name);

}  // namespace gpuattr::kube
