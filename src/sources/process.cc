#include "gpuattr/sources/process.h"

#include <cmath>
#include <string>
#include <unordered_map>

#include "body_budget.h"
#include "family_tally.h"
#include "gpuattr/sources/labels.h"

namespace gpuattr::sources {
namespace {

bool IsProcessLevel(ProcessMetric m) {
  return m == ProcessMetric::kProcessMemory || m == ProcessMetric::kProcessUtilization;
}

std::optional<double>* ProcessSlot(ProcessReading& p, ProcessMetric m) {
  return m == ProcessMetric::kProcessMemory ? &p.memory_bytes : &p.utilization;
}

std::optional<double>* DeviceSlot(ProcessDeviceReading& d, ProcessMetric m) {
  switch (m) {
    case ProcessMetric::kDeviceMemoryTotal:
      return &d.memory_total_bytes;
    case ProcessMetric::kDeviceUtilization:
      return &d.utilization;
    case ProcessMetric::kDevicePower:
      return &d.power_watts;
    case ProcessMetric::kDeviceTemperature:
      return &d.temperature_celsius;
    case ProcessMetric::kProcessMemory:
    case ProcessMetric::kProcessUtilization:
      break;
  }
  return nullptr;
}

}  // namespace

ProcessReadings ReadProcess(const expo::Exposition& exposition, const BodyLimits& limits,
                            LimitBreach* breach) {
  ProcessReadings out;
  ReadStats& stats = out.stats;
  FamilyTally tally(stats);
  std::unordered_map<std::string, size_t> process_index;
  std::unordered_map<std::string, size_t> device_index;
  std::string key;  // reused across samples
  DeviceBudget budget(limits);
  std::string pod_key;
  LimitBreach over;
  // A new process or device line may be a new device or a new pod on one: within the limits.
  auto admit = [&](const ResolvedLabels& labels, bool with_pod) {
    std::string device;
    AppendKeyPart(device, labels.Get(LabelKey::kUuid));
    AppendKeyPart(device, labels.Get(LabelKey::kGpu));
    pod_key.clear();
    if (with_pod && (labels.Has(LabelKey::kNamespace) || labels.Has(LabelKey::kPod))) {
      AppendKeyPart(pod_key, labels.Get(LabelKey::kNamespace));
      AppendKeyPart(pod_key, labels.Get(LabelKey::kPod));
    }
    std::string name(labels.Get(LabelKey::kGpu));
    if (labels.Has(LabelKey::kUuid)) name += " (" + std::string(labels.Get(LabelKey::kUuid)) + ")";
    return budget.Admit(device, name, pod_key, over);
  };

  for (const expo::Sample& s : exposition.samples) {
    ++stats.samples;
    auto alias = LookupProcessMetric(s.name);
    if (!alias) {
      if (s.name.starts_with("gpu_")) {
        tally.Ignored(s.name);
      } else {
        tally.Unknown(s.name);
      }
      continue;
    }
    ResolvedLabels labels(exposition.LabelsOf(s));
    // The per-process exporters key devices by lower-case `uuid`; `gpu` alone still names a card.
    if (!labels.Has(LabelKey::kUuid) && !labels.Has(LabelKey::kGpu)) {
      ++stats.unkeyed_samples;
      continue;
    }

    std::optional<double>* slot = nullptr;
    key.clear();
    AppendKeyPart(key, labels.Get(LabelKey::kUuid));
    AppendKeyPart(key, labels.Get(LabelKey::kGpu));
    if (IsProcessLevel(alias->metric)) {
      for (LabelKey k :
           {LabelKey::kNamespace, LabelKey::kPod, LabelKey::kContainer, LabelKey::kPid}) {
        AppendKeyPart(key, labels.Get(k));
      }
      auto [it, inserted] = process_index.try_emplace(key, out.processes.size());
      if (inserted) {
        if (!admit(labels, true)) break;
        ProcessReading p;
        if (labels.Has(LabelKey::kNamespace) || labels.Has(LabelKey::kPod)) {
          PodLabels pod;
          pod.id.namespace_ = labels.Get(LabelKey::kNamespace);
          pod.id.name = labels.Get(LabelKey::kPod);
          pod.container = labels.Get(LabelKey::kContainer);
          p.pod = std::move(pod);
        }
        p.uuid = labels.Get(LabelKey::kUuid);
        p.gpu = labels.Get(LabelKey::kGpu);
        p.pid = labels.Get(LabelKey::kPid);
        p.first_line = s.line;
        out.processes.push_back(std::move(p));
      }
      slot = ProcessSlot(out.processes[it->second], alias->metric);
    } else {
      auto [it, inserted] = device_index.try_emplace(key, out.devices.size());
      if (inserted) {
        if (!admit(labels, false)) break;
        ProcessDeviceReading d;
        d.uuid = labels.Get(LabelKey::kUuid);
        d.gpu = labels.Get(LabelKey::kGpu);
        d.first_line = s.line;
        out.devices.push_back(std::move(d));
      }
      slot = DeviceSlot(out.devices[it->second], alias->metric);
    }

    if (!std::isfinite(s.value)) {
      ++stats.invalid_values;
      continue;
    }
    if (slot->has_value()) {
      ++stats.duplicate_samples;
      continue;
    }
    *slot = ToBaseUnit(alias->unit, s.value);
    ++stats.samples_used;
  }
  if (breach && !over.limit.empty()) *breach = std::move(over);
  return out;
}

}  // namespace gpuattr::sources
