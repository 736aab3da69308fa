// Namespaces group: what each namespace's pods use, summed (memory and power equal the sum of
// the namespace's pod series).
#include "gpuattr/metrics/namespaces.h"

#include "gpuattr/metrics/attribution_labels.h"

namespace gpuattr::metrics {
namespace {

constexpr FamilySpec kDevicesInUse{
    "gpuattr_namespace_devices_in_use", MetricType::kGauge,
    "Distinct devices (whole GPUs or MIG slices) the namespace's pods use."};
constexpr FamilySpec kGpuEq{
    "gpuattr_namespace_gpu_equivalents", MetricType::kGauge,
    "Sum of gpuattr_pod_gpu_equivalents over the namespace's pods (whole GPU 1, MIG slice g / G "
    "of its card model, times the pod's share of a shared device)."};
constexpr FamilySpec kGpuPods{
    "gpuattr_namespace_gpu_pods", MetricType::kGauge,
    "Pods of the namespace holding GPU resources: nvidia.com/ devices or time-slicing replicas, "
    "or gpu.nvidia.com DRA devices (Running, or Pending and bound to a node). A pod using a GPU "
    "without a request is not one (see gpuattr_pod_unrequested_gpu_use)."};
constexpr FamilySpec kUtil{
    "gpuattr_namespace_utilization_ratio", MetricType::kGauge,
    "GPU-equivalent-weighted mean of gpuattr_pod_utilization_ratio over the namespace's pods, "
    "0..1."};
constexpr FamilySpec kMemUsed{"gpuattr_namespace_memory_used_bytes", MetricType::kGauge,
                              "Sum of gpuattr_pod_memory_used_bytes over the namespace's pods."};
constexpr FamilySpec kMemIdle{
    "gpuattr_namespace_memory_idle_bytes", MetricType::kGauge,
    "GPU memory in bytes held by the namespace's idle pods (utilisation below the idle threshold, "
    "default 0.05, and memory at least the idle threshold, default 256 MiB)."};
constexpr FamilySpec kIdlePods{
    "gpuattr_namespace_idle_pods", MetricType::kGauge,
    "Idle pods of the namespace (see gpuattr_namespace_memory_idle_bytes)."};
constexpr FamilySpec kPower{"gpuattr_namespace_power_watts", MetricType::kGauge,
                            "Sum of gpuattr_pod_power_watts over the namespace's pods."};

constexpr FamilySpec kFamilies[] = {kDevicesInUse, kGpuEq,   kGpuPods,  kUtil,
                                    kMemUsed,      kMemIdle, kIdlePods, kPower};

void Build(const model::Snapshot& s, FamilyWriter& w) {
  for (const model::ClusterSnapshot& c : s.clusters)
    if (c.latest.output) WriteNamespaces(c.latest.output->attribution, w);
}

Labels NsLabels(const attribution::Attribution& a, const attribution::Namespace& n) {
  return Labels{{"cluster", a.cluster}, {"namespace", n.name}};
}

}  // namespace

void WriteNamespaces(const attribution::Attribution& a, FamilyWriter& w) {
  for (const auto& n : a.namespaces)
    w.Add(kDevicesInUse, NsLabels(a, n), static_cast<double>(n.devices_in_use));
  for (const auto& n : a.namespaces) w.Add(kGpuEq, NsLabels(a, n), n.gpu_equivalents);
  for (const auto& n : a.namespaces)
    w.Add(kGpuPods, NsLabels(a, n), static_cast<double>(n.gpu_pods));
  for (const auto& n : a.namespaces) AddKnown(w, kUtil, NsLabels(a, n), n.utilization);
  for (const auto& n : a.namespaces) AddKnown(w, kMemUsed, NsLabels(a, n), n.memory_used_bytes);
  for (const auto& n : a.namespaces) AddKnown(w, kMemIdle, NsLabels(a, n), n.memory_idle_bytes);
  for (const auto& n : a.namespaces)
    w.Add(kIdlePods, NsLabels(a, n), static_cast<double>(n.idle_pods));
  for (const auto& n : a.namespaces) AddKnown(w, kPower, NsLabels(a, n), n.power_watts);
}

constinit const FamilyGroup kNamespacesGroup{"namespaces", kFamilies, &Build};

}  // namespace gpuattr::metrics
