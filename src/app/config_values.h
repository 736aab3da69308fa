// Parsers of setting values (text as written in the config file or after a flag), shared by the
// settings table and the checks of config.cc. Each returns the value or an error saying what is
// wrong with the text; callers prefix it with the key or the flag.
#pragma once

#include <string>
#include <string_view>

#include "gpuattr/app/config.h"
#include "gpuattr/util/status.h"

namespace gpuattr::app {

Error Invalid(std::string message);

Result<int> ParseInt(std::string_view text, int min, int max);
Result<double> ParseRatio(std::string_view text);   // 0..1
Result<double> ParseNumber(std::string_view text);  // any finite number
Result<log::Level> ParseLogLevel(std::string_view text);
Result<log::LineFormat> ParseLogFormat(std::string_view text);
// One item of --metric-allowlist / --metric-denylist: a regular expression.
Result<std::string> ParseMetricPattern(std::string_view text);
// An absolute URL path other than those of the status page, health and snapshot endpoints.
Result<std::string> ParseTelemetryPath(std::string_view text);
Result<milliseconds> ParsePositiveDuration(std::string_view text);
Result<std::string> ParseClusterName(std::string_view text);

}  // namespace gpuattr::app
