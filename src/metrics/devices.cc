// Devices group: one series per device (whole GPU or MIG slice) and per card.
#include "gpuattr/metrics/devices.h"

#include "gpuattr/attribution/types.h"
#include "gpuattr/metrics/attribution_labels.h"

namespace gpuattr::metrics {
namespace {

constexpr FamilySpec kInfo{
    "gpuattr_device_info", MetricType::kGauge,
    "Always 1 for every GPU device (a whole GPU, or a MIG slice with gpu_instance = GPU_I_ID) "
    "seen on any DCGM_FI_* or per-process exporter line; node is the exporter pod's node; uuid "
    "is the card's (MIG slices carry the parent's), model is modelName, mig_profile is "
    "GPU_I_PROFILE."};
constexpr FamilySpec kUtil{"gpuattr_device_utilization_ratio", MetricType::kGauge,
                           "Device busy ratio 0..1: DCGM_FI_DEV_GPU_UTIL/100 when exported, else "
                           "DCGM_FI_PROF_GR_ENGINE_ACTIVE (never added); per-process exporter: "
                           "gpu_total_utilization_percent/100. Max over repeated lines."};
constexpr FamilySpec kSm{
    "gpuattr_device_sm_active_ratio", MetricType::kGauge,
    "Ratio 0..1 of time at least one warp was active on an SM: DCGM_FI_PROF_SM_ACTIVE, max over "
    "repeated lines."};
constexpr FamilySpec kTensor{
    "gpuattr_device_tensor_active_ratio", MetricType::kGauge,
    "Ratio 0..1 of cycles the tensor pipes were active: DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, max "
    "over repeated lines."};
constexpr FamilySpec kDram{
    "gpuattr_device_dram_active_ratio", MetricType::kGauge,
    "Ratio 0..1 of cycles device memory was busy: DCGM_FI_PROF_DRAM_ACTIVE, max over repeated "
    "lines."};
constexpr FamilySpec kMemUsed{
    "gpuattr_device_memory_used_bytes", MetricType::kGauge,
    "Device memory used in bytes: DCGM_FI_DEV_FB_USED (max over repeated lines); per-process "
    "exporter: sum of gpu_process_memory_bytes on the device."};
constexpr FamilySpec kMemTotal{
    "gpuattr_device_memory_total_bytes", MetricType::kGauge,
    "Device memory in bytes: DCGM_FI_DEV_FB_TOTAL, else FB_USED + FB_FREE; per-process "
    "exporter: gpu_total_memory_bytes."};
constexpr FamilySpec kPower{
    "gpuattr_device_power_watts", MetricType::kGauge,
    "Device share of its card's power in watts: the whole card for a whole GPU; card W x g / "
    "sum of g over the card's reported MIG slices (g = leading number of GPU_I_PROFILE, 1 when "
    "unparseable). Devices of a card sum to gpuattr_card_power_watts."};
constexpr FamilySpec kTemp{
    "gpuattr_device_temperature_celsius", MetricType::kGauge,
    "GPU temperature in degrees Celsius: DCGM_FI_DEV_GPU_TEMP (MIG slices show their card's), "
    "or gpu_temperature_celsius; max over repeated lines."};
constexpr FamilySpec kPods{
    "gpuattr_device_pods", MetricType::kGauge,
    "Pods attributed to the device (dcgm pod labels, or per-process exporter processes); absent "
    "when the exporter gives no pod information."};
constexpr FamilySpec kCandidate{
    "gpuattr_device_candidate_pod", MetricType::kGauge,
    "Always 1: a pod that may be using the device, on nodes whose dcgm-exporter has no pod "
    "labels (the node's pods holding nvidia.com/ resources). No owner is guessed: the device's "
    "power stays unattributed."};
constexpr FamilySpec kCardPower{
    "gpuattr_card_power_watts", MetricType::kGauge,
    "Physical card power in watts: max DCGM_FI_DEV_POWER_USAGE (or gpu_power_usage_watts) over "
    "all lines of the card (node + parent UUID), counted once however many MIG slices or pods "
    "repeat it."};

constexpr FamilySpec kFamilies[] = {kInfo,     kUtil,  kSm,   kTensor, kDram,      kMemUsed,
                                    kMemTotal, kPower, kTemp, kPods,   kCandidate, kCardPower};

void Build(const model::Snapshot& s, FamilyWriter& w) {
  for (const model::ClusterSnapshot& c : s.clusters)
    if (c.latest.output) WriteDevices(c.latest.output->attribution, w);
}

}  // namespace

void WriteDevices(const attribution::Attribution& a, FamilyWriter& w) {
  for (const attribution::Device& d : a.devices) {
    Labels info = DeviceLabels(a.cluster, d.id);
    if (!d.uuid.empty()) info.emplace("uuid", d.uuid);
    if (!d.model.empty()) info.emplace("model", d.model);
    if (!d.mig_profile.empty()) info.emplace("mig_profile", d.mig_profile);
    w.Add(kInfo, std::move(info), 1);
  }
  struct Gauge {
    const FamilySpec& spec;
    std::optional<double> attribution::Device::*field;
  };
  const Gauge gauges[] = {{kUtil, &attribution::Device::utilization},
                          {kSm, &attribution::Device::sm_active},
                          {kTensor, &attribution::Device::tensor_active},
                          {kDram, &attribution::Device::dram_active},
                          {kMemUsed, &attribution::Device::memory_used_bytes},
                          {kMemTotal, &attribution::Device::memory_total_bytes},
                          {kPower, &attribution::Device::power_watts},
                          {kTemp, &attribution::Device::temperature_celsius}};
  for (const Gauge& g : gauges)
    for (const attribution::Device& d : a.devices)
      AddKnown(w, g.spec, DeviceLabels(a.cluster, d.id), d.*g.field);
  for (const attribution::Device& d : a.devices)
    if (d.pods) w.Add(kPods, DeviceLabels(a.cluster, d.id), static_cast<double>(*d.pods));
  for (const attribution::Device& d : a.devices)
    for (const kube::PodId& p : d.candidate_pods) {
      Labels l = DeviceLabels(a.cluster, d.id);
      l.emplace("namespace", p.namespace_);
      l.emplace("pod", p.name);
      w.Add(kCandidate, std::move(l), 1);
    }
  for (const attribution::Card& c : a.cards) {
    if (!c.power_watts) continue;
    Labels l{{"cluster", a.cluster}, {"node", c.node}, {"gpu", c.gpu}};
    if (!c.uuid.empty()) l.emplace("uuid", c.uuid);
    if (!c.model.empty()) l.emplace("model", c.model);
    w.Add(kCardPower, std::move(l), *c.power_watts);
  }
}

constinit const FamilyGroup kDevicesGroup{"devices", kFamilies, &Build};

}  // namespace gpuattr::metrics
