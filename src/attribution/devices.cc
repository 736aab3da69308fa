// Devices and cards: every key seen on any dcgm line is a device; device gauges are the max over
// repeated lines (time-sliced pods and MIG slices repeat device values). A per-process
// exporter's device figures are used on nodes without dcgm, and beside dcgm only to fill a field
// dcgm does not report for that card.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "gpuattr/attribution/kube_view.h"
#include "gpuattr/attribution/work.h"

namespace gpuattr::attribution {
namespace {

// The exporter's node: spec.nodeName as given, else the exporter pod's, else "" (then dcgm's
// hostname label per line is the fallback).
std::string ExporterNode(const AttributionInput& input, const sources::ExporterReadings& e) {
  if (!e.node.empty()) return e.node;
  if (const kube::Pod* p = input.objects.FindPod(e.namespace_, e.pod)) return p->node_name;
  return "";
}

CardKey CardKeyOf(const std::string& node, const std::string& uuid, const std::string& gpu) {
  return CardKey{node, uuid.empty() ? "#" + gpu : uuid};
}

void FillIfEmpty(std::string& slot, const std::string& value) {
  if (slot.empty() && !value.empty()) slot = value;
}

DeviceWork& DeviceFor(Work& work, const DeviceId& id, const CardKey& card, Tier tier) {
  auto [it, added] = work.devices.try_emplace(id);
  DeviceWork& d = it->second;
  if (added) {
    d.device.id = id;
    d.device.tier = tier;
    d.card = card;
    CardWork& c = work.cards[card];
    c.card.node = id.node;
    c.card.gpu = id.gpu;
    c.devices.push_back(&d);
  }
  return d;
}

// Memory used per device as the per-process exporter sees it: Σ distinct processes (two
// exporters on one node report the same processes), keyed by (gpu, uuid) as it labels them.
std::map<std::pair<std::string, std::string>, double> ProcessMemory(const NodeReadings& readings) {
  std::map<std::pair<std::string, std::string>, double> out;
  std::set<std::tuple<std::string, std::string, std::string, std::string, std::string>> seen;
  for (const sources::ProcessReading* p : readings.processes) {
    if (!p->memory_bytes || (p->gpu.empty() && p->uuid.empty())) continue;
    std::string ns = p->pod ? p->pod->id.namespace_ : "", pod = p->pod ? p->pod->id.name : "";
    if (!seen.emplace(ns, pod, p->pid, p->uuid, p->gpu).second) continue;
    out[{p->gpu, p->uuid}] += *p->memory_bytes;
  }
  return out;
}

// Where dcgm and a per-process exporter both report a node, dcgm's device gauges win; a field
// dcgm does not report for a device (exporters run with custom counter lists: no FB_TOTAL or
// FB_FREE, say) is taken from the per-process exporter's reading of the same card.
void FillFromProcessExporter(const std::string& node, const NodeReadings& readings, Work& work) {
  for (const sources::ProcessDeviceReading* r : readings.process_devices) {
    DeviceWork* d = MatchWholeGpu(work, node, r->uuid, r->gpu);
    if (!d) continue;
    Device& dev = d->device;
    if (!dev.memory_total_bytes) dev.memory_total_bytes = r->memory_total_bytes;
    if (!dev.utilization) dev.utilization = ClampRatio(r->utilization);
    if (!dev.power_watts) dev.power_watts = r->power_watts;
    if (!dev.temperature_celsius) dev.temperature_celsius = r->temperature_celsius;
  }
  std::map<DeviceWork*, double> used;
  for (const auto& [key, bytes] : ProcessMemory(readings))
    if (DeviceWork* d = MatchWholeGpu(work, node, key.second, key.first))
      if (!d->device.memory_used_bytes) used[d] += bytes;
  for (const auto& [d, bytes] : used) d->device.memory_used_bytes = bytes;
}

// What the node's labels say when the exporter does not (docs/design.md#node-shapes): the model
// (GKE's accelerator label) and, where every nvidia.com/gpu unit is a slice of one profile
// (mig.strategy=single, GKE partitions), the slices' profile.
void FillFromShape(const NodeShape& shape, Device& dev) {
  FillIfEmpty(dev.model, shape.model_hint);
  if (dev.id.gpu_instance && shape.UnitsAreSlices())
    FillIfEmpty(dev.mig_profile, shape.slice_profile);
}

void BuildDcgmDevices(const std::string& node, const NodeReadings& readings, Work& work) {
  for (const sources::DcgmRecord* r : readings.dcgm) {
    DeviceId id{node, r->device.gpu, r->device.gpu_instance};
    DeviceWork& d =
        DeviceFor(work, id, CardKeyOf(node, r->device.uuid, r->device.gpu), readings.tier);
    d.dcgm.push_back(r);
  }
  for (auto it = work.devices.lower_bound(DeviceId{node, "", std::nullopt});
       it != work.devices.end() && it->first.node == node; ++it) {
    DeviceWork& d = it->second;
    if (d.dcgm.empty()) continue;
    Device& dev = d.device;
    std::optional<double> gpu_util, gr_engine, used, free_, total;
    for (const sources::DcgmRecord* r : d.dcgm) {
      const sources::DcgmValues& v = r->values;
      FillIfEmpty(dev.uuid, r->device.uuid);
      FillIfEmpty(dev.model, r->device.model);
      if (dev.id.gpu_instance) FillIfEmpty(dev.mig_profile, r->device.mig_profile);
      MaxInto(gpu_util, v.gpu_util);
      MaxInto(gr_engine, v.gr_engine_active);
      MaxInto(dev.sm_active, v.sm_active);
      MaxInto(dev.tensor_active, v.tensor_active);
      MaxInto(dev.dram_active, v.dram_active);
      MaxInto(used, v.memory_used_bytes);
      MaxInto(free_, v.memory_free_bytes);
      MaxInto(total, v.memory_total_bytes);
      MaxInto(dev.temperature_celsius, v.temperature_celsius);
    }
    // GPU_UTIL and PROF_GR_ENGINE_ACTIVE measure the same thing: one or the other, never added.
    dev.utilization = ClampRatio(gpu_util ? gpu_util : gr_engine);
    dev.sm_active = ClampRatio(dev.sm_active);
    dev.tensor_active = ClampRatio(dev.tensor_active);
    dev.dram_active = ClampRatio(dev.dram_active);
    dev.memory_used_bytes = used;
    if (total)
      dev.memory_total_bytes = total;
    else if (used && free_)
      dev.memory_total_bytes = *used + *free_;
    // The card's power as this device's lines repeat it; SplitCardPower shares it out.
    for (const sources::DcgmRecord* r : d.dcgm) MaxInto(dev.power_watts, r->values.power_watts);
    FillFromShape(readings.sharing.shape, dev);
  }
  if (!readings.process_devices.empty() || !readings.processes.empty())
    FillFromProcessExporter(node, readings, work);
}

// Per-process exporter devices (nodes without dcgm): keyed by the card index, else the UUID.
void BuildProcessDevices(const std::string& node, const NodeReadings& readings, Work& work) {
  auto id_of = [&](const std::string& gpu, const std::string& uuid) {
    return DeviceId{node, gpu.empty() ? uuid : gpu, std::nullopt};
  };
  for (const sources::ProcessDeviceReading* r : readings.process_devices) {
    DeviceWork& d =
        DeviceFor(work, id_of(r->gpu, r->uuid), CardKeyOf(node, r->uuid, r->gpu), readings.tier);
    Device& dev = d.device;
    FillIfEmpty(dev.uuid, r->uuid);
    MaxInto(dev.memory_total_bytes, r->memory_total_bytes);
    std::optional<double> util = dev.utilization;
    MaxInto(util, ClampRatio(r->utilization));
    dev.utilization = util;
    MaxInto(dev.power_watts, r->power_watts);  // the card's; SplitCardPower takes it from here
    MaxInto(dev.temperature_celsius, r->temperature_celsius);
    FillFromShape(readings.sharing.shape, dev);
  }
  for (const sources::ProcessReading* p : readings.processes) {
    if (p->gpu.empty() && p->uuid.empty()) continue;
    DeviceWork& d =
        DeviceFor(work, id_of(p->gpu, p->uuid), CardKeyOf(node, p->uuid, p->gpu), readings.tier);
    FillIfEmpty(d.device.uuid, p->uuid);
  }
  for (const auto& [key, bytes] : ProcessMemory(readings))
    AddInto(work.devices.at(id_of(key.first, key.second)).device.memory_used_bytes, bytes);
}

}  // namespace

DeviceWork* MatchWholeGpu(Work& work, const std::string& node, const std::string& uuid,
                          const std::string& gpu) {
  auto first = work.devices.lower_bound(DeviceId{node, "", std::nullopt});
  auto whole = [&](auto it) {
    return it != work.devices.end() && it->first.node == node && !it->first.gpu_instance;
  };
  if (!uuid.empty()) {
    for (auto it = first; it != work.devices.end() && it->first.node == node; ++it)
      if (whole(it) && it->second.device.uuid == uuid) return &it->second;
  }
  if (gpu.empty()) return nullptr;
  auto it = work.devices.find(DeviceId{node, gpu, std::nullopt});
  // By card index only when a UUID is missing on one side: two different UUIDs are two cards,
  // whatever their indexes (CUDA and NVML may number cards differently).
  if (!whole(it) || (!uuid.empty() && !it->second.device.uuid.empty())) return nullptr;
  return &it->second;
}

std::optional<double> ClampRatio(std::optional<double> v) {
  if (!v) return v;
  return std::clamp(*v, 0.0, 1.0);
}

void GroupByNode(const AttributionInput& input, Work& work) {
  for (const sources::ExporterReadings& e : input.exporters) {
    std::string node = ExporterNode(input, e);
    if (const auto* dcgm = std::get_if<sources::DcgmReadings>(&e.readings)) {
      for (const sources::DcgmRecord& r : dcgm->records)
        work.nodes[node.empty() ? r.device.hostname : node].dcgm.push_back(&r);
    } else if (const auto* proc = std::get_if<sources::ProcessReadings>(&e.readings)) {
      NodeReadings& n = work.nodes[node];
      n.has_process_exporter = true;
      for (const sources::ProcessReading& p : proc->processes) n.processes.push_back(&p);
      for (const sources::ProcessDeviceReading& d : proc->devices) n.process_devices.push_back(&d);
    }
  }
  for (auto& [name, n] : work.nodes) {
    if (const kube::Node* obj = input.objects.FindNode(name)) n.sharing = NodeSharingOf(*obj);
    bool pod_labels = std::any_of(n.dcgm.begin(), n.dcgm.end(), [](const sources::DcgmRecord* r) {
      return r->pod && !r->pod->id.name.empty();
    });
    n.tier = n.has_process_exporter ? Tier::kProcess
             : pod_labels           ? Tier::kDcgmPod
                                    : Tier::kDcgmNoPod;
  }
}

void BuildDevices(Work& work) {
  for (const auto& [node, readings] : work.nodes) {
    if (!readings.dcgm.empty())
      BuildDcgmDevices(node, readings, work);
    else
      BuildProcessDevices(node, readings, work);
  }
  for (auto& [key, c] : work.cards) {
    // Health is the card's: its fields may sit on any of its lines, and MIG slices inherit it.
    health::HealthFields fields;
    for (const DeviceWork* d : c.devices) {
      FillIfEmpty(c.card.uuid, d->device.uuid);
      FillIfEmpty(c.card.model, d->device.model);
      for (const sources::DcgmRecord* r : d->dcgm) fields.Add(*r);
    }
    c.card.health = health::AssessDevice(fields);
    for (DeviceWork* d : c.devices) d->device.health = c.card.health;
  }
}

}  // namespace gpuattr::attribution
