#include "gpuattr/sources/readings.h"

namespace gpuattr::sources {

std::optional<double>* DcgmValues::Slot(DcgmField field) {
  switch (field) {
    case DcgmField::kGpuUtil:
      return &gpu_util;
    case DcgmField::kGrEngineActive:
      return &gr_engine_active;
    case DcgmField::kSmActive:
      return &sm_active;
    case DcgmField::kSmOccupancy:
      return &sm_occupancy;
    case DcgmField::kTensorActive:
      return &tensor_active;
    case DcgmField::kDramActive:
      return &dram_active;
    case DcgmField::kMemoryUsed:
      return &memory_used_bytes;
    case DcgmField::kMemoryFree:
      return &memory_free_bytes;
    case DcgmField::kMemoryTotal:
      return &memory_total_bytes;
    case DcgmField::kMemoryReserved:
      return &memory_reserved_bytes;
    case DcgmField::kPower:
      return &power_watts;
    case DcgmField::kEnergy:
      return &energy_joules;
    case DcgmField::kTemperature:
      return &temperature_celsius;
    case DcgmField::kLastXid:
      return &last_xid;
    case DcgmField::kEccDbeVolatile:
      return &ecc_dbe_volatile;
    case DcgmField::kRowRemapFailure:
      return &row_remap_failure;
    case DcgmField::kUncorrectableRemappedRows:
      return &uncorrectable_remapped_rows;
    case DcgmField::kRowRemapPending:
      return &row_remap_pending;
    case DcgmField::kClocksEventReasons:
      return &clocks_event_reasons;
    case DcgmField::kHealthStatus:
      return &health_status;
    case DcgmField::kXidErrorsCount:
      return nullptr;
  }
  return nullptr;
}

const std::optional<double>* DcgmValues::Slot(DcgmField field) const {
  return const_cast<DcgmValues*>(this)->Slot(field);
}

ReadStats& StatsOf(Readings& readings) {
  return std::visit([](auto& r) -> ReadStats& { return r.stats; }, readings);
}

const ReadStats& StatsOf(const Readings& readings) {
  return std::visit([](const auto& r) -> const ReadStats& { return r.stats; }, readings);
}

}  // namespace gpuattr::sources
