// Devices and cards: every key seen on any dcgm line is a device; device gauges are the max over
// repeated lines (time-sliced pods and MIG slices repeat device values). A per-process
// exporter's device figures are used only on nodes without dcgm.
#include <algorithm>
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
    c.devices.push_back(id);
  }
  return d;
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
  }
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
  }
  // Memory used: Σ distinct processes (two exporters on one node report the same processes).
  std::set<std::tuple<std::string, std::string, std::string, std::string, std::string>> seen;
  for (const sources::ProcessReading* p : readings.processes) {
    if (p->gpu.empty() && p->uuid.empty()) continue;
    DeviceWork& d =
        DeviceFor(work, id_of(p->gpu, p->uuid), CardKeyOf(node, p->uuid, p->gpu), readings.tier);
    FillIfEmpty(d.device.uuid, p->uuid);
    std::string ns = p->pod ? p->pod->id.namespace_ : "", pod = p->pod ? p->pod->id.name : "";
    if (!seen.emplace(ns, pod, p->pid, p->uuid, p->gpu).second) continue;
    AddInto(d.device.memory_used_bytes, p->memory_bytes);
  }
}

}  // namespace

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
    if (const kube::Node* obj = input.objects.FindNode(name)) n.shares_gpus = NodeSharesGpus(*obj);
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
    for (const DeviceId& id : c.devices) {
      const DeviceWork& d = work.devices.at(id);
      FillIfEmpty(c.card.uuid, d.device.uuid);
      FillIfEmpty(c.card.model, d.device.model);
      for (const sources::DcgmRecord* r : d.dcgm) fields.Add(*r);
    }
    health::DeviceHealth card_health = health::AssessDevice(fields);
    for (const DeviceId& id : c.devices) work.devices.at(id).device.health = card_health;
  }
}

}  // namespace gpuattr::attribution
