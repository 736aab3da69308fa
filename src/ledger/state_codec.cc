// State file JSON ↔ LedgerState. nlohmann exceptions stop here and become errors.
#include "gpuattr/ledger/state_codec.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace gpuattr::ledger {
namespace {

using nlohmann::json;

void PutOptional(json& j, const char* key, const std::optional<double>& v) {
  if (v) j[key] = *v;
}

// A finite number at `key`, or absent. Anything else is a format error.
std::optional<double> GetOptional(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_number() || !std::isfinite(it->get<double>()))
    throw std::runtime_error(where + "." + key + " is not a finite number");
  return it->get<double>();
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

LedgerState DecodeCluster(const json& j, const std::string& where) {
  if (!j.is_object()) throw std::runtime_error(where + " is not an object");
  LedgerState s;
  s.last_cycle_unix = GetOptional(j, "last_cycle_unix", where);
  const json& pods = GetArray(j, "pods", where);
  for (size_t i = 0; i < pods.size(); ++i) {
    const std::string at = where + ".pods[" + std::to_string(i) + "]";
    const json& p = pods[i];
    if (!p.is_object()) throw std::runtime_error(at + " is not an object");
    kube::PodId id{GetString(p, "namespace", at), GetString(p, "pod", at)};
    PodRecord r;
    if (p.contains("uid")) r.uid = GetString(p, "uid", at);
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
  const json& namespaces = GetArray(j, "namespaces", where);
  for (size_t i = 0; i < namespaces.size(); ++i) {
    const std::string at = where + ".namespaces[" + std::to_string(i) + "]";
    const json& n = namespaces[i];
    if (!n.is_object()) throw std::runtime_error(at + " is not an object");
    NamespaceRecord r;
    r.joules = GetNumber(n, "joules", at);
    r.last_seen_unix = GetOptional(n, "last_seen_unix", at).value_or(0);
    const json& marks = GetArray(n, "marks", at);  // absent in files of older versions
    for (size_t k = 0; k < marks.size(); ++k) {
      const std::string mk = at + ".marks[" + std::to_string(k) + "]";
      if (!marks[k].is_object()) throw std::runtime_error(mk + " is not an object");
      r.marks.push_back({GetNumber(marks[k], "unix", mk), GetNumber(marks[k], "joules", mk)});
    }
    s.namespaces[GetString(n, "namespace", at)] = r;
  }
  return s;
}

}  // namespace

std::string EncodeStateFile(const StateFileContents& contents) {
  json clusters = json::object();
  for (const auto& [cluster, s] : contents) {
    json c = json::object();
    PutOptional(c, "last_cycle_unix", s.last_cycle_unix);
    json pods = json::array();
    for (const auto& [id, r] : s.pods) {
      json p = {{"namespace", id.namespace_}, {"pod", id.name}, {"node", r.node}};
      if (!r.uid.empty()) p["uid"] = r.uid;
      PutOptional(p, "idle_since_unix", r.idle_since_unix);
      PutOptional(p, "last_idle_unix", r.last_idle_unix);
      PutOptional(p, "joules", r.joules);
      PutOptional(p, "last_power_watts", r.last_power_watts);
      PutOptional(p, "last_power_unix", r.last_power_unix);
      pods.push_back(std::move(p));
    }
    c["pods"] = std::move(pods);
    json namespaces = json::array();
    for (const auto& [name, r] : s.namespaces) {
      json n = {{"namespace", name}, {"joules", r.joules}, {"last_seen_unix", r.last_seen_unix}};
      if (!r.marks.empty()) {
        json marks = json::array();
        for (const EnergyMark& m : r.marks)
          marks.push_back({{"unix", m.unix}, {"joules", m.joules}});
        n["marks"] = std::move(marks);
      }
      namespaces.push_back(std::move(n));
    }
    c["namespaces"] = std::move(namespaces);
    clusters[cluster] = std::move(c);
  }
  json root = {{"format", kStateFormat}, {"version", kStateVersion}, {"clusters", clusters}};
  // Names come from Kubernetes and are valid UTF-8; replace rather than throw if one is not.
  return root.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<StateFileContents> DecodeStateFile(std::string_view text) {
  try {
    const json root = json::parse(text);
    if (!root.is_object() || !root.contains("format") || !root["format"].is_string() ||
        root["format"].get<std::string>() != kStateFormat)
      return MakeError(ErrorCode::kInvalidArgument,
                       "not a gpuattr state file (no \"format\": \"gpuattr-state\")");
    if (!root.contains("version") || !root["version"].is_number_integer() ||
        root["version"].get<int>() != kStateVersion)
      return MakeError(ErrorCode::kInvalidArgument,
                       "unsupported state file version " +
                           (root.contains("version") ? root["version"].dump() : "(none)") +
                           " (this gpuattr reads version " + std::to_string(kStateVersion) + ")");
    StateFileContents out;
    auto it = root.find("clusters");
    if (it == root.end()) return out;
    if (!it->is_object())
      return MakeError(ErrorCode::kInvalidArgument, "clusters is not an object");
    for (const auto& [cluster, section] : it->items())
      out[cluster] = DecodeCluster(section, "clusters[\"" + cluster + "\"]");
    return out;
  } catch (const std::exception& e) {  // json::exception, and our own format errors
    return MakeError(ErrorCode::kInvalidArgument, e.what());
  }
}

}  // namespace gpuattr::ledger
