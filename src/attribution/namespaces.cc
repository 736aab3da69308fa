// Namespaces: sums of their pods (memory, power, GPU-equivalents), distinct devices in use, the
// GPU-equivalent-weighted utilisation, and the memory held idle.
#include <algorithm>
#include <vector>

#include "gpuattr/attribution/kube_view.h"
#include "gpuattr/attribution/work.h"
#include "gpuattr/kube/dra_gpus.h"

namespace gpuattr::attribution {

std::vector<Namespace> SummariseNamespaces(
    const AttributionInput& input, const std::map<kube::PodId, Pod>& pods,
    const std::map<std::pair<kube::PodId, DeviceId>, PodDevice>& links) {
  struct Acc {
    Namespace ns;
    std::vector<size_t> devices;  // indexes into Attribution::devices, with repeats
    double util_weighted = 0, util_weight = 0, util_plain = 0;
    size_t util_n = 0;
  };
  std::map<std::string, Acc, std::less<>> acc;
  // GPU pods: those holding GPU resources (devices or replicas) or DRA GPU devices
  // (docs/design.md#invariants). A pod seen on a GPU without a request is flagged as such, not
  // counted here. Objects are one per pod; a DRA holder counts unless it was counted for its
  // resources.
  for (const auto& [key, pod] : input.objects.pods)
    if (HoldsGpuResources(pod)) ++acc[pod.namespace_].ns.gpu_pods;
  for (const auto& [pod, claim] : kube::IndexDraGpus(input.objects).holders) {
    const kube::Pod* obj = input.objects.FindPod(pod.namespace_, pod.name);
    if (!obj || !HoldsGpuResources(*obj)) ++acc[pod.namespace_].ns.gpu_pods;
  }
  for (const auto& [id, pod] : pods) {
    Acc& a = acc[id.namespace_];
    a.ns.gpu_equivalents += pod.gpu_equivalents;
    AddInto(a.ns.memory_used_bytes, pod.memory_used_bytes);
    AddInto(a.ns.power_watts, pod.power_watts);
    if (pod.utilization) {
      a.util_weighted += *pod.utilization * pod.gpu_equivalents;
      a.util_weight += pod.gpu_equivalents;
      a.util_plain += *pod.utilization;
      a.util_n += 1;
    }
    if (pod.idle.value_or(false)) {
      a.ns.idle_pods += 1;
      AddInto(a.ns.memory_idle_bytes, pod.memory_used_bytes);
    } else if (pod.idle.has_value() && !a.ns.memory_idle_bytes) {
      a.ns.memory_idle_bytes = 0;  // known: none of its known pods is idle (so far)
    }
  }
  for (const auto& [key, link] : links) acc[key.first.namespace_].devices.push_back(link.device);

  std::vector<Namespace> out;
  for (auto& [name, a] : acc) {
    a.ns.name = name;
    std::sort(a.devices.begin(), a.devices.end());
    a.ns.devices_in_use =
        static_cast<size_t>(std::unique(a.devices.begin(), a.devices.end()) - a.devices.begin());
    if (a.util_weight > 0)
      a.ns.utilization = a.util_weighted / a.util_weight;
    else if (a.util_n > 0)  // pods on no known device: a plain mean
      a.ns.utilization = a.util_plain / static_cast<double>(a.util_n);
    out.push_back(std::move(a.ns));
  }
  return out;
}

}  // namespace gpuattr::attribution
