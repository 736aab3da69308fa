// `gpuattr report --output json` (docs/accounting.md#the-report): one object, numbers as plain
// decimals (no exponent, 9 places at most), null where there is no value.
//
//   {"report": "gpuattr-cost", "version": 1, "cluster": "demo", "from": "2026-12-01",
//    "to": "2026-12-03", "group_by": "namespace", "team_label": "team", "days_with_data": 3,
//    "currency": "USD",
//    "groups": [{"name": "ml", "namespaces": ["ml"],
//                "gpu_hours": {"allocation": 12.5, "memory": 12.5, "usage": 3.25},
//                "waste_gpu_hours": 9.25, "cost": {...} | null, "waste_cost": 27.75 | null}],
//    "idle": {...}, "total": {...}, "cards": {...},
//    "check": {"balanced": true, "tolerance": 0.000000001}}
#include <nlohmann/json.hpp>

#include "gpuattr/report/cost_report.h"
#include "gpuattr/util/utc_day.h"

namespace gpuattr::report {
namespace {

constexpr int kPlaces = 9;

std::string Str(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string PerBasis(const accounting::PerBasis& v) {
  std::string out = "{";
  for (accounting::Basis b : accounting::kAllBases)
    out +=
        (out.size() > 1 ? ", " : "") + Str(BasisName(b)) + ": " + PlainDecimal(At(v, b), kPlaces);
  return out + "}";
}

// `waste`: the line whose allocation − usage is the waste (null: none, as for idle).
std::string Line(const CostLine& line, const CostLine* waste, bool with_namespaces,
                 const std::string& indent) {
  std::string out = "{\n" + indent + " \"name\": " + Str(line.name) + ",\n";
  if (with_namespaces) {
    out += indent + " \"namespaces\": [";
    for (size_t i = 0; i < line.namespaces.size(); ++i)
      out += (i ? ", " : "") + Str(line.namespaces[i]);
    out += "],\n";
  }
  out += indent + " \"gpu_hours\": " + PerBasis(line.hours) + ",\n";
  out += indent +
         " \"waste_gpu_hours\": " + (waste ? PlainDecimal(waste->waste_hours(), kPlaces) : "null") +
         ",\n";
  out += indent + " \"cost\": " + (line.priced ? PerBasis(line.cost) : "null") + ",\n";
  out += indent + " \"waste_cost\": " +
         (waste && waste->priced ? PlainDecimal(waste->waste_cost(), kPlaces) : "null") + "\n";
  return out + indent + "}";
}

}  // namespace

std::string RenderCostJson(const CostReport& r) {
  std::string out = "{\n";
  out += " \"report\": \"gpuattr-cost\",\n \"version\": 1,\n";
  out += " \"cluster\": " + Str(r.cluster) + ",\n";
  out += " \"from\": \"" + UtcDayText(r.from_day) + "\",\n";
  out += " \"to\": \"" + UtcDayText(r.to_day) + "\",\n";
  out += " \"group_by\": \"" + std::string(CostGroupByName(r.group_by)) + "\",\n";
  out += " \"team_label\": " + Str(r.team_label) + ",\n";
  out += " \"days_with_data\": " + std::to_string(r.days_with_data) + ",\n";
  out += " \"currency\": " + (r.currency.empty() ? std::string("null") : Str(r.currency)) + ",\n";
  out += " \"groups\": [";
  for (size_t i = 0; i < r.groups.size(); ++i)
    out += std::string(i ? "," : "") + "\n  " + Line(r.groups[i], &r.groups[i], true, "  ");
  out += r.groups.empty() ? "],\n" : "\n ],\n";
  out += " \"idle\": " + Line(r.idle, nullptr, false, " ") + ",\n";
  out += " \"total\": " + Line(r.total, &r.pods, false, " ") + ",\n";
  out += " \"cards\": " + Line(r.cards, nullptr, false, " ") + ",\n";
  out += " \"check\": {\"balanced\": " + std::string(r.balanced ? "true" : "false") +
         ", \"tolerance\": 0.000000001}\n";
  return out + "}\n";
}

}  // namespace gpuattr::report
