// The daily GPU-hour totals of one cluster (docs/accounting.md#daily-totals): the parts of
// Ledger::RecordGpuHours that keep them (public for their tests).
#pragma once

#include <cstddef>
#include <map>

#include "gpuattr/ledger/ledger.h"
#include "gpuattr/ledger/state.h"

namespace gpuattr::ledger {

// At most this many namespace-days in all: at about 440 bytes each, 18 MB, so that with 16,000
// pods (14 MB) the state file stays under kMaxStateFileBytes whatever the number of namespaces.
inline constexpr size_t kMaxNamespaceDays = 40'000;

UtcDay DayOf(double now_unix);
// Drops the days before the last `retention_days` (today included); days after today (a clock
// that went backwards) are kept: they age out as the clock catches up.
// Then drops the oldest days while they hold more than `max_namespace_days` namespace-days in
// all (today's is always kept).
void KeepDays(std::map<UtcDay, DayTotals>& days, UtcDay today, int retention_days,
              size_t max_namespace_days = kMaxNamespaceDays);
// A change of currency: the days' costs are not converted, they are forgotten.
void ForgetDayCosts(std::map<UtcDay, DayTotals>& days);
// Each namespace of the day found in `labels` gets its labels as seen now; the others (and all
// of them when `labels` is empty: unknown this cycle) keep what the day recorded.
void RecordDayLabels(DayTotals& day, const NamespaceLabels& labels);
// The days of each window of kCostWindowDays ending `today` (days after it are left out), summed
// per namespace, for idle and for the cards; a window's cost only when some of its hours were
// priced. O(days in the longest window × namespaces): once per cycle, not per page.
CostSummary SummarizeDays(const AccountingState& state, UtcDay today);

}  // namespace gpuattr::ledger
