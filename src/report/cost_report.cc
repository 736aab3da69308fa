// The cost report's numbers (docs/accounting.md#the-report): the days of the range summed per
// group, idle and the cards' hours, and the check that the parts add up.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "gpuattr/report/cost_report.h"

namespace gpuattr::report {
namespace {

using accounting::kBases;

void Add(CostLine& into, const ledger::GpuHours& g) {
  for (size_t b = 0; b < kBases; ++b) {
    into.hours[b] += g.hours[b];
    into.cost[b] += g.cost[b];
  }
  into.priced = into.priced || g.priced;
}

void Add(CostLine& into, const CostLine& line) {
  for (size_t b = 0; b < kBases; ++b) {
    into.hours[b] += line.hours[b];
    into.cost[b] += line.cost[b];
  }
  into.priced = into.priced || line.priced;
}

bool Close(double a, double b) {
  return std::fabs(a - b) <= kCheckTolerance * std::max({std::fabs(a), std::fabs(b), 1e-300});
}

// The group a namespace's day goes to.
std::string GroupOf(const std::string& ns, const ledger::NamespaceDay& day, CostGroupBy group_by,
                    const std::string& team_label) {
  if (group_by == CostGroupBy::kNamespace) return ns;
  return accounting::TeamOf(day.labels, team_label);
}

}  // namespace

std::optional<CostGroupBy> ParseCostGroupBy(std::string_view text) {
  if (text == "namespace") return CostGroupBy::kNamespace;
  if (text == "team") return CostGroupBy::kTeam;
  return std::nullopt;
}

std::string_view CostGroupByName(CostGroupBy g) {
  return g == CostGroupBy::kTeam ? "team" : "namespace";
}

double CostLine::waste_hours() const {
  return At(hours, accounting::Basis::kAllocation) - At(hours, accounting::Basis::kUsage);
}

double CostLine::waste_cost() const {
  return At(cost, accounting::Basis::kAllocation) - At(cost, accounting::Basis::kUsage);
}

CostReport BuildCostReport(const ledger::AccountingState& state, std::string cluster,
                           int64_t from_day, int64_t to_day, CostGroupBy group_by) {
  CostReport r;
  r.cluster = std::move(cluster);
  r.from_day = from_day;
  r.to_day = to_day;
  r.group_by = group_by;
  r.team_label = state.namespace_labels.empty() ? "team" : state.namespace_labels.front();
  r.idle.name = "idle";
  r.total.name = "total";
  r.cards.name = "cards";
  std::map<std::string, CostLine> groups;
  for (auto it = state.days.lower_bound(from_day); it != state.days.end() && it->first <= to_day;
       ++it) {
    ++r.days_with_data;
    for (const auto& [ns, day] : it->second.namespaces) {
      CostLine& g = groups[GroupOf(ns, day, group_by, r.team_label)];
      Add(g, day.total);
      if (!std::count(g.namespaces.begin(), g.namespaces.end(), ns)) g.namespaces.push_back(ns);
    }
    Add(r.idle, it->second.idle);
    Add(r.cards, it->second.cards);
  }
  for (auto& [name, line] : groups) {
    line.name = name;
    std::sort(line.namespaces.begin(), line.namespaces.end());
    Add(r.pods, line);
    if (name != kNoTeam || group_by == CostGroupBy::kNamespace) r.groups.push_back(line);
  }
  if (group_by == CostGroupBy::kTeam && groups.count(std::string(kNoTeam)))
    r.groups.push_back(groups.at(std::string(kNoTeam)));
  r.pods.name = "pods";
  Add(r.total, r.pods);
  Add(r.total, r.idle);
  for (size_t b = 0; b < kBases; ++b)
    r.balanced = r.balanced && Close(r.total.hours[b], r.cards.hours[b]) &&
                 Close(r.total.cost[b], r.cards.cost[b]);
  if (r.total.priced || r.cards.priced) r.currency = state.currency;
  return r;
}

std::string PlainDecimal(double v, int places) {
  if (!std::isfinite(v)) return "0";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", places, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

}  // namespace gpuattr::report
