#include "gpuattr/sources/dcgm.h"

#include <charconv>
#include <cmath>
#include <string>
#include <unordered_map>

#include "body_budget.h"
#include "family_tally.h"
#include "gpuattr/sources/labels.h"

namespace gpuattr::sources {
namespace {

// Fills `key` (reused across samples to avoid an allocation per line) with the identity.
void IdentityKey(const ResolvedLabels& l, std::string& key) {
  key.clear();
  for (LabelKey k : {LabelKey::kHostname, LabelKey::kGpu, LabelKey::kUuid, LabelKey::kNamespace,
                     LabelKey::kPod, LabelKey::kContainer, LabelKey::kPodUid, LabelKey::kVgpu}) {
    AppendKeyPart(key, l.Get(k));
  }
  // "absent" and "0" are different instances: mark presence explicitly.
  key.push_back(l.Has(LabelKey::kGpuInstance) ? 'i' : '-');
  AppendKeyPart(key, l.Get(LabelKey::kGpuInstance));
}

void FillIfEmpty(std::string& slot, std::string_view value) {
  if (slot.empty() && !value.empty()) slot.assign(value);
}

DcgmRecord NewRecord(const ResolvedLabels& l, uint32_t line) {
  DcgmRecord r;
  r.device.gpu = l.Get(LabelKey::kGpu);
  if (l.Has(LabelKey::kGpuInstance))
    r.device.gpu_instance = std::string(l.Get(LabelKey::kGpuInstance));
  r.device.uuid = l.Get(LabelKey::kUuid);
  r.device.hostname = l.Get(LabelKey::kHostname);
  if (l.Has(LabelKey::kNamespace) || l.Has(LabelKey::kPod)) {
    PodLabels p;
    p.id.namespace_ = l.Get(LabelKey::kNamespace);
    p.id.name = l.Get(LabelKey::kPod);
    p.container = l.Get(LabelKey::kContainer);
    p.pod_uid = l.Get(LabelKey::kPodUid);
    p.vgpu = l.Get(LabelKey::kVgpu);
    r.pod = std::move(p);
  }
  r.first_line = line;
  return r;
}

// Attributes may be missing on some families (modelName is not on every line): take the first.
void MergeAttributes(DcgmRecord& r, const ResolvedLabels& l) {
  FillIfEmpty(r.device.mig_profile, l.Get(LabelKey::kMigProfile));
  FillIfEmpty(r.device.model, l.Get(LabelKey::kModel));
  FillIfEmpty(r.device.pci_bus_id, l.Get(LabelKey::kPciBusId));
  FillIfEmpty(r.device.device, l.Get(LabelKey::kDevice));
  FillIfEmpty(r.driver_version, l.Get(LabelKey::kDriverVersion));
}

std::optional<int> ParseInt(std::string_view s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// The device a line names, whatever its pod labels and hostname (an exporter speaks for one node),
// and the pod: what the body limits count.
void BudgetKeys(const ResolvedLabels& l, std::string& device, std::string& pod) {
  device.clear();
  AppendKeyPart(device, l.Get(LabelKey::kGpu));
  AppendKeyPart(device, l.Get(LabelKey::kUuid));
  device.push_back(l.Has(LabelKey::kGpuInstance) ? 'i' : '-');
  AppendKeyPart(device, l.Get(LabelKey::kGpuInstance));
  pod.clear();
  if (!l.Has(LabelKey::kNamespace) && !l.Has(LabelKey::kPod)) return;
  AppendKeyPart(pod, l.Get(LabelKey::kNamespace));
  AppendKeyPart(pod, l.Get(LabelKey::kPod));
}

std::string DeviceName(const ResolvedLabels& l) {
  std::string name(l.Get(LabelKey::kGpu));
  if (l.Has(LabelKey::kGpuInstance)) name += ":" + std::string(l.Get(LabelKey::kGpuInstance));
  if (l.Has(LabelKey::kUuid)) name += " (" + std::string(l.Get(LabelKey::kUuid)) + ")";
  return name;
}

// A family gpuattr does not read: a DCGM field it ignores, or no DCGM family at all.
void TallyUnread(std::string_view name, FamilyTally& tally) {
  if (IsDcgmFamily(name))
    tally.Ignored(name);
  else
    tally.Unknown(name);
}

// One sample's value into its record, in the field's base unit: per XID error code for the XID
// counts, the worst of the health watches, else the first value of the field (later ones count
// as duplicates). A value that is not finite is invalid.
void StoreValue(DcgmRecord& rec, const DcgmFieldAlias& alias, double raw,
                const ResolvedLabels& labels, ReadStats& stats) {
  if (!std::isfinite(raw)) {
    ++stats.invalid_values;
    return;
  }
  const double value = ToBaseUnit(alias.unit, raw);
  if (alias.field == DcgmField::kXidErrorsCount) {
    // dcgm-exporter emits one 0-valued line without `xid` when there were none.
    if (!labels.Has(LabelKey::kXid)) return;
    auto xid = ParseInt(labels.Get(LabelKey::kXid));
    if (!xid) {
      ++stats.invalid_values;
      return;
    }
    if (!rec.xid_error_counts.emplace(*xid, value).second) {
      ++stats.duplicate_samples;
      return;
    }
    ++stats.samples_used;
    return;
  }
  std::optional<double>* slot = rec.values.Slot(alias.field);
  if (alias.field == DcgmField::kHealthStatus) {
    // One line per health watch (subsystem): keep the worst.
    if (!*slot || value > **slot) *slot = value;
    ++stats.samples_used;
    return;
  }
  if (slot->has_value()) {
    ++stats.duplicate_samples;
    return;
  }
  *slot = value;
  ++stats.samples_used;
  if (alias.field == DcgmField::kLastXid) {
    FillIfEmpty(rec.xid_err_code, labels.Get(LabelKey::kErrCode));
    FillIfEmpty(rec.xid_err_msg, labels.Get(LabelKey::kErrMsg));
  }
}

}  // namespace

DcgmReadings ReadDcgm(const expo::Exposition& exposition, const BodyLimits& limits,
                      LimitBreach* breach) {
  DcgmReadings out;
  ReadStats& stats = out.stats;
  FamilyTally tally(stats);
  std::unordered_map<std::string, size_t> index;  // identity key → records position
  std::string key;
  DeviceBudget budget(limits);
  std::string device_key, pod_key;
  LimitBreach over;

  // Samples of one family are consecutive: look the name up once per run.
  std::string_view last_name;
  std::optional<DcgmFieldAlias> last_alias;
  bool have_last = false;

  for (const expo::Sample& s : exposition.samples) {
    ++stats.samples;
    if (!have_last || s.name != last_name) {
      last_name = s.name;
      last_alias = LookupDcgmField(s.name);
      have_last = true;
      if (!last_alias) TallyUnread(s.name, tally);
    }
    if (!last_alias && !IsDcgmFamily(s.name)) continue;
    ResolvedLabels labels(exposition.LabelsOf(s));
    if (!labels.Has(LabelKey::kGpu) && !labels.Has(LabelKey::kUuid)) {
      if (last_alias) ++stats.unkeyed_samples;  // a field gpuattr uses, on no device
      continue;
    }

    // Every key seen on any DCGM line is a device, whichever field (or value) the line carries:
    // exporters run with custom counter lists, so a body with only clocks still names its devices
    // (and MIG slices, and pods). A field gpuattr does not read sets no value: unknown, never 0.
    IdentityKey(labels, key);
    auto [it, inserted] = index.try_emplace(key, out.records.size());
    if (inserted) {
      // A new identity may be a new device or a new pod on one: within the limits, or stop.
      BudgetKeys(labels, device_key, pod_key);
      if (!budget.Admit(device_key, DeviceName(labels), pod_key, over)) {
        if (breach) *breach = std::move(over);
        break;
      }
      out.records.push_back(NewRecord(labels, s.line));
    }
    DcgmRecord& rec = out.records[it->second];
    MergeAttributes(rec, labels);
    if (last_alias) StoreValue(rec, *last_alias, s.value, labels, stats);
  }
  return out;
}

}  // namespace gpuattr::sources
