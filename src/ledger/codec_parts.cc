// The codec's shared readers and writers (codec_parts.h).
#include <cmath>
#include <map>

#include "codec_parts.h"

namespace gpuattr::ledger::codec {
namespace {

// Every number the ledger keeps (joules, watts, Unix times) is >= 0, and none comes near 1e18
// (a 10 kW pod for a century is 3e13 J): a file saying otherwise was edited or damaged, and its
// values must not be published (docs/security.md#the-process).
constexpr double kMaxStateNumber = 1e18;

}  // namespace

std::optional<JsonValue> Member(const JsonValue& j, std::string_view key) {
  std::optional<JsonValue> found;
  for (const JsonMember& m : j.Members())
    if (m.key == key) found = m.value;
  return found;
}

std::vector<JsonMember> Items(const JsonValue& j) {
  std::map<std::string_view, JsonValue> sorted;
  for (const JsonMember& m : j.Members()) sorted[m.key] = m.value;
  std::vector<JsonMember> out;
  out.reserve(sorted.size());
  for (const auto& [key, value] : sorted) out.push_back({key, value});
  return out;
}

namespace {

json ToJson(const JsonValue& v) {
  switch (v.type()) {
    case JsonType::kNull:
      return nullptr;
    case JsonType::kBoolean:
      return v.boolean();
    case JsonType::kInteger:
      return v.integer();
    case JsonType::kFloat:
      return v.number();
    case JsonType::kString:
      return std::string(v.str());
    case JsonType::kArray: {
      json out = json::array();
      for (const JsonValue& e : v.Elements()) out.push_back(ToJson(e));
      return out;
    }
    case JsonType::kObject: {
      json out = json::object();
      for (const JsonMember& m : v.Members()) out[std::string(m.key)] = ToJson(m.value);
      return out;
    }
  }
  return nullptr;
}

}  // namespace

std::string Dump(const JsonValue& v) { return ToJson(v).dump(); }

// A number in [0, kMaxStateNumber] at `key`, or absent. Anything else is a format error. The
// parser refuses numbers no double holds, so every number is finite here.
std::optional<double> GetOptional(const JsonValue& j, std::string_view key,
                                  const std::string& where) {
  const JsonValue v = j.Find(key);
  if (v.is_null()) return std::nullopt;
  if (!v.is_number() || !std::isfinite(v.number()))
    throw std::runtime_error(where + "." + std::string(key) + " is not a finite number");
  const double d = v.number();
  if (d < 0 || d > kMaxStateNumber)
    throw std::runtime_error(where + "." + std::string(key) + " is out of range (" + Dump(v) +
                             "; the state file holds numbers from 0 to 1e18)");
  return d;
}

double GetNumber(const JsonValue& j, std::string_view key, const std::string& where) {
  auto v = GetOptional(j, key, where);
  if (!v) throw std::runtime_error(where + "." + std::string(key) + " is missing");
  return *v;
}

std::string GetString(const JsonValue& j, std::string_view key, const std::string& where) {
  const JsonValue v = j.Find(key);
  if (!v.is_string()) throw std::runtime_error(where + "." + std::string(key) + " is not a string");
  return std::string(v.str());
}

JsonValue GetArray(const JsonValue& j, std::string_view key, const std::string& where) {
  const std::optional<JsonValue> v = Member(j, key);
  if (!v) return JsonValue();  // no elements
  if (!v->is_array()) throw std::runtime_error(where + "." + std::string(key) + " is not a list");
  return *v;
}

accounting::PerBasis GetPerBasis(const JsonValue& j, std::string_view key,
                                 const std::string& where) {
  accounting::PerBasis out{};
  const std::optional<JsonValue> v = Member(j, key);
  if (!v) return out;
  if (!v->is_object())
    throw std::runtime_error(where + "." + std::string(key) + " is not an object");
  const std::string at = where + "." + std::string(key);
  for (accounting::Basis b : accounting::kAllBases)
    At(out, b) = GetOptional(*v, BasisName(b), at).value_or(0);
  return out;
}

GpuHours GetGpuHours(const JsonValue& j, const std::string& where) {
  GpuHours g;
  g.hours = GetPerBasis(j, "hours", where);
  g.priced = Has(j, "cost");
  g.cost = GetPerBasis(j, "cost", where);
  return g;
}

KeySet GetStrings(const JsonValue& j, std::string_view key, const std::string& where) {
  KeySet out;
  size_t i = 0;
  for (const JsonValue& e : GetArray(j, key, where).Elements()) {
    if (!e.is_string())
      throw std::runtime_error(where + "." + std::string(key) + "[" + std::to_string(i) +
                               "] is not a string");
    out.emplace(e.str());
    ++i;
  }
  return out;
}

void EncodePerBasis(PrettyJson& j, const char* key, const accounting::PerBasis& v) {
  j.Key(key);
  j.Open('{');
  for (accounting::Basis b : accounting::kAllBases) j.Key(BasisName(b)).Number(At(v, b));
  j.Close('}');
}

void EncodeGpuHours(PrettyJson& j, const GpuHours& g) {
  if (g.priced) EncodePerBasis(j, "cost", g.cost);
  EncodePerBasis(j, "hours", g.hours);
}

void EncodeStrings(PrettyJson& j, const char* key, const KeySet& strings) {
  j.Key(key);
  j.Open('[');
  for (const std::string& s : strings) {
    j.Element();
    j.String(s);
  }
  j.Close(']');
}

}  // namespace gpuattr::ledger::codec
