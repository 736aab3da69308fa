#include "gpuattr/util/strings.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace gpuattr {

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool ContainsIgnoreCase(std::string_view haystack, std::string_view needle) {
  auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                        [](char a, char b) {
                          return std::tolower(static_cast<unsigned char>(a)) ==
                                 std::tolower(static_cast<unsigned char>(b));
                        });
  return it != haystack.end();
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.starts_with(prefix); }

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return MakeError(ErrorCode::kInvalidArgument, "invalid duration \"" + std::string(text) +
                                                      "\": " + std::string(why) +
                                                      " (use e.g. 20s, 1m30s, 500ms)");
  };
  std::string_view s = Trim(text);
  if (s.empty()) return bad("empty");
  long double total_ms = 0;
  while (!s.empty()) {
    size_t i = 0;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == 0) return bad("expected a number");
    long double number = 0;
    try {
      number = std::stold(std::string(s.substr(0, i)));
    } catch (...) {
      return bad("expected a number");
    }
    s.remove_prefix(i);
    size_t j = 0;
    while (j < s.size() && std::isalpha(static_cast<unsigned char>(s[j]))) ++j;
    std::string_view unit = s.substr(0, j);
    s.remove_prefix(j);
    if (unit == "ms")
      total_ms += number;
    else if (unit == "s")
      total_ms += number * 1000;
    else if (unit == "m")
      total_ms += number * 60'000;
    else if (unit == "h")
      total_ms += number * 3'600'000;
    else if (unit == "d")
      total_ms += number * 86'400'000;
    else
      return bad(unit.empty() ? "missing unit" : "unknown unit \"" + std::string(unit) + "\"");
  }
  return std::chrono::milliseconds(static_cast<long long>(total_ms));
}

std::string FormatDuration(std::chrono::milliseconds d) {
  long long ms = d.count();
  if (ms % 1000 != 0) return std::to_string(ms) + "ms";
  long long s = ms / 1000;
  if (s % 3600 == 0 && s >= 3600) return std::to_string(s / 3600) + "h";
  if (s % 60 == 0 && s >= 60) return std::to_string(s / 60) + "m";
  return std::to_string(s) + "s";
}

}  // namespace gpuattr
