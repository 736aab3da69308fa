// State file JSON ↔ LedgerState: encoded by PrettyJson, decoded from the tape of JsonDocument
// (util/json_document.h). The decoder's format errors stop here and become values.
#include "gpuattr/ledger/state_codec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "codec_parts.h"

namespace gpuattr::ledger {
namespace {

using namespace codec;  // NOLINT: the codec's building blocks (codec_parts.h)

// The "accounting" object of a cluster (docs/accounting.md#state); absent in version 1 files.
AccountingState DecodeAccounting(const JsonValue& j, const std::string& where) {
  AccountingState s;
  if (!j.is_object()) throw std::runtime_error(where + " is not an object");
  s.last_unix = GetOptional(j, "last_unix", where);
  s.cards = GetStrings(j, "cards", where);
  if (Has(j, "currency")) s.currency = GetString(j, "currency", where);
  s.days = DecodeDays(j, where);  // absent in files written before the daily totals
  size_t i = 0;
  for (const JsonValue& label : GetArray(j, "namespace_labels", where).Elements()) {
    if (!label.is_string())
      throw std::runtime_error(where + ".namespace_labels[" + std::to_string(i) +
                               "] is not a string");
    s.namespace_labels.emplace_back(label.str());
    ++i;
  }
  i = 0;
  for (const JsonValue& p : GetArray(j, "pods", where).Elements()) {
    const std::string at = where + ".pods[" + std::to_string(i++) + "]";
    if (!p.is_object()) throw std::runtime_error(at + " is not an object");
    PodHoursRecord r;
    if (Has(p, "uid")) r.uid = GetString(p, "uid", at);
    r.node = GetString(p, "node", at);
    r.total = GetGpuHours(p, at);
    s.pod_hours[{GetString(p, "namespace", at), GetString(p, "pod", at)}] = std::move(r);
  }
  // The keys the last accounted cycle saw pods under, kept in their records.
  const KeySet seen = GetStrings(j, "seen_pods", where);
  for (auto& [id, r] : s.pod_hours)
    r.seen = !r.uid.empty() && seen.contains(r.uid.str()) ? SeenAs::kUid
             : seen.contains(id.Text())                   ? SeenAs::kName
                                                          : SeenAs::kNo;
  i = 0;
  for (const JsonValue& n : GetArray(j, "namespaces", where).Elements()) {
    const std::string at = where + ".namespaces[" + std::to_string(i++) + "]";
    if (!n.is_object()) throw std::runtime_error(at + " is not an object");
    s.namespace_hours[GetString(n, "namespace", at)] = {
        GetGpuHours(n, at), GetOptional(n, "last_seen_unix", at).value_or(0)};
  }
  i = 0;
  for (const JsonValue& n : GetArray(j, "nodes", where).Elements()) {
    const std::string at = where + ".nodes[" + std::to_string(i++) + "]";
    if (!n.is_object()) throw std::runtime_error(at + " is not an object");
    s.node_idle[GetString(n, "node", at)] = {GetGpuHours(n, at),
                                             GetOptional(n, "last_seen_unix", at).value_or(0)};
  }
  return s;
}

LedgerState DecodeCluster(const JsonValue& j, const std::string& where) {
  if (!j.is_object()) throw std::runtime_error(where + " is not an object");
  LedgerState s;
  s.last_cycle_unix = GetOptional(j, "last_cycle_unix", where);
  if (const std::optional<JsonValue> acc = Member(j, "accounting"))
    s.accounting = DecodeAccounting(*acc, where + ".accounting");
  size_t i = 0;
  for (const JsonValue& p : GetArray(j, "pods", where).Elements()) {
    const std::string at = where + ".pods[" + std::to_string(i++) + "]";
    if (!p.is_object()) throw std::runtime_error(at + " is not an object");
    kube::PodId id{GetString(p, "namespace", at), GetString(p, "pod", at)};
    PodRecord r;
    if (Has(p, "uid")) r.uid = GetString(p, "uid", at);
    r.node = GetString(p, "node", at);
    r.idle_since_unix = GetOptional(p, "idle_since_unix", at);
    r.last_idle_unix = GetOptional(p, "last_idle_unix", at);
    r.joules = GetOptional(p, "joules", at);
    r.last_power_watts = GetOptional(p, "last_power_watts", at);
    r.last_power_unix = GetOptional(p, "last_power_unix", at);
    // Files of earlier versions wrote every record at the last cycle, and only for pods seen then.
    if (r.idle_since_unix && !r.last_idle_unix) r.last_idle_unix = s.last_cycle_unix;
    if (r.last_power_watts && !r.last_power_unix) r.last_power_unix = s.last_cycle_unix;
    s.pods[std::move(id)] = std::move(r);
  }
  i = 0;
  for (const JsonValue& n : GetArray(j, "namespaces", where).Elements()) {
    const std::string at = where + ".namespaces[" + std::to_string(i++) + "]";
    if (!n.is_object()) throw std::runtime_error(at + " is not an object");
    NamespaceRecord r;
    r.joules = GetNumber(n, "joules", at);
    r.last_seen_unix = GetOptional(n, "last_seen_unix", at).value_or(0);
    size_t k = 0;
    for (const JsonValue& m : GetArray(n, "marks", at).Elements()) {  // absent in older files
      const std::string mk = at + ".marks[" + std::to_string(k++) + "]";
      if (!m.is_object()) throw std::runtime_error(mk + " is not an object");
      r.marks.push_back({GetNumber(m, "unix", mk), GetNumber(m, "joules", mk)});
    }
    s.namespaces[GetString(n, "namespace", at)] = std::move(r);
  }
  return s;
}

// "-57:3 0 12" → the sketch with 3, 0 and 12 samples in buckets −57, −56, −55, plus `zero`.
rightsizing::UtilizationSketch DecodeSketch(const std::string& text, uint64_t zero,
                                            const std::string& where) {
  std::vector<rightsizing::UtilizationSketch::Bucket> buckets;
  if (!text.empty()) {
    const char* p = text.data();
    const char* end = p + text.size();
    int32_t index = 0;
    auto [q, ec] = std::from_chars(p, end, index);
    if (ec != std::errc() || q == end || *q != ':')
      throw std::runtime_error(where + ".utilization is not \"<index>:<count> <count> ...\"");
    p = q + 1;
    while (p < end) {
      uint64_t count = 0;
      auto [r, ec2] = std::from_chars(p, end, count);
      if (ec2 != std::errc())
        throw std::runtime_error(where + ".utilization holds a count that is no number");
      if (count > 0) buckets.push_back({index, count});
      ++index;
      p = r;
      if (p < end && *p == ' ') ++p;
    }
  }
  auto sketch = rightsizing::UtilizationSketch::FromParts(zero, std::move(buckets));
  if (!sketch) throw std::runtime_error(where + ".utilization has a bucket out of range");
  return *sketch;
}

// A whole number of samples or replicas. 3 and 3.0 are the same count (the tape keeps one as an
// integer and the other as a float; nlohmann's DOM did too, and the rule compares the value).
uint64_t GetCount(const JsonValue& j, std::string_view key, const std::string& where) {
  const double v = GetOptional(j, key, where).value_or(0);
  if (v < 0 || v != std::floor(v) || v > 9e15)
    throw std::runtime_error(where + "." + std::string(key) + " is not a count");
  return static_cast<uint64_t>(v);
}

rightsizing::WorkloadRecord DecodeWorkload(const JsonValue& w, const std::string& at,
                                           rightsizing::WorkloadId& id) {
  if (!w.is_object()) throw std::runtime_error(at + " is not an object");
  id = {GetString(w, "namespace", at), GetString(w, "kind", at), GetString(w, "name", at)};
  rightsizing::WorkloadRecord r;
  r.last_seen_unix = GetOptional(w, "last_seen_unix", at).value_or(0);
  if (const std::optional<JsonValue> c = Member(w, "current")) {
    const std::string cur = at + ".current";
    if (!c->is_object()) throw std::runtime_error(cur + " is not an object");
    r.current.model = GetString(*c, "model", cur);
    r.current.profile = GetString(*c, "profile", cur);
    r.current.replicas =
        static_cast<int>(std::clamp<uint64_t>(GetCount(*c, "replicas", cur), 1, 1'000'000));
    r.current.device_memory_bytes = GetOptional(*c, "device_memory_bytes", cur);
  }
  const JsonValue slots = GetArray(w, "slots", at);
  if (slots.size() > rightsizing::kSlotsPerWindow + 1)
    throw std::runtime_error(at + ".slots has more than " +
                             std::to_string(rightsizing::kSlotsPerWindow + 1) + " slots");
  size_t k = 0;
  for (const JsonValue& s : slots.Elements()) {
    const std::string sk = at + ".slots[" + std::to_string(k++) + "]";
    if (!s.is_object()) throw std::runtime_error(sk + " is not an object");
    rightsizing::WindowSlot slot;
    slot.start_unix = GetNumber(s, "start_unix", sk);
    slot.observed_seconds = GetOptional(s, "observed_seconds", sk).value_or(0);
    slot.peak_memory_bytes = GetOptional(s, "peak_memory_bytes", sk);
    const std::string util = Has(s, "utilization") ? GetString(s, "utilization", sk) : "";
    slot.utilization = DecodeSketch(util, GetCount(s, "utilization_zero", sk), sk);
    r.slots.push_back(std::move(slot));
  }
  return r;
}

// The optional "rightsizing" section: cluster → its workloads' observations.
RightsizingContents DecodeRightsizing(const JsonValue& j) {
  RightsizingContents out;
  if (!j.is_object()) throw std::runtime_error("rightsizing is not an object");
  for (const auto& [key, section] : Items(j)) {
    const std::string cluster(key);
    const std::string where = "rightsizing[\"" + cluster + "\"]";
    if (!section.is_object()) throw std::runtime_error(where + " is not an object");
    rightsizing::RightsizingState& s = out[cluster];
    s.last_cycle_unix = GetOptional(section, "last_cycle_unix", where);
    size_t i = 0;
    for (const JsonValue& w : GetArray(section, "workloads", where).Elements()) {
      rightsizing::WorkloadId id;
      rightsizing::WorkloadRecord r =
          DecodeWorkload(w, where + ".workloads[" + std::to_string(i++) + "]", id);
      s.workloads[std::move(id)] = std::move(r);
    }
  }
  return out;
}

// "seen_pods": the keys the last accounted cycle saw pods under (their records' `seen`), sorted.
void EncodeSeenPods(PrettyJson& j, const std::map<kube::PodId, PodHoursRecord>& records) {
  std::vector<std::string> keys;  // UIDs, and names of pods seen without one
  for (const auto& [id, r] : records)
    if (r.seen == SeenAs::kUid)
      keys.push_back(r.uid.str());
    else if (r.seen == SeenAs::kName)
      keys.push_back(id.Text());
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  j.Key("seen_pods");
  j.Open('[');
  for (std::string_view key : keys) {
    j.Element();
    j.String(key);
  }
  j.Close(']');
}

// Members in key order, as everywhere in the file.
void EncodeAccounting(PrettyJson& j, const AccountingState& s) {
  j.Key("accounting");
  j.Open('{');
  EncodeStrings(j, "cards", s.cards);
  if (!s.currency.empty()) j.Key("currency").String(s.currency);
  if (!s.days.empty()) EncodeDays(j, s.days);
  if (s.last_unix) j.Key("last_unix").Number(*s.last_unix);
  if (!s.namespace_labels.empty()) {
    j.Key("namespace_labels");
    j.Open('[');
    for (const std::string& name : s.namespace_labels) {
      j.Element();
      j.String(name);
    }
    j.Close(']');
  }
  j.Key("namespaces");
  j.Open('[');
  for (const auto& [name, r] : s.namespace_hours) {
    j.Element();
    j.Open('{');
    EncodeGpuHours(j, r.total);
    j.Key("last_seen_unix").Number(r.last_seen_unix);
    j.Key("namespace").String(name);
    j.Close('}');
  }
  j.Close(']');
  j.Key("nodes");
  j.Open('[');
  for (const auto& [name, r] : s.node_idle) {
    j.Element();
    j.Open('{');
    EncodeGpuHours(j, r.total);
    j.Key("last_seen_unix").Number(r.last_seen_unix);
    j.Key("node").String(name);
    j.Close('}');
  }
  j.Close(']');
  j.Key("pods");
  j.Open('[');
  for (const auto& [id, r] : s.pod_hours) {
    j.Element();
    j.Open('{');
    EncodeGpuHours(j, r.total);
    j.Key("namespace").String(id.namespace_);
    j.Key("node").String(r.node);
    j.Key("pod").String(id.name);
    if (!r.uid.empty()) j.Key("uid").String(r.uid.str());
    j.Close('}');
  }
  j.Close(']');
  EncodeSeenPods(j, s.pod_hours);
  j.Close('}');
}

std::string EncodeSketch(const rightsizing::UtilizationSketch& sketch) {
  const std::vector<rightsizing::UtilizationSketch::Bucket> buckets = sketch.buckets();
  if (buckets.empty()) return {};
  std::string out = std::to_string(buckets.front().index) + ":";
  int32_t next = buckets.front().index;
  for (const auto& b : buckets) {
    for (; next < b.index; ++next) out += "0 ";
    out += std::to_string(b.count);
    out += ' ';
    ++next;
  }
  out.pop_back();
  return out;
}

void EncodeWorkload(PrettyJson& j, const rightsizing::WorkloadId& id,
                    const rightsizing::WorkloadRecord& r) {
  j.Element();
  j.Open('{');
  j.Key("current");
  j.Open('{');
  if (r.current.device_memory_bytes)
    j.Key("device_memory_bytes").Number(*r.current.device_memory_bytes);
  j.Key("model").String(r.current.model);
  j.Key("profile").String(r.current.profile);
  j.Key("replicas").Integer(r.current.replicas);
  j.Close('}');
  j.Key("kind").String(id.kind);
  j.Key("last_seen_unix").Number(r.last_seen_unix);
  j.Key("name").String(id.name);
  j.Key("namespace").String(id.namespace_);
  j.Key("slots");
  j.Open('[');
  for (const rightsizing::WindowSlot& s : r.slots) {
    j.Element();
    j.Open('{');
    j.Key("observed_seconds").Number(s.observed_seconds);
    if (s.peak_memory_bytes) j.Key("peak_memory_bytes").Number(*s.peak_memory_bytes);
    j.Key("start_unix").Number(s.start_unix);
    j.Key("utilization").String(EncodeSketch(s.utilization));
    j.Key("utilization_zero").Number(static_cast<double>(s.utilization.zero_count()));
    j.Close('}');
  }
  j.Close(']');
  j.Close('}');
}

void EncodeRightsizing(
    PrettyJson& j,
    const std::map<std::string_view, const rightsizing::RightsizingState*>& contents) {
  j.Key("rightsizing");
  j.Open('{');
  for (const auto& [cluster, state] : contents) {
    const rightsizing::RightsizingState& s = *state;
    j.Key(cluster);
    j.Open('{');
    if (s.last_cycle_unix) j.Key("last_cycle_unix").Number(*s.last_cycle_unix);
    j.Key("workloads");
    j.Open('[');
    for (const auto& [id, r] : s.workloads) EncodeWorkload(j, id, r);
    j.Close(']');
    j.Close('}');
  }
  j.Close('}');
}

}  // namespace

StateFileSections SectionsOf(const StateFileContents& contents,
                             const RightsizingContents* rightsizing) {
  StateFileSections sections;
  for (const auto& [cluster, s] : contents) sections.clusters.emplace(cluster, &s);
  if (rightsizing)
    for (const auto& [cluster, s] : *rightsizing) sections.rightsizing.emplace(cluster, &s);
  return sections;
}

void EncodeStateFile(const StateFileContents& contents,
                     const std::function<void(std::string_view)>& sink,
                     const RightsizingContents* rightsizing) {
  EncodeStateFile(SectionsOf(contents, rightsizing), sink);
}

void EncodeStateFile(const StateFileSections& sections,
                     const std::function<void(std::string_view)>& sink) {
  PrettyJson j(sink);
  j.Open('{');
  j.Key("clusters");
  j.Open('{');
  for (const auto& [cluster, state] : sections.clusters) {
    const LedgerState& s = *state;
    j.Key(cluster);
    j.Open('{');
    if (!s.accounting.empty()) EncodeAccounting(j, s.accounting);
    if (s.last_cycle_unix) j.Key("last_cycle_unix").Number(*s.last_cycle_unix);
    j.Key("namespaces");
    j.Open('[');
    for (const auto& [name, r] : s.namespaces) {
      j.Element();
      j.Open('{');
      j.Key("joules").Number(r.joules);
      j.Key("last_seen_unix").Number(r.last_seen_unix);
      if (!r.marks.empty()) {
        j.Key("marks");
        j.Open('[');
        for (const EnergyMark& m : r.marks) {
          j.Element();
          j.Open('{');
          j.Key("joules").Number(m.joules);
          j.Key("unix").Number(m.unix);
          j.Close('}');
        }
        j.Close(']');
      }
      j.Key("namespace").String(name);
      j.Close('}');
    }
    j.Close(']');
    j.Key("pods");
    j.Open('[');
    for (const auto& [id, r] : s.pods) {
      j.Element();
      j.Open('{');
      if (r.idle_since_unix) j.Key("idle_since_unix").Number(*r.idle_since_unix);
      if (r.joules) j.Key("joules").Number(*r.joules);
      if (r.last_idle_unix) j.Key("last_idle_unix").Number(*r.last_idle_unix);
      if (r.last_power_unix) j.Key("last_power_unix").Number(*r.last_power_unix);
      if (r.last_power_watts) j.Key("last_power_watts").Number(*r.last_power_watts);
      j.Key("namespace").String(id.namespace_);
      j.Key("node").String(r.node);
      j.Key("pod").String(id.name);
      if (!r.uid.empty()) j.Key("uid").String(r.uid.str());
      j.Close('}');
    }
    j.Close(']');
    j.Close('}');
  }
  j.Close('}');
  j.Key("format").String(kStateFormat);
  if (!sections.rightsizing.empty()) EncodeRightsizing(j, sections.rightsizing);
  j.Key("version").Integer(kStateVersion);
  j.Close('}');
  j.Raw("\n");
  j.Flush();
}

std::string EncodeStateFile(const StateFileContents& contents,
                            const RightsizingContents* rightsizing) {
  std::string out;
  EncodeStateFile(
      contents, [&](std::string_view chunk) { out.append(chunk); }, rightsizing);
  return out;
}

Result<StateFileContents> DecodeStateFile(std::string_view text, RightsizingContents* rightsizing) {
  // nlohmann skipped a UTF-8 byte order mark (an editor's); JsonDocument, strict, would refuse it.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  // The project's tape parser (util/json_document.h), not nlohmann's DOM: at 16,000 pods the DOM
  // alone took longer than the whole load may (docs/accounting.md#loading-time).
  Result<JsonDocument> doc = JsonDocument::Parse(std::string(text));
  if (!doc.ok()) return MakeError(ErrorCode::kInvalidArgument, doc.error().message);
  try {
    const JsonValue root = doc->Root();
    if (root.Find("format").str() != kStateFormat)  // "" when absent, not a string or no object
      return MakeError(ErrorCode::kInvalidArgument,
                       "not a gpuattr state file (no \"format\": \"gpuattr-state\")");
    // Version 1 files (before GPU-hours) load with empty accounting.
    const std::optional<JsonValue> version = Member(root, "version");
    if (!version || !version->is_integer() || version->integer() < kOldestStateVersion ||
        version->integer() > kStateVersion)
      return MakeError(ErrorCode::kInvalidArgument,
                       "unsupported state file version " + (version ? Dump(*version) : "(none)") +
                           " (this gpuattr reads versions " + std::to_string(kOldestStateVersion) +
                           " to " + std::to_string(kStateVersion) + ")");
    StateFileContents out;
    if (rightsizing) rightsizing->clear();
    // Optional (docs/rightsizing.md#in-the-state-file): older files have none.
    if (const std::optional<JsonValue> rs = Member(root, "rightsizing")) {
      RightsizingContents decoded = DecodeRightsizing(*rs);
      if (rightsizing) *rightsizing = std::move(decoded);
    }
    const std::optional<JsonValue> clusters = Member(root, "clusters");
    if (!clusters) return out;
    if (!clusters->is_object())
      return MakeError(ErrorCode::kInvalidArgument, "clusters is not an object");
    for (const auto& [key, section] : Items(*clusters)) {
      const std::string cluster(key);
      out[cluster] = DecodeCluster(section, "clusters[\"" + cluster + "\"]");
    }
    return out;
  } catch (const std::exception& e) {  // our format errors naming the field; bad_alloc
    return MakeError(ErrorCode::kInvalidArgument, e.what());
  }
}

}  // namespace gpuattr::ledger
