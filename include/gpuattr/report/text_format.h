// Numbers for people, shared by the status page, the terminal table and the Markdown report so
// that they print the same text: "3.2 GiB", "805 W", "41%", "1.5 kWh", "3 h 12 min". Unknown
// values (absent optionals) print as "-". Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpuattr/allocation/types.h"

namespace gpuattr::report {

inline constexpr const char* kUnknownText = "-";

std::string BytesText(double bytes);            // "0 B", "300 MiB", "3.2 GiB", "1.5 TiB"
std::string WattsText(double watts);            // "805 W", "42.5 W"
std::string PercentText(double ratio);          // 0.41 → "41%", 0.004 → "0.4%"
std::string GpuEqText(double gpu_equivalents);  // "2", "0.43", "1.5"
std::string EnergyText(double joules);          // "340 Wh", "12.3 kWh", "1,234 kWh"
std::string DurationText(double seconds);       // "45 s", "12 min", "3 h 5 min", "2 d 4 h"
std::string UtcText(double unix_seconds);       // "2026-12-01 12:00:00 UTC"
std::string CelsiusText(double celsius);        // "61 °C"
std::string DayText(int64_t utc_day);           // days since 1970-01-01 → "2026-12-04"
std::string WindowText(int days);               // 1 → "today", 7 → "last 7 days"
std::string GpuHoursText(double hours);         // "0.25", "12.5", "1,234"
// "0.07 USD", "1,234.50 USD" (no currency: the number alone).
std::string MoneyText(double amount, const std::string& currency);

// The same with "-" for unknown.
template <typename F>
std::string Known(const std::optional<double>& v, F format) {
  return v ? format(*v) : std::string(kUnknownText);
}

// `text` with control characters (C0, DEL and C1, e.g. an ESC starting a terminal sequence in a
// label of an exporter's body) replaced by "?", for text outputs.
std::string PrintableText(std::string_view text);

// "1 pod", "3 pods".
std::string Plural(size_t n, const char* one, const char* many);

// "gpu 2, mig-1g.10gb 3" (short names, as Kubernetes lists them); "-" when empty.
std::string ResourcesText(const allocation::ResourceCounts& counts);

}  // namespace gpuattr::report
