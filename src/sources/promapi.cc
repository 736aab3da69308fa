#include "gpuattr/sources/promapi.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "gpuattr/sources/aliases.h"
#include "gpuattr/sources/dcgm.h"
#include "gpuattr/sources/label_budget.h"
#include "gpuattr/sources/process.h"

namespace gpuattr::sources {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 7> kDroppedTargetLabels = {
    "instance", "job", "endpoint", "service", "prometheus", "prometheus_replica", "__replica__"};
// Where Prometheus relabelling usually puts the scraped pod's node, in order of preference.
constexpr std::array<std::string_view, 3> kNodeLabels = {"node", "kubernetes_node", "nodename"};
constexpr std::array<std::string_view, 2> kHostnameLabels = {"Hostname", "hostname"};
constexpr std::string_view kExportedPrefix = "exported_";

// Prometheus writes sample values as strings: "12.5", "NaN", "+Inf", "-Inf".
std::optional<double> ParseSampleValue(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// A member's text when it is a string, else "": json::value() throws when the member holds
// another type, and an answer is untrusted input ({"status": 1} once aborted the daemon).
std::string TextMember(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// At most 300 bytes of a server-supplied message, as the apiserver's (kube/api_client.cc).
std::string Clipped(std::string text) {
  if (text.size() > 300) text = text.substr(0, 300) + "...";
  return text;
}

std::string Describe(std::string_view source, std::string_view what) {
  return std::string(source) + ": " + std::string(what);
}

std::string_view Find(const std::map<std::string, std::string>& m, std::string_view key) {
  auto it = m.find(std::string(key));
  return it == m.end() ? std::string_view() : std::string_view(it->second);
}

// The label budget (label_budget.h) over a series' names and values; "" when it holds.
std::string_view LabelsVerdict(const LabelPairs& labels) {
  for (const auto& [name, value] : labels) {
    if (std::string_view why = LabelTextVerdict(value); !why.empty()) return why;
    if (std::string_view why = LabelTextVerdict(name); !why.empty()) return why;
  }
  return {};
}

}  // namespace

Result<DecodedQuery> DecodeQueryResponse(std::string_view body, std::string_view source) {
  json doc;
  try {
    doc = json::parse(body);
  } catch (const json::exception& e) {
    return MakeError(ErrorCode::kInvalidArgument,
                     Describe(source, std::string("answer is not JSON: ") + e.what()));
  }
  if (!doc.is_object())
    return MakeError(ErrorCode::kInvalidArgument, Describe(source, "answer is not a JSON object"));
  const std::string status = TextMember(doc, "status");
  if (status != "success") {
    std::string why = "query failed (status \"" + Clipped(status) + "\")";
    if (const std::string error = TextMember(doc, "error"); !error.empty()) {
      const std::string type = TextMember(doc, "errorType");
      why += ": " + Clipped(type.empty() ? "error" : type) + ": " + Clipped(error);
    }
    return MakeError(ErrorCode::kInvalidArgument, Describe(source, why));
  }
  if (!doc.contains("data") || !doc["data"].is_object())
    return MakeError(ErrorCode::kInvalidArgument, Describe(source, "answer has no \"data\""));
  const json& data = doc["data"];
  const std::string type = TextMember(data, "resultType");
  if (type != "vector")
    return MakeError(
        ErrorCode::kInvalidArgument,
        Describe(source, "resultType is \"" + Clipped(type) + "\", expected \"vector\""));
  if (!data.contains("result") || !data["result"].is_array())
    return MakeError(ErrorCode::kInvalidArgument, Describe(source, "answer has no result array"));

  DecodedQuery out;
  out.series.reserve(data["result"].size());
  auto invalid = [&](size_t i, const std::string& why) {
    if (out.invalid_series++ == 0) out.first_invalid = "result " + std::to_string(i) + ": " + why;
  };
  size_t i = 0;
  for (const json& item : data["result"]) {
    const size_t index = i++;
    if (!item.is_object() || !item.contains("metric") || !item["metric"].is_object()) {
      invalid(index, "no \"metric\" object");
      continue;
    }
    if (!item.contains("value") || !item["value"].is_array() || item["value"].size() != 2 ||
        !item["value"][0].is_number() || !item["value"][1].is_string()) {
      invalid(index, "\"value\" is not [timestamp, \"number\"]");
      continue;
    }
    auto value = ParseSampleValue(item["value"][1].get_ref<const std::string&>());
    if (!value) {
      invalid(index,
              "value \"" + Clipped(item["value"][1].get<std::string>()) + "\" is not a number");
      continue;
    }
    QuerySeries s;
    s.value = *value;
    s.timestamp = item["value"][0].get<double>();
    bool labels_ok = true;
    for (const auto& [k, v] : item["metric"].items()) {
      if (!v.is_string()) {
        labels_ok = false;
        break;
      }
      s.labels.emplace_back(k, v.get<std::string>());
    }
    if (!labels_ok) {
      invalid(index, "a label value is not a string");
      continue;
    }
    std::sort(s.labels.begin(), s.labels.end());
    out.series.push_back(std::move(s));
  }
  return out;
}

bool IsDroppedTargetLabel(std::string_view name) {
  return std::find(kDroppedTargetLabels.begin(), kDroppedTargetLabels.end(), name) !=
         kDroppedTargetLabels.end();
}

std::optional<RepairedSeries> RepairSeries(const QuerySeries& series, const PodLookup& lookup) {
  // Empty values are absent, as in the exposition readers.
  std::map<std::string, std::string> labels, exported;
  for (const auto& [k, v] : series.labels) {
    if (v.empty()) continue;
    if (k.size() > kExportedPrefix.size() && k.starts_with(kExportedPrefix))
      exported[k.substr(kExportedPrefix.size())] = v;
    else
      labels[k] = v;
  }
  RepairedSeries r;
  r.value = series.value;
  r.timestamp = series.timestamp;
  if (auto it = labels.find("__name__"); it != labels.end()) {
    r.name = it->second;
    labels.erase(it);
  } else {
    return std::nullopt;
  }

  // The pod Prometheus scraped, when the series names it: its node is the device's node.
  std::string scraped_ns, scraped_pod;
  const bool has_exported_pod = exported.count("pod") > 0;
  // The classic relabelling's target labels (exported_kubernetes_* would be the body's own).
  const std::string classic_ns(Find(labels, "kubernetes_namespace")),
      classic_pod(Find(labels, "kubernetes_pod_name"));
  if (!classic_pod.empty()) r.targets.push_back({classic_ns, classic_pod});
  if (has_exported_pod) {
    // The target's pod labels name the scrape target; the exported_ ones below replace them.
    scraped_ns = std::string(Find(labels, "namespace"));
    scraped_pod = std::string(Find(labels, "pod"));
    labels.erase("namespace");
    labels.erase("pod");
    labels.erase("container");
  } else if (labels.count("pod")) {
    const std::string ns(Find(labels, "namespace")), pod(Find(labels, "pod"));
    // dcgm-exporter's -o mode names the workload pod_name/pod_namespace: then `pod` can only be
    // the scrape target's.
    const bool own_spelling = labels.count("pod_name") || labels.count("pod_namespace");
    if (own_spelling || (lookup.is_exporter && lookup.is_exporter(ns, pod))) {
      scraped_ns = ns;
      scraped_pod = pod;
      labels.erase("namespace");
      labels.erase("pod");
      labels.erase("container");
    } else if (!classic_pod.empty()) {
      r.workload = kube::PodId{ns, pod};
    }
  }
  if (!scraped_pod.empty()) r.targets.push_back({scraped_ns, scraped_pod});
  // exported_<x> is what the exporter itself said: it wins.
  for (auto& [k, v] : exported) labels[k] = std::move(v);

  for (std::string_view n : kNodeLabels) {
    auto it = labels.find(std::string(n));
    if (it == labels.end()) continue;
    if (r.node.empty()) r.node = it->second;
    labels.erase(it);
  }
  if (r.node.empty() && !r.targets.empty() && lookup.node_of)
    r.node = lookup.node_of(r.targets.back().namespace_, r.targets.back().name);
  for (std::string_view n : kHostnameLabels) {
    if (!r.node.empty()) break;
    r.node = std::string(Find(labels, n));
  }
  for (auto it = labels.begin(); it != labels.end();)
    it = IsDroppedTargetLabel(it->first) ? labels.erase(it) : std::next(it);
  r.labels.assign(std::make_move_iterator(labels.begin()), std::make_move_iterator(labels.end()));
  return r;
}

size_t DeduplicateReplicas(std::vector<RepairedSeries>& series) {
  std::map<std::tuple<std::string, LabelPairs, std::string>, size_t> first_of;
  std::vector<bool> keep(series.size(), true);
  size_t dropped = 0;
  for (size_t i = 0; i < series.size(); ++i) {
    const RepairedSeries& s = series[i];
    auto [it, added] = first_of.try_emplace({s.name, s.labels, s.node}, i);
    if (added) continue;
    ++dropped;
    keep[i] = false;
    RepairedSeries& kept = series[it->second];
    if (s.timestamp > kept.timestamp) {  // the fresher replica's value, at the first one's place
      kept.value = s.value;
      kept.timestamp = s.timestamp;
    }
  }
  if (dropped == 0) return 0;
  size_t w = 0;
  for (size_t i = 0; i < series.size(); ++i) {
    if (!keep[i]) continue;
    if (w != i) series[w] = std::move(series[i]);
    ++w;
  }
  series.resize(w);
  return dropped;
}

expo::Exposition SamplesAsExposition(const std::vector<RepairedSeries>& series) {
  expo::Exposition ex;
  ex.samples.reserve(series.size());
  for (size_t i = 0; i < series.size(); ++i) {
    const RepairedSeries& s = series[i];
    expo::Sample sample;
    sample.name = s.name;
    sample.value = s.value;
    sample.label_begin = static_cast<uint32_t>(ex.labels.size());
    sample.label_count = static_cast<uint32_t>(s.labels.size());
    sample.line = static_cast<uint32_t>(i + 1);
    for (const auto& [k, v] : s.labels) ex.labels.push_back(expo::Label{k, v});
    ex.samples.push_back(sample);
  }
  return ex;
}

std::vector<PromNodeReadings> ReadPromSeries(const std::vector<RepairedSeries>& series,
                                             const BodyLimits& limits,
                                             std::vector<std::string>* rejected) {
  // Per node: the dcgm series and the per-process series, kept in answer order.
  std::map<std::string, std::pair<std::vector<RepairedSeries>, std::vector<RepairedSeries>>>
      by_node;
  for (const RepairedSeries& s : series) {
    if (LookupProcessMetric(s.name)) {
      by_node[s.node].second.push_back(s);
    } else if (IsDcgmFamily(s.name)) {
      by_node[s.node].first.push_back(s);
    }
  }
  std::vector<PromNodeReadings> out;
  for (const auto& [node, groups] : by_node) {
    PromNodeReadings n;
    n.node = node;
    LimitBreach breach;
    const size_t samples = groups.first.size() + groups.second.size();
    if (samples > limits.samples) breach = {"samples", limits.samples, samples, ""};
    if (breach.limit.empty() && !groups.first.empty())
      n.dcgm = ReadDcgm(SamplesAsExposition(groups.first), limits, &breach);
    if (breach.limit.empty() && !groups.second.empty())
      n.process = ReadProcess(SamplesAsExposition(groups.second), limits, &breach);
    if (!breach.limit.empty()) {  // the node's share is rejected whole, as an exporter body is
      if (rejected) rejected->push_back("node " + node + ": " + breach.Describe());
      continue;
    }
    out.push_back(std::move(n));
  }
  return out;
}

Result<QueryAnswer> ReadQueryAnswer(std::string_view body, std::string_view source,
                                    const PodLookup& lookup, const BodyLimits& limits) {
  Result<DecodedQuery> decoded = DecodeQueryResponse(body, source);
  if (!decoded) return decoded.error();
  QueryAnswer out;
  out.invalid_series = decoded->invalid_series;
  out.first_invalid = std::move(decoded->first_invalid);
  std::vector<RepairedSeries> series;
  series.reserve(decoded->series.size());
  for (const QuerySeries& s : decoded->series) {
    if (std::string_view why = LabelsVerdict(s.labels); !why.empty()) {  // label_budget.h
      ++out.rejected[std::string(why)];
      continue;
    }
    auto r = RepairSeries(s, lookup);
    if (!r) {
      ++out.unnamed_series;
      continue;
    }
    if (lookup.judge) {
      if (std::string_view why = lookup.judge(*r); !why.empty()) {
        ++out.rejected[std::string(why)];
        continue;
      }
    }
    series.push_back(std::move(*r));
  }
  DeduplicateReplicas(series);
  out.nodes = ReadPromSeries(series, limits, &out.rejected_nodes);
  return out;
}

std::vector<std::string> NeededFamilies() {
  std::set<std::string> names;
  for (const DcgmFieldAlias& a : DcgmFieldAliases()) names.emplace(a.name);
  for (const ProcessMetricAlias& a : ProcessMetricAliases()) names.emplace(a.name);
  return {names.begin(), names.end()};
}

std::string NeededFamiliesSelector() {
  std::string s = "{__name__=~\"";
  bool first = true;
  for (const std::string& n : NeededFamilies()) {
    if (!first) s.push_back('|');
    first = false;
    s += n;  // metric names hold only [a-zA-Z0-9_:], nothing a regex would read specially
  }
  s += "\"}";
  return s;
}

std::string ProbeQuery() { return "count by (__name__) (" + NeededFamiliesSelector() + ")"; }

std::string DataQuery() { return NeededFamiliesSelector(); }

}  // namespace gpuattr::sources
