// The codec's shared readers and writers (codec_parts.h).
#include <cmath>

#include "codec_parts.h"

namespace gpuattr::ledger::codec {
namespace {

// Every number the ledger keeps (joules, watts, Unix times) is >= 0, and none comes near 1e18
// (a 10 kW pod for a century is 3e13 J): a file saying otherwise was edited or damaged, and its
// values must not be published (docs/security.md#the-process).
constexpr double kMaxStateNumber = 1e18;

}  // namespace

// A number in [0, kMaxStateNumber] at `key`, or absent. Anything else is a format error.
std::optional<double> GetOptional(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_number() || !std::isfinite(it->get<double>()))
    throw std::runtime_error(where + "." + key + " is not a finite number");
  const double v = it->get<double>();
  if (v < 0 || v > kMaxStateNumber)
    throw std::runtime_error(where + "." + key + " is out of range (" + it->dump() +
                             "; the state file holds numbers from 0 to 1e18)");
  return v;
}

double GetNumber(const json& j, const char* key, const std::string& where) {
  auto v = GetOptional(j, key, where);
  if (!v) throw std::runtime_error(where + "." + key + " is missing");
  return *v;
}

std::string GetString(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string())
    throw std::runtime_error(where + "." + key + " is not a string");
  return it->get<std::string>();
}

const json& GetArray(const json& j, const char* key, const std::string& where) {
  static const json kEmpty = json::array();
  auto it = j.find(key);
  if (it == j.end()) return kEmpty;
  if (!it->is_array()) throw std::runtime_error(where + "." + key + " is not a list");
  return *it;
}

accounting::PerBasis GetPerBasis(const json& j, const char* key, const std::string& where) {
  accounting::PerBasis out{};
  auto it = j.find(key);
  if (it == j.end()) return out;
  if (!it->is_object()) throw std::runtime_error(where + "." + key + " is not an object");
  for (accounting::Basis b : accounting::kAllBases)
    At(out, b) = GetOptional(*it, std::string(BasisName(b)).c_str(), where + "." + key).value_or(0);
  return out;
}

GpuHours GetGpuHours(const json& j, const std::string& where) {
  GpuHours g;
  g.hours = GetPerBasis(j, "hours", where);
  g.priced = j.contains("cost");
  g.cost = GetPerBasis(j, "cost", where);
  return g;
}

std::set<std::string> GetStrings(const json& j, const char* key, const std::string& where) {
  std::set<std::string> out;
  const json& list = GetArray(j, key, where);
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string())
      throw std::runtime_error(where + "." + key + "[" + std::to_string(i) + "] is not a string");
    out.insert(list[i].get<std::string>());
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

void EncodeStrings(PrettyJson& j, const char* key, const std::set<std::string>& strings) {
  j.Key(key);
  j.Open('[');
  for (const std::string& s : strings) {
    j.Element();
    j.String(s);
  }
  j.Close(']');
}

}  // namespace gpuattr::ledger::codec
