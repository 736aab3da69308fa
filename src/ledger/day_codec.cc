// The daily totals in the state file (docs/accounting.md#daily-totals): per cluster, under
// "accounting", a list of days, each with its date, the cards' hours, idle, and per namespace
// its hours (and cost, once priced) and its labels:
//
//   "days": [{"cards": {"hours": {"allocation": 24.0, "memory": 24.0, "usage": 24.0}},
//             "day": "2026-12-03",
//             "idle": {"hours": {"allocation": 4.0, "memory": 6.5, "usage": 15.25}},
//             "namespaces": [{"hours": {...}, "labels": {"team": "vision"}, "namespace": "ml"}]}]
#include "codec_parts.h"
#include "gpuattr/util/utc_day.h"

namespace gpuattr::ledger::codec {
namespace {

void EncodeHoursObject(PrettyJson& j, const char* key, const GpuHours& g) {
  j.Key(key);
  j.Open('{');
  EncodeGpuHours(j, g);
  j.Close('}');
}

GpuHours DecodeHoursObject(const JsonValue& j, std::string_view key, const std::string& where) {
  const std::optional<JsonValue> v = Member(j, key);
  if (!v) return {};
  const std::string at = where + "." + std::string(key);
  if (!v->is_object()) throw std::runtime_error(at + " is not an object");
  return GetGpuHours(*v, at);
}

NamespaceDay DecodeNamespaceDay(const JsonValue& j, const std::string& at, std::string& name) {
  if (!j.is_object()) throw std::runtime_error(at + " is not an object");
  name = GetString(j, "namespace", at);
  NamespaceDay ns{GetGpuHours(j, at), {}};
  if (const std::optional<JsonValue> labels = Member(j, "labels")) {
    if (!labels->is_object()) throw std::runtime_error(at + ".labels is not an object");
    for (const auto& [key, value] : Items(*labels)) {
      if (!value.is_string())
        throw std::runtime_error(at + ".labels." + std::string(key) + " is not a string");
      ns.labels[std::string(key)] = std::string(value.str());
    }
  }
  return ns;
}

}  // namespace

void EncodeDays(PrettyJson& j, const std::map<UtcDay, DayTotals>& days) {
  j.Key("days");
  j.Open('[');
  for (const auto& [day, totals] : days) {
    j.Element();
    j.Open('{');
    EncodeHoursObject(j, "cards", totals.cards);
    j.Key("day").String(UtcDayText(day));
    EncodeHoursObject(j, "idle", totals.idle);
    j.Key("namespaces");
    j.Open('[');
    for (const auto& [name, ns] : totals.namespaces) {
      j.Element();
      j.Open('{');
      EncodeGpuHours(j, ns.total);
      if (!ns.labels.empty()) {
        j.Key("labels");
        j.Open('{');
        for (const auto& [key, value] : ns.labels) j.Key(key).String(value);
        j.Close('}');
      }
      j.Key("namespace").String(name);
      j.Close('}');
    }
    j.Close(']');
    j.Close('}');
  }
  j.Close(']');
}

std::map<UtcDay, DayTotals> DecodeDays(const JsonValue& j, const std::string& where) {
  std::map<UtcDay, DayTotals> out;
  size_t i = 0;
  for (const JsonValue& d : GetArray(j, "days", where).Elements()) {
    const std::string at = where + ".days[" + std::to_string(i++) + "]";
    if (!d.is_object()) throw std::runtime_error(at + " is not an object");
    const std::string text = GetString(d, "day", at);
    const std::optional<int64_t> day = ParseUtcDay(text);
    if (!day) throw std::runtime_error(at + ".day \"" + text + "\" is not a date (YYYY-MM-DD)");
    DayTotals& totals = out[*day];
    totals.cards = DecodeHoursObject(d, "cards", at);
    totals.idle = DecodeHoursObject(d, "idle", at);
    size_t k = 0;
    for (const JsonValue& n : GetArray(d, "namespaces", at).Elements()) {
      std::string name;
      NamespaceDay ns =
          DecodeNamespaceDay(n, at + ".namespaces[" + std::to_string(k++) + "]", name);
      totals.namespaces[name] = std::move(ns);
    }
  }
  return out;
}

}  // namespace gpuattr::ledger::codec
