// Family group "ledger": idle runs and energy counters (what persists across cycles).
#pragma once

#include "gpuattr/ledger/ledger.h"
#include "gpuattr/metrics/families.h"

namespace gpuattr::metrics {

extern const FamilyGroup kLedgerGroup;  // ledger.cc
void WriteLedger(const ledger::LedgerView& view, FamilyWriter& w);

}  // namespace gpuattr::metrics
