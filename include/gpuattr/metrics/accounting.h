// Family group "accounting": GPU-hours counters per basis (docs/accounting.md#counters).
#pragma once

#include <vector>

#include "gpuattr/ledger/ledger.h"
#include "gpuattr/metrics/families.h"

namespace gpuattr::metrics {

extern const FamilyGroup kAccountingGroup;  // accounting.cc
// `pods`: the attribution the view was made with (its pod rows name their pods by index).
void WriteAccounting(const ledger::LedgerView& view, const std::vector<attribution::Pod>& pods,
                     FamilyWriter& w);

}  // namespace gpuattr::metrics
