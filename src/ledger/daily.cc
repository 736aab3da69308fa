// Daily totals of GPU-hours per namespace and idle (docs/accounting.md#daily-totals).
#include "gpuattr/ledger/daily.h"

#include "gpuattr/util/utc_day.h"

namespace gpuattr::ledger {

UtcDay DayOf(double now_unix) { return UtcDayOf(now_unix); }

void KeepDays(std::map<UtcDay, DayTotals>& days, UtcDay today, int retention_days,
              size_t max_namespace_days) {
  const UtcDay oldest = today - retention_days + 1;
  days.erase(days.begin(), days.lower_bound(oldest));
  size_t total = 0;
  for (const auto& [day, totals] : days) total += totals.namespaces.size();
  while (total > max_namespace_days && days.size() > 1) {
    total -= days.begin()->second.namespaces.size();
    days.erase(days.begin());
  }
}

void ForgetDayCosts(std::map<UtcDay, DayTotals>& days) {
  auto forget = [](GpuHours& g) { g.cost = {}, g.priced = false; };
  for (auto& [day, totals] : days) {
    for (auto& [name, ns] : totals.namespaces) forget(ns.total);
    forget(totals.idle);
    forget(totals.cards);
  }
}

void RecordDayLabels(DayTotals& day, const NamespaceLabels& labels) {
  if (labels.empty()) return;
  for (auto& [name, ns] : day.namespaces)
    if (auto it = labels.find(name); it != labels.end()) ns.labels = it->second;
}

}  // namespace gpuattr::ledger
