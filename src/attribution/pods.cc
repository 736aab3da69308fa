// Pods on devices, decided per node by tier (docs/design.md#tiers):
//   process tier  — pods from per-process memory; power by share of the device's total memory;
//   dcgm_pod      — one pod per (namespace, pod) on each device line; time-sliced devices split;
//   dcgm_no_pod   — no owner is guessed: devices get candidate pods, power stays unattributed.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "gpuattr/attribution/hami.h"
#include "gpuattr/attribution/kube_view.h"
#include "gpuattr/attribution/work.h"
#include "gpuattr/kube/dra_gpus.h"

namespace gpuattr::attribution {
namespace {

using DeviceRange = std::vector<DeviceWork*>;

DeviceRange DevicesOfNode(Work& work, const std::string& node) {
  DeviceRange out;
  for (auto it = work.devices.lower_bound(DeviceId{node, "", std::nullopt});
       it != work.devices.end() && it->first.node == node; ++it)
    out.push_back(&it->second);
  return out;
}

Sharing ExclusiveSharing(const Device& d) {
  return d.id.gpu_instance ? Sharing::kMig : Sharing::kExclusive;
}

// Shares above 1 in total (inconsistent memory figures) are scaled down so that a device never
// gives away more than itself.
void NormaliseShares(std::vector<PodDevice*>& links) {
  double sum = 0;
  for (const PodDevice* l : links) sum += l->share;
  if (sum > 1)
    for (PodDevice* l : links) l->share /= sum;
}

void ApplyShare(const Device& d, PodDevice& link) {
  if (d.power_watts) link.power_watts = *d.power_watts * link.share;
  link.gpu_equivalents = d.gpu_equivalents * link.share;
}

// What one pod's dcgm lines say about one device. A pod with several lines (dcgm-exporter's
// per-pod FB_USED/GPU_UTIL lines beside the repeated device line) takes the smallest: the
// per-pod sums never exceed the device's value.
struct PodLines {
  std::optional<double> memory;
  std::optional<double> utilization;
};

void MinInto(std::optional<double>& dst, const std::optional<double>& src) {
  if (src && (!dst || *src < *dst)) dst = src;
}

void DcgmPodLinks(const NodeReadings& readings, const DeviceRange& devices, Work& work) {
  for (DeviceWork* dw : devices) {
    Device& d = dw->device;
    // The device's pods in PodId order; usually one, so a vector searched from the end.
    std::vector<std::pair<const kube::PodId*, PodLines>> pods;
    for (const sources::DcgmRecord* r : dw->dcgm) {
      if (!r->pod || r->pod->id.name.empty()) continue;  // a namespace alone names no pod
      const kube::PodId& id = r->pod->id;
      auto at =
          std::find_if(pods.rbegin(), pods.rend(), [&](const auto& e) { return *e.first == id; });
      if (at == pods.rend()) {
        pods.emplace_back(&id, PodLines{});
        at = pods.rbegin();
      }
      PodLines& p = at->second;
      MinInto(p.memory, r->values.memory_used_bytes);
      MinInto(p.utilization,
              ClampRatio(r->values.gpu_util ? r->values.gpu_util : r->values.gr_engine_active));
    }
    std::sort(pods.begin(), pods.end(),
              [](const auto& a, const auto& b) { return *a.first < *b.first; });
    d.pods = pods.size();
    if (pods.empty()) continue;
    const size_t k = pods.size();
    const bool time_sliced = k > 1 || readings.sharing.Shares(d.id.gpu_instance.has_value());

    // Equal FB_USED on every pod is the device value repeated; different values are per-pod.
    bool per_pod_values = false;
    if (k > 1) {
      const std::optional<double>& first = pods.begin()->second.memory;
      bool all_known = true;
      for (const auto& [pod, p] : pods) {
        all_known = all_known && p.memory.has_value();
        if (p.memory && first && *p.memory != *first) per_pod_values = true;
      }
      per_pod_values = per_pod_values && all_known;
    }

    std::vector<PodDevice*> links;
    for (const auto& [pod, p] : pods) {
      const kube::PodId& id = *pod;
      PodDevice& link = work.links[{id, d.id}];
      link.pod = id;
      link.memory_total_bytes = d.memory_total_bytes;
      if (!time_sliced) {
        link.sharing = ExclusiveSharing(d);
        link.method = Method::kDcgmPod;
        link.share = 1;
        link.memory_used_bytes = d.memory_used_bytes;
        link.utilization = d.utilization;
      } else if (per_pod_values) {
        link.sharing = readings.sharing.shared_as;
        link.memory_used_bytes = p.memory;
        link.utilization = p.utilization ? p.utilization : d.utilization;
        if (d.memory_total_bytes && *d.memory_total_bytes > 0) {
          link.method = Method::kDcgmPod;
          link.share = *p.memory / *d.memory_total_bytes;
        } else {
          link.method = Method::kEvenSplit;
          link.share = 1.0 / static_cast<double>(k);
        }
      } else {
        link.sharing = readings.sharing.shared_as;
        link.method = Method::kEvenSplit;
        link.share = 1.0 / static_cast<double>(k);
        if (d.memory_used_bytes) link.memory_used_bytes = *d.memory_used_bytes * link.share;
        if (d.memory_total_bytes) link.memory_total_bytes = *d.memory_total_bytes * link.share;
        link.utilization = d.utilization;
      }
      links.push_back(&link);
    }
    NormaliseShares(links);
    for (PodDevice* l : links) ApplyShare(d, *l);
  }
}

void ProcessPodLinks(const AttributionInput& input, const std::string& node,
                     const NodeReadings& readings, const DeviceRange& devices, Work& work) {
  struct Usage {
    std::optional<double> memory;
    std::optional<double> utilization;
  };
  std::map<DeviceWork*, std::map<kube::PodId, Usage>> by_device;
  // One reading per process, or per container where the source has no pid (HAMi's monitor).
  std::set<std::tuple<std::string, std::string, std::string, std::string, std::string, std::string>>
      seen;
  for (const sources::ProcessReading* p : readings.processes) {
    if (!p->pod || p->pod->id.name.empty()) continue;  // no pod's process: stays unattributed
    if (!seen.emplace(p->pod->id.namespace_, p->pod->id.name, p->pod->container, p->pid, p->uuid,
                      p->gpu)
             .second)
      continue;
    kube::PodId pod{p->pod->id.namespace_, p->pod->id.name};
    DeviceWork* dw = nullptr;
    if (!readings.dcgm.empty()) {
      dw = MatchWholeGpu(work, node, p->uuid, p->gpu);  // dcgm's device of the same card
    } else {
      auto it = work.devices.find(DeviceId{node, p->gpu.empty() ? p->uuid : p->gpu, std::nullopt});
      if (it != work.devices.end()) dw = &it->second;
    }
    if (!dw) {  // no device to tie it to (e.g. a MIG card): the pod still shows its usage
      Pod& unmatched = work.pods[pod];
      unmatched.id = pod;
      unmatched.node = node;
      unmatched.method = Method::kProcess;
      AddInto(unmatched.memory_used_bytes, p->memory_bytes);
      MaxInto(unmatched.utilization, ClampRatio(p->utilization));
      continue;
    }
    Usage& u = by_device[dw][pod];
    AddInto(u.memory, p->memory_bytes);
    MaxInto(u.utilization, ClampRatio(p->utilization));
  }
  for (DeviceWork* dw : devices) dw->device.pods = by_device.count(dw) ? by_device[dw].size() : 0;

  for (auto& [dw, pods] : by_device) {
    const Device& d = dw->device;
    const size_t k = pods.size();
    const bool alone = k == 1 && !readings.sharing.Shares(d.id.gpu_instance.has_value());
    std::vector<PodDevice*> links;
    for (auto& [id, u] : pods) {
      PodDevice& link = work.links[{id, d.id}];
      link.pod = id;
      link.memory_used_bytes = u.memory;
      link.memory_total_bytes = d.memory_total_bytes;
      link.utilization = u.utilization;
      link.method = Method::kProcess;
      const kube::Pod* obj = input.objects.FindPod(id.namespace_, id.name);
      if (obj && !RequestsAnyGpu(*obj))
        link.sharing = Sharing::kUnrequested;
      else
        link.sharing = alone ? ExclusiveSharing(d) : readings.sharing.shared_as;
      if (alone) {
        link.share = 1;  // the only pod with processes on the device: it gets it whole
      } else if (u.memory && d.memory_total_bytes && *d.memory_total_bytes > 0) {
        link.share = *u.memory / *d.memory_total_bytes;
      } else {
        link.method = Method::kEvenSplit;
        link.share = 1.0 / static_cast<double>(k);
      }
      links.push_back(&link);
    }
    NormaliseShares(links);
    for (PodDevice* l : links) ApplyShare(d, *l);
  }
}

// HAMi (docs/design.md#node-shapes): the scheduler's annotation says which card each pod's
// containers use and how much of it; a pod holds max(memory share, cores share) of the card.
// Fractions unknown on a card (cores 0, card memory unknown) split that card evenly.
void HamiPodLinks(const AttributionInput& input, const std::string& node, Work& work) {
  std::map<DeviceWork*, std::map<kube::PodId, std::pair<double, double>>> by_device;
  for (const auto& [key, pod] : input.objects.pods) {
    if (pod.node_name != node || !HoldsGpuResources(pod)) continue;
    auto a = pod.annotations.find(std::string(kHamiAllocatedAnnotation));
    if (a == pod.annotations.end()) continue;
    auto devices = ParseHamiAllocation(a->second);
    if (!devices.ok()) continue;  // malformed: the pod is held to nothing it could not prove
    for (const HamiDevice& h : *devices) {
      DeviceWork* dw = MatchWholeGpu(work, node, h.uuid, "");
      if (!dw) continue;
      const std::optional<double>& total = dw->device.memory_total_bytes;
      const double fraction = HamiFraction(h, total ? *total / 1048576.0 : 0);
      auto [it, added] = by_device[dw].try_emplace(pod.Id(), 0.0, 0.0);
      it->second.first = fraction < 0 || it->second.first < 0 ? -1 : it->second.first + fraction;
      it->second.second += static_cast<double>(h.memory_mib) * 1048576.0;
    }
  }
  for (auto& [dw, pods] : by_device) {
    Device& d = dw->device;
    d.pods = pods.size();
    const bool known =
        std::all_of(pods.begin(), pods.end(), [](const auto& p) { return p.second.first >= 0; });
    std::vector<PodDevice*> links;
    for (const auto& [id, held] : pods) {
      PodDevice& link = work.links[{id, d.id}];
      link.pod = id;
      link.sharing = Sharing::kHami;
      link.method = known ? Method::kDcgmPod : Method::kEvenSplit;
      link.share = known ? std::min(1.0, held.first) : 1.0 / static_cast<double>(pods.size());
      link.utilization = d.utilization;
      if (held.second > 0)
        link.memory_total_bytes = held.second;  // the memory HAMi lets the pod use
      else if (d.memory_total_bytes)
        link.memory_total_bytes = *d.memory_total_bytes * link.share;
      links.push_back(&link);
    }
    NormaliseShares(links);
    for (PodDevice* l : links) ApplyShare(d, *l);
  }
}

}  // namespace

void BuildPodLinks(const AttributionInput& input, Work& work) {
  // Only nodes without pod labels read these: most clusters never need them.
  std::optional<std::map<std::string, std::vector<kube::PodId>, std::less<>>> gpu_pods;
  std::optional<kube::DraGpuIndex> dra;
  for (const auto& [node, readings] : work.nodes) {
    DeviceRange devices = DevicesOfNode(work, node);
    if (readings.tier != Tier::kProcess && readings.sharing.shape.kind == ShapeKind::kHami) {
      for (DeviceWork* dw : devices) dw->device.pods = 0;
      HamiPodLinks(input, node, work);
      continue;
    }
    switch (readings.tier) {
      case Tier::kProcess:
        ProcessPodLinks(input, node, readings, devices, work);
        break;
      case Tier::kDcgmPod:
        DcgmPodLinks(readings, devices, work);
        break;
      case Tier::kDcgmNoPod: {
        if (!gpu_pods) gpu_pods = GpuPodsByNode(input.objects);
        if (!dra) dra = kube::IndexDraGpus(input.objects);
        auto it = gpu_pods->find(node);
        for (DeviceWork* dw : devices) {
          Device& d = dw->device;
          d.pods.reset();  // unknown: the exporter does not say
          // DRA's holders of this UUID when DRA knows it; else the node's GPU pods.
          if (const auto* held = dra->HoldersOf(d.uuid, d.id.gpu_instance.has_value())) {
            for (const auto& [ns, name] : *held) d.candidate_pods.push_back(kube::PodId{ns, name});
          } else if (it != gpu_pods->end()) {
            d.candidate_pods = it->second;
          }
        }
        break;
      }
    }
  }
}

void SummarisePods(const AttributionInput& input, Work& work) {
  struct Mean {
    double sum = 0;
    size_t n = 0;
  };
  // Links are sorted by pod: a pod's links come in a row, its dcgm mean is complete at the next.
  Pod* current = nullptr;
  Mean dcgm_util;  // of `current`
  auto finish_pod = [&] {
    if (current && dcgm_util.n > 0)
      current->utilization = dcgm_util.sum / static_cast<double>(dcgm_util.n);
    dcgm_util = {};
  };
  const std::string* tier_of = nullptr;  // the node `process_tier` is about
  bool process_tier = false;
  for (const auto& [key, link] : work.links) {
    const DeviceId& device = key.second;
    if (!current || current->id != link.pod) {
      finish_pod();
      current = &work.pods[link.pod];
      current->id = link.pod;
    }
    Pod& pod = *current;
    pod.node = device.node;
    pod.devices += 1;
    pod.gpu_equivalents += link.gpu_equivalents;
    AddInto(pod.memory_used_bytes, link.memory_used_bytes);
    AddInto(pod.memory_total_bytes, link.memory_total_bytes);
    AddInto(pod.power_watts, link.power_watts);
    if (link.sharing == Sharing::kUnrequested) pod.unrequested_gpu_use = true;
    if (!tier_of || *tier_of != device.node) {
      auto node = work.nodes.find(device.node);
      process_tier = node != work.nodes.end() && node->second.tier == Tier::kProcess;
      tier_of = &device.node;
    }
    if (link.method == Method::kEvenSplit)
      pod.method = Method::kEvenSplit;
    else if (pod.method != Method::kEvenSplit)
      pod.method = process_tier ? Method::kProcess : Method::kDcgmPod;
    if (process_tier) {
      MaxInto(pod.utilization, link.utilization);  // the busiest of its processes
    } else if (link.utilization) {
      dcgm_util.sum += *link.utilization;  // mean over its devices
      dcgm_util.n += 1;
    }
  }
  finish_pod();

  const AttributionParams& params = input.params;
  for (auto& [id, pod] : work.pods) {
    if (pod.devices == 0 && pod.method == Method::kProcess) {
      // A process-tier pod on no known device: flag it when it requested nothing.
      const kube::Pod* obj = input.objects.FindPod(id.namespace_, id.name);
      if (obj && !RequestsAnyGpu(*obj)) pod.unrequested_gpu_use = true;
    }
    const bool busy = pod.utilization && *pod.utilization >= params.idle_utilization_below;
    const bool small =
        pod.memory_used_bytes && *pod.memory_used_bytes < params.idle_memory_at_least_bytes;
    if (busy || small)
      pod.idle = false;
    else if (pod.utilization && pod.memory_used_bytes)
      pod.idle = true;
  }
}

}  // namespace gpuattr::attribution
