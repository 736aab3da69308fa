// UTC calendar days as the daily GPU-hour totals and `gpuattr report` use them
// (docs/accounting.md#daily-totals): a day is its number of days since 1970-01-01, written as an
// ISO 8601 date, YYYY-MM-DD.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuattr {

// The UTC day of a Unix time (seconds; floor, so times before 1970 are days below 0).
int64_t UtcDayOf(double unix_seconds);
// "2026-12-03" for the day's number.
std::string UtcDayText(int64_t day);
// The day of "YYYY-MM-DD" (exactly that form, a real date from 0001 to 9999), else nothing.
std::optional<int64_t> ParseUtcDay(std::string_view text);

}  // namespace gpuattr
