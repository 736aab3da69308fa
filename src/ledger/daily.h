// The daily GPU-hour totals of one cluster (docs/accounting.md#daily-totals): the parts of
// Ledger::RecordGpuHours that keep them. Internal to the ledger.
#pragma once

#include <map>

#include "gpuattr/ledger/ledger.h"
#include "gpuattr/ledger/state.h"

namespace gpuattr::ledger {

UtcDay DayOf(double now_unix);
// Drops the days before the last `retention_days` (today included); days after today (a clock
// that went backwards) are kept: they age out as the clock catches up.
void KeepDays(std::map<UtcDay, DayTotals>& days, UtcDay today, int retention_days);
// A change of currency: the days' costs are not converted, they are forgotten.
void ForgetDayCosts(std::map<UtcDay, DayTotals>& days);
// Each namespace of the day found in `labels` gets its labels as seen now; the others (and all
// of them when `labels` is empty: unknown this cycle) keep what the day recorded.
void RecordDayLabels(DayTotals& day, const NamespaceLabels& labels);

}  // namespace gpuattr::ledger
