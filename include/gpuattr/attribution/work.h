// Working state of one attribution run, shared by its steps (devices → power → pods →
// namespaces). Everything is keyed by identity in ordered maps, so the final vectors come out
// sorted and indexes are assigned only once, at the end (Finish in attribute.cc).
#pragma once

#include <compare>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gpuattr/attribution/attribution.h"
#include "gpuattr/attribution/kube_view.h"
#include "gpuattr/attribution/types.h"

namespace gpuattr::attribution {

// A physical card: node + parent UUID, else "#" + card index when the exporter gave no UUID.
struct CardKey {
  std::string node;
  std::string uuid_or_index;
  auto operator<=>(const CardKey&) const = default;
  bool operator==(const CardKey&) const = default;
};

struct DeviceWork {
  Device device;  // device.card is set by Finish
  CardKey card;
  std::vector<const sources::DcgmRecord*> dcgm;  // every dcgm line of this device
  size_t index = 0;                              // in Attribution::devices, set by Finish
};

struct CardWork {
  Card card;                         // card.devices is set by Finish
  std::vector<DeviceWork*> devices;  // into Work::devices (map nodes do not move)
};

// What one node's exporters said, gathered over all exporters scheduled there.
struct NodeReadings {
  std::vector<const sources::DcgmRecord*> dcgm;
  std::vector<const sources::ProcessReading*> processes;
  std::vector<const sources::ProcessDeviceReading*> process_devices;
  bool has_process_exporter = false;
  NodeSharing sharing;  // what the node's object says is time-sliced (kube_view.h)
  Tier tier = Tier::kDcgmPod;
};

struct Work {
  std::map<std::string, NodeReadings> nodes;
  std::map<DeviceId, DeviceWork> devices;
  std::map<CardKey, CardWork> cards;
  std::map<std::pair<kube::PodId, DeviceId>, PodDevice> links;  // link.device is set by Finish
  std::map<kube::PodId, Pod> pods;
};

// devices.cc: readings → nodes → devices and cards with their gauges.
void GroupByNode(const AttributionInput& input, Work& work);
void BuildDevices(Work& work);
// The whole GPU of `node` that a per-process exporter's reading names: the same UUID; by card
// index only when one side has no UUID. nullptr when none (a per-process exporter does not name
// MIG slices).
DeviceWork* MatchWholeGpu(Work& work, const std::string& node, const std::string& uuid,
                          const std::string& gpu);

// power.cc: card power, device power shares and GPU-equivalents; node power after pods.
int ComputeSize(std::string_view mig_profile);  // "3g.40gb" → 3; unparseable → 1
void SplitCardPower(Work& work);
std::vector<NodePower> NodePowers(const Work& work);

// pods.cc: pod links per node tier, then per-pod totals.
void BuildPodLinks(const AttributionInput& input, Work& work);
void SummarisePods(const AttributionInput& input, Work& work);

// namespaces.cc (the links' device indexes set)
std::vector<Namespace> SummariseNamespaces(
    const AttributionInput& input, const std::map<kube::PodId, Pod>& pods,
    const std::map<std::pair<kube::PodId, DeviceId>, PodDevice>& links);

// Helpers shared by the steps.
inline void MaxInto(std::optional<double>& dst, const std::optional<double>& src) {
  if (src && (!dst || *src > *dst)) dst = src;
}
inline void AddInto(std::optional<double>& dst, const std::optional<double>& src) {
  if (src) dst = dst.value_or(0) + *src;
}
std::optional<double> ClampRatio(std::optional<double> v);

}  // namespace gpuattr::attribution
