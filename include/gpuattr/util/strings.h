// Small string helpers shared by modules (no locale, ASCII only).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "gpuattr/util/status.h"

namespace gpuattr {

std::string ToLower(std::string_view s);
bool ContainsIgnoreCase(std::string_view haystack, std::string_view needle);
bool StartsWith(std::string_view s, std::string_view prefix);
std::string_view Trim(std::string_view s);
// "s" in double quotes, for messages that name a file, key or object.
std::string Quote(std::string_view s);

// "20s", "1m30s", "500ms", "2h" (Go/Prometheus duration syntax). A bare number is rejected so
// that "20" is never silently read as 20 ns or 20 s.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);
std::string FormatDuration(std::chrono::milliseconds d);

}  // namespace gpuattr
