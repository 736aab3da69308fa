// UTC days ↔ ISO dates, with the C++20 calendar (no time zone database: UTC only).
#include "gpuattr/util/utc_day.h"

#include <chrono>
#include <cmath>
#include <cstdio>

namespace gpuattr {

int64_t UtcDayOf(double unix_seconds) {
  return static_cast<int64_t>(std::floor(unix_seconds / 86400));
}

std::string UtcDayText(int64_t day) {
  const std::chrono::year_month_day ymd{std::chrono::sys_days{std::chrono::days{day}}};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
  return buf;
}

std::optional<int64_t> ParseUtcDay(std::string_view text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return std::nullopt;
  int parts[3] = {0, 0, 0};
  const size_t starts[3] = {0, 5, 8}, lengths[3] = {4, 2, 2};
  for (int i = 0; i < 3; ++i)
    for (size_t k = starts[i]; k < starts[i] + lengths[i]; ++k) {
      if (text[k] < '0' || text[k] > '9') return std::nullopt;
      parts[i] = parts[i] * 10 + (text[k] - '0');
    }
  const std::chrono::year_month_day ymd{std::chrono::year{parts[0]},
                                        std::chrono::month{static_cast<unsigned>(parts[1])},
                                        std::chrono::day{static_cast<unsigned>(parts[2])}};
  if (parts[0] < 1 || !ymd.ok()) return std::nullopt;
  return std::chrono::sys_days{ymd}.time_since_epoch().count();
}

}  // namespace gpuattr
