// Family group "accounting": GPU-hours counters per basis (docs/accounting.md#counters).
#pragma once

#include "gpuattr/ledger/ledger.h"
#include "gpuattr/metrics/families.h"

namespace gpuattr::metrics {

extern const FamilyGroup kAccountingGroup;  // accounting.cc
void WriteAccounting(const ledger::LedgerView& view, FamilyWriter& w);

}  // namespace gpuattr::metrics
