// Family group "ledger": idle runs and energy counters (what persists across cycles).
#pragma once

#include <vector>

#include "gpuattr/ledger/ledger.h"
#include "gpuattr/metrics/families.h"

namespace gpuattr::metrics {

extern const FamilyGroup kLedgerGroup;  // ledger.cc
// `pods`: the attribution the view was recorded from (its pod rows name their pods by index).
void WriteLedger(const ledger::LedgerView& view, const std::vector<attribution::Pod>& pods,
                 FamilyWriter& w);

}  // namespace gpuattr::metrics
