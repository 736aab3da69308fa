// The result of attribution: plain structs the metrics groups turn into metric families and the
// report into rows.
// std::optional means unknown (published as an absent series, never as 0).
#pragma once

#include <compare>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/health/health.h"
#include "gpuattr/kube/pod_id.h"

namespace gpuattr::attribution {

// (node, gpu, gpu_instance); the cluster is the Attribution's. gpu_instance is the GPU_I_ID of a
// MIG slice, absent for a whole GPU ("0" is a valid instance).
struct DeviceId {
  std::string node;
  std::string gpu;
  std::optional<std::string> gpu_instance;
  auto operator<=>(const DeviceId&) const = default;
  bool operator==(const DeviceId&) const = default;
};
std::string DeviceIdText(const DeviceId& id);  // "node/0" or "node/0:7", for messages

// How the pods of a node were found (docs/design.md#tiers).
enum class Tier {
  kProcess,    // a per-process exporter reports the node
  kDcgmPod,    // dcgm-exporter with pod labels
  kDcgmNoPod,  // dcgm-exporter without pod labels: devices and candidate pods only
};

enum class Sharing { kExclusive, kMig, kTimeSliced, kUnrequested, kMps, kHami };
// "exclusive", "mig", "time_sliced", "unrequested", "mps", "hami"
std::string_view SharingName(Sharing sharing);
// Pods share the device (time-slicing, MPS or HAMi).
inline bool IsShared(Sharing s) {
  return s == Sharing::kTimeSliced || s == Sharing::kMps || s == Sharing::kHami;
}

enum class Method { kProcess, kDcgmPod, kEvenSplit };
std::string_view MethodName(Method method);  // "process", "dcgm_pod", "even_split"

struct Device {
  DeviceId id;
  std::string uuid;  // the card's UUID (MIG lines carry the parent's)
  std::string model;
  std::string mig_profile;  // "1g.10gb" for slices, else empty
  Tier tier = Tier::kDcgmPod;
  size_t card = 0;  // index into Attribution::cards

  std::optional<double> utilization;  // GPU_UTIL/100, else PROF_GR_ENGINE_ACTIVE
  std::optional<double> sm_active;
  std::optional<double> tensor_active;
  std::optional<double> dram_active;
  std::optional<double> memory_used_bytes;
  std::optional<double> memory_total_bytes;  // FB_TOTAL, else used + free
  std::optional<double> power_watts;         // card share: whole card, or card × g/Σg
  std::optional<double> temperature_celsius;
  double gpu_equivalents =
      1;  // 1 for a whole GPU, g/G for a slice (G: the model's slice count, else Σg)

  std::optional<size_t> pods;  // pods attributed; unknown without pod information
  // dcgm without pod labels: DRA's holders of the device's UUID when DRA knows it, else the GPU
  // pods of the node.
  std::vector<kube::PodId> candidate_pods;
  // The card's (MIG slices inherit it today); unknown without dcgm. gpuattr_device_health
  // publishes a slice's own series only where it differs from Card::health.
  health::DeviceHealth health;
};

// A physical GPU: node + parent UUID (else card index).
struct Card {
  std::string node;
  std::string gpu;
  std::string uuid;
  std::string model;
  std::optional<double> power_watts;  // max POWER over all the card's lines, counted once
  std::vector<size_t> devices;        // indexes into Attribution::devices
  health::DeviceHealth health;        // from all the card's lines; unknown without dcgm
};

// One pod on one device.
struct PodDevice {
  kube::PodId pod;
  size_t device = 0;  // index into Attribution::devices
  Sharing sharing = Sharing::kExclusive;
  Method method = Method::kDcgmPod;
  double share = 1;  // fraction of the device given to the pod (power, GPU-equivalents)
  std::optional<double> utilization;
  std::optional<double> memory_used_bytes;
  std::optional<double> memory_total_bytes;
  std::optional<double> power_watts;
  double gpu_equivalents = 0;
};

struct Pod {
  kube::PodId id;
  std::string node;
  Method method = Method::kDcgmPod;         // even_split when any of its devices was split evenly
  std::optional<double> utilization;        // process tier: max; dcgm: mean over devices
  std::optional<double> memory_used_bytes;  // Σ over its devices
  std::optional<double> memory_total_bytes;
  std::optional<double> power_watts;
  size_t devices = 0;
  double gpu_equivalents = 0;
  bool unrequested_gpu_use = false;  // uses a GPU without requesting any GPU resource
  std::optional<bool> idle;  // util < threshold and memory ≥ threshold; unknown if either is
};

struct Namespace {
  std::string name;
  size_t devices_in_use = 0;  // distinct devices its pods use
  double gpu_equivalents = 0;
  size_t gpu_pods = 0;                // pods holding GPU resources or DRA GPU devices
  std::optional<double> utilization;  // GPU-equivalent-weighted mean of its pods
  std::optional<double> memory_used_bytes;
  std::optional<double> memory_idle_bytes;  // memory held by idle pods
  size_t idle_pods = 0;
  std::optional<double> power_watts;
};

struct NodePower {
  std::string node;
  Tier tier = Tier::kDcgmPod;
  std::optional<double> power_watts;               // Σ its cards
  std::optional<double> unattributed_power_watts;  // node − Σ pods
};

struct Attribution {
  std::string cluster;
  std::vector<Device> devices;         // sorted by id
  std::vector<Card> cards;             // sorted by (node, gpu, uuid)
  std::vector<Pod> pods;               // sorted by id
  std::vector<PodDevice> pod_devices;  // sorted by (pod, device)
  std::vector<Namespace> namespaces;   // sorted by name
  std::vector<NodePower> nodes;        // sorted by name; nodes where a device was seen
};

}  // namespace gpuattr::attribution
