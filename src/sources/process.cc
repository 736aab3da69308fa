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

ProcessReading NewProcess(const ResolvedLabels& labels, uint32_t line) {
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
  p.first_line = line;
  return p;
}

ProcessDeviceReading NewDevice(const ResolvedLabels& labels, uint32_t line) {
  ProcessDeviceReading d;
  d.uuid = labels.Get(LabelKey::kUuid);
  d.gpu = labels.Get(LabelKey::kGpu);
  d.first_line = line;
  return d;
}

// The records of one body, found by key, within the body limits.
class Records {
 public:
  Records(ProcessReadings& out, const BodyLimits& limits) : out_(out), budget_(limits) {}

  // The slot of a sample's metric, in its process's or device's record (made when new); null
  // when a new record would break a limit (see breach()).
  std::optional<double>* Slot(const ResolvedLabels& labels, ProcessMetric metric, uint32_t line) {
    key_.clear();
    AppendKeyPart(key_, labels.Get(LabelKey::kUuid));
    AppendKeyPart(key_, labels.Get(LabelKey::kGpu));
    if (IsProcessLevel(metric)) {
      for (LabelKey k :
           {LabelKey::kNamespace, LabelKey::kPod, LabelKey::kContainer, LabelKey::kPid}) {
        AppendKeyPart(key_, labels.Get(k));
      }
      auto [it, inserted] = process_index_.try_emplace(key_, out_.processes.size());
      if (inserted) {
        if (!Admit(labels, true)) return nullptr;
        out_.processes.push_back(NewProcess(labels, line));
      }
      return ProcessSlot(out_.processes[it->second], metric);
    }
    auto [it, inserted] = device_index_.try_emplace(key_, out_.devices.size());
    if (inserted) {
      if (!Admit(labels, false)) return nullptr;
      out_.devices.push_back(NewDevice(labels, line));
    }
    return DeviceSlot(out_.devices[it->second], metric);
  }

  LimitBreach& breach() { return over_; }

 private:
  // A new process or device line may be a new device or a new pod on one: within the limits.
  bool Admit(const ResolvedLabels& labels, bool with_pod) {
    std::string device;
    AppendKeyPart(device, labels.Get(LabelKey::kUuid));
    AppendKeyPart(device, labels.Get(LabelKey::kGpu));
    pod_key_.clear();
    if (with_pod && (labels.Has(LabelKey::kNamespace) || labels.Has(LabelKey::kPod))) {
      AppendKeyPart(pod_key_, labels.Get(LabelKey::kNamespace));
      AppendKeyPart(pod_key_, labels.Get(LabelKey::kPod));
    }
    std::string name(labels.Get(LabelKey::kGpu));
    if (labels.Has(LabelKey::kUuid)) name += " (" + std::string(labels.Get(LabelKey::kUuid)) + ")";
    return budget_.Admit(device, name, pod_key_, over_);
  }

  ProcessReadings& out_;
  DeviceBudget budget_;
  std::unordered_map<std::string, size_t> process_index_;
  std::unordered_map<std::string, size_t> device_index_;
  std::string key_, pod_key_;  // reused across samples
  LimitBreach over_;
};

}  // namespace

ProcessReadings ReadProcess(const expo::Exposition& exposition, const BodyLimits& limits,
                            LimitBreach* breach) {
  ProcessReadings out;
  ReadStats& stats = out.stats;
  FamilyTally tally(stats);
  Records records(out, limits);
  for (const expo::Sample& s : exposition.samples) {
    ++stats.samples;
    auto alias = LookupProcessMetric(s.name);
    if (!alias) {
      if (s.name.starts_with("gpu_") || IsHamiMonitorFamily(s.name)) {
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
    std::optional<double>* slot = records.Slot(labels, alias->metric, s.line);
    if (slot == nullptr) break;
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
  if (breach && !records.breach().limit.empty()) *breach = std::move(records.breach());
  return out;
}

}  // namespace gpuattr::sources
