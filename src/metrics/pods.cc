// Pods group: which pod uses which device, and each pod's attributed usage and power.
#include "gpuattr/metrics/pods.h"

#include "gpuattr/metrics/attribution_labels.h"

namespace gpuattr::metrics {
namespace {

constexpr FamilySpec kPodDevice{
    "gpuattr_pod_device", MetricType::kGauge,
    "Always 1: the pod uses the device. sharing: exclusive (alone on a whole GPU), mig (alone on "
    "a MIG slice), time_sliced (more than one pod on the device, or a node time-slicing that kind "
    "of device: nvidia.com/gpu.shared or nvidia.com/mig-<profile>.shared above 0, or labelled "
    "<resource>.replicas > 1, or GKE time-sharing; a .shared resource at 0 shares nothing), mps "
    "(the device plugin's or GKE's MPS sharing), hami (a HAMi vGPU share of a physical card), "
    "unrequested (seen by a per-process exporter without requesting any GPU)."};
constexpr FamilySpec kUtil{
    "gpuattr_pod_utilization_ratio", MetricType::kGauge,
    "Pod GPU busy ratio 0..1: per-process exporter: max of its processes' "
    "gpu_process_utilization_percent/100; dcgm: mean over its devices of the device (or per-pod) "
    "utilisation."};
constexpr FamilySpec kMemUsed{
    "gpuattr_pod_memory_used_bytes", MetricType::kGauge,
    "GPU memory the pod uses in bytes: sum of its gpu_process_memory_bytes, or of its devices' "
    "FB_USED; on a time-sliced device with the device value repeated for every pod, that value "
    "divided by the number of pods."};
constexpr FamilySpec kMemTotal{
    "gpuattr_pod_memory_total_bytes", MetricType::kGauge,
    "GPU memory of the pod's devices in bytes (sum of device totals; split evenly like memory "
    "used when a time-sliced device's value is repeated for every pod)."};
constexpr FamilySpec kPower{
    "gpuattr_pod_power_watts", MetricType::kGauge,
    "Power attributed to the pod in watts: sum over its devices of the device's power (card W x "
    "g / sum g for MIG slices, whole card otherwise) times the pod's share: 1 when alone, its "
    "memory / the device's total memory when per-process or per-pod memory is known, else 1/k "
    "(method even_split)."};
constexpr FamilySpec kDevices{"gpuattr_pod_devices", MetricType::kGauge,
                              "Devices (whole GPUs or MIG slices) the pod uses."};
constexpr FamilySpec kGpuEq{
    "gpuattr_pod_gpu_equivalents", MetricType::kGauge,
    "Whole-GPU equivalents the pod uses: 1 per whole GPU, g / G per MIG slice (G: the card "
    "model's compute slices, 7 on A100/H100/H200/B200, 4 on A30; else the sum of g of the card's "
    "slices), times the pod's share of a shared device."};
constexpr FamilySpec kAttribution{
    "gpuattr_pod_attribution", MetricType::kGauge,
    "Always 1; method tells how the pod's figures were attributed: process (per-process "
    "exporter), dcgm_pod (dcgm-exporter pod labels), even_split (a shared device divided evenly "
    "because per-pod figures were not known)."};
constexpr FamilySpec kUnrequested{
    "gpuattr_pod_unrequested_gpu_use", MetricType::kGauge,
    "Always 1: a per-process exporter sees the pod on a GPU, but the pod requests no nvidia.com/ "
    "resource and no DRA claim (e.g. NVIDIA_VISIBLE_DEVICES=all)."};

constexpr FamilySpec kInfo{
    "gpuattr_pod_info", MetricType::kGauge,
    "Always 1, one per attributed pod: uid is the pod object's metadata.uid; workload_kind and "
    "workload are the workload rightsizing makes its recommendation for (a Deployment for the pods "
    "of its ReplicaSets, a CronJob for those of its Jobs, any other controller itself, a pod with "
    "no controller kind Pod and its own name). uid, workload_kind and workload are absent when the "
    "pod object is unknown."};

constexpr FamilySpec kFamilies[] = {kPodDevice, kUtil,  kMemUsed,     kMemTotal,    kPower,
                                    kDevices,   kGpuEq, kAttribution, kUnrequested, kInfo};

void Build(const model::Snapshot& s, FamilyWriter& w) {
  for (const model::ClusterSnapshot& c : s.clusters)
    if (c.latest.output) {
      WritePods(c.latest.output->attribution, w);
      WritePodInfo(c.cluster, c.latest.output->pod_identities, w);
    }
}

Labels PodNodeLabels(const attribution::Attribution& a, const attribution::Pod& p) {
  return Labels{
      {"cluster", a.cluster}, {"namespace", p.id.namespace_}, {"node", p.node}, {"pod", p.id.name}};
}

}  // namespace

void WritePods(const attribution::Attribution& a, FamilyWriter& w) {
  for (const attribution::PodDevice& link : a.pod_devices) {
    Labels l = DeviceLabels(a.cluster, a.devices[link.device].id);
    l.emplace("namespace", link.pod.namespace_);
    l.emplace("pod", link.pod.name);
    l.emplace("sharing", attribution::SharingName(link.sharing));
    w.Add(kPodDevice, std::move(l), 1);
  }
  for (const attribution::Pod& p : a.pods) AddKnown(w, kUtil, PodNodeLabels(a, p), p.utilization);
  for (const attribution::Pod& p : a.pods)
    AddKnown(w, kMemUsed, PodNodeLabels(a, p), p.memory_used_bytes);
  for (const attribution::Pod& p : a.pods)
    AddKnown(w, kMemTotal, PodNodeLabels(a, p), p.memory_total_bytes);
  for (const attribution::Pod& p : a.pods) AddKnown(w, kPower, PodNodeLabels(a, p), p.power_watts);
  for (const attribution::Pod& p : a.pods)
    w.Add(kDevices, PodNodeLabels(a, p), static_cast<double>(p.devices));
  for (const attribution::Pod& p : a.pods) w.Add(kGpuEq, PodNodeLabels(a, p), p.gpu_equivalents);
  for (const attribution::Pod& p : a.pods) {
    Labels l = PodLabels(a.cluster, p.id);
    l.emplace("method", attribution::MethodName(p.method));
    w.Add(kAttribution, std::move(l), 1);
  }
  for (const attribution::Pod& p : a.pods)
    if (p.unrequested_gpu_use) w.Add(kUnrequested, PodNodeLabels(a, p), 1);
}

void WritePodInfo(const std::string& cluster, const std::vector<model::PodIdentity>& pods,
                  FamilyWriter& w) {
  for (const model::PodIdentity& p : pods) {
    Labels l{{"cluster", cluster},
             {"namespace", p.pod.namespace_},
             {"node", p.node},
             {"pod", p.pod.name}};
    if (!p.uid.empty()) l.emplace("uid", p.uid);
    if (p.workload) {
      l.emplace("workload", p.workload->name);
      l.emplace("workload_kind", p.workload->kind);
    }
    w.Add(kInfo, std::move(l), 1);
  }
}

constinit const FamilyGroup kPodsGroup{"pods", kFamilies, &Build};

}  // namespace gpuattr::metrics
