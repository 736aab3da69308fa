#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <vector>

#include "config_values.h"
#include "gpuattr/metrics/family_filter.h"
#include "gpuattr/util/strings.h"

namespace gpuattr::app {
namespace {

bool IsDnsLabelish(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_'))
      return false;
  return true;
}

}  // namespace

Error Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

Result<int> ParseInt(std::string_view text, int min, int max) {
  std::string_view s = Trim(text);
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty())
    return Invalid("invalid integer " + Quote(text));
  if (v < min || v > max)
    return Invalid(std::to_string(v) + " is out of range [" + std::to_string(min) + ", " +
                   std::to_string(max) + "]");
  return v;
}

Result<double> ParseNumber(std::string_view text) {
  std::string_view s = Trim(text);
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || !std::isfinite(v))
    return Invalid("invalid number " + Quote(text));
  return v;
}

Result<double> ParseRatio(std::string_view text) {
  std::string_view s = Trim(text);
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || !std::isfinite(v))
    return Invalid("invalid number " + Quote(text));
  if (v < 0 || v > 1) return Invalid(std::string(s) + " is not a ratio in [0, 1]");
  return v;
}

Result<log::Level> ParseLogLevel(std::string_view text) {
  log::Level level;
  if (!log::ParseLevel(text, level))
    return Invalid("unknown level " + Quote(text) + " (use debug, info, warn or error)");
  return level;
}

Result<log::LineFormat> ParseLogFormat(std::string_view text) {
  log::LineFormat format;
  if (!log::ParseLineFormat(text, format))
    return Invalid("unknown log format " + Quote(text) + " (use logfmt or json)");
  return format;
}

Result<std::string> ParseMetricPattern(std::string_view text) {
  auto f = metrics::FamilyFilter::Make({}, {std::string(text)});
  if (!f.ok()) return f.error();
  return std::string(text);
}

Result<std::string> ParseTelemetryPath(std::string_view text) {
  if (text.empty() || text[0] != '/')
    return Invalid("telemetry path " + Quote(text) + " must start with /");
  if (text.size() > 256) return Invalid("telemetry path longer than 256 bytes");
  for (char c : text)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f || c == '?' || c == '#' || c == '%')
      return Invalid("telemetry path " + Quote(text) +
                     " may not contain spaces, control characters, ?, # or %");
  for (std::string_view taken : {"/", "/healthz", "/readyz", "/snapshot.json", "/snapshot.md"})
    if (text == taken)
      return Invalid("telemetry path " + Quote(text) + " is taken by another endpoint");
  return std::string(text);
}

Result<milliseconds> ParsePositiveDuration(std::string_view text) {
  auto d = ParseDuration(text);
  if (!d.ok()) return d;
  if (d->count() <= 0) return Invalid("duration " + Quote(text) + " must be positive");
  return d;
}

Result<std::string> ParseClusterName(std::string_view text) {
  std::string_view s = Trim(text);
  if (s.empty()) return Invalid("empty cluster name");
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f)
      return Invalid("cluster name " + Quote(s) + " holds a control character");
  return std::string(s);
}

Result<OutputFormat> ParseOutputFormat(std::string_view text) {
  static constexpr std::pair<std::string_view, OutputFormat> kFormats[] = {
      {"prometheus", OutputFormat::kPrometheus},
      {"table", OutputFormat::kTable},
      {"json", OutputFormat::kJson},
      {"markdown", OutputFormat::kMarkdown}};
  for (const auto& [name, format] : kFormats)
    if (Trim(text) == name) return format;
  return Invalid("unknown output format " + Quote(text) +
                 " (use prometheus, table, json or markdown)");
}

Result<ScrapePath> ParseScrapePath(std::string_view text) {
  static constexpr std::pair<std::string_view, ScrapePath> kPaths[] = {
      {"auto", ScrapePath::kAuto}, {"direct", ScrapePath::kDirect}, {"proxy", ScrapePath::kProxy}};
  for (const auto& [name, path] : kPaths)
    if (Trim(text) == name) return path;
  return Invalid("unknown scrape path " + Quote(text) + " (use auto, direct or proxy)");
}

Result<TargetPin> ParseTargetPin(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Invalid("invalid target " + Quote(text) + ": " + std::string(why) +
                   " (use ns/pod-prefix:port or ns/svc/name:port)");
  };
  std::string_view s = Trim(text);
  size_t colon = s.rfind(':');
  if (colon == std::string_view::npos) return bad("missing :port");
  auto port = ParseInt(s.substr(colon + 1), 1, 65535);
  if (!port.ok()) return bad("port must be a number in 1..65535");
  std::string_view path = s.substr(0, colon);
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t slash = path.find('/', start);
    parts.push_back(path.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  TargetPin pin;
  pin.port = *port;
  pin.text = std::string(s);
  if (parts.size() == 2) {
    pin.kind = TargetPin::Kind::kPodPrefix;
  } else if (parts.size() == 3 && parts[1] == "svc") {
    pin.kind = TargetPin::Kind::kService;
    parts.erase(parts.begin() + 1);
  } else {
    return bad("expected namespace/name or namespace/svc/name before the port");
  }
  if (!IsDnsLabelish(parts[0])) return bad("bad namespace " + Quote(parts[0]));
  if (!IsDnsLabelish(parts[1])) return bad("bad name " + Quote(parts[1]));
  pin.namespace_ = std::string(parts[0]);
  pin.name = std::string(parts[1]);
  return pin;
}

Result<uint64_t> ParseByteSize(std::string_view text) {
  std::string_view s = Trim(text);
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0) return Invalid("invalid size " + Quote(text) + " (use e.g. 64MiB, 1GiB, 1048576)");
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + i, n);
  if (ec != std::errc() || end != s.data() + i)
    return Invalid("size " + Quote(text) + " too large");
  std::string_view unit = Trim(s.substr(i));
  static constexpr std::pair<std::string_view, uint64_t> kUnits[] = {
      {"", 1},      {"B", 1},         {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30},
      {"KB", 1000}, {"MB", 1000'000}, {"GB", 1000'000'000}};
  for (const auto& [name, mult] : kUnits) {
    if (unit != name) continue;
    if (n > UINT64_MAX / mult) return Invalid("size " + Quote(text) + " too large");
    return n * mult;
  }
  return Invalid("invalid size " + Quote(text) + ": unknown unit " + Quote(unit) +
                 " (use B, KiB, MiB, GiB, KB, MB or GB)");
}

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Invalid("invalid listen address " + Quote(text) + ": " + std::string(why) +
                   " (use host:port, e.g. 127.0.0.1:9787, [::1]:9787 or :9787)");
  };
  std::string_view s = Trim(text);
  ListenAddress out;
  std::string_view port;
  if (s.starts_with('[')) {
    size_t close = s.find(']');
    if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':')
      return bad("expected [ipv6]:port");
    out.host = std::string(s.substr(1, close - 1));
    port = s.substr(close + 2);
  } else {
    size_t colon = s.rfind(':');
    if (colon == std::string_view::npos) return bad("missing :port");
    if (s.substr(0, colon).find(':') != std::string_view::npos)
      return bad("write IPv6 addresses in brackets");
    out.host = std::string(s.substr(0, colon));
    port = s.substr(colon + 1);
  }
  if (out.host.empty()) out.host = "0.0.0.0";
  auto p = ParseInt(port, 0, 65535);
  if (!p.ok()) return bad("port must be a number in 0..65535");
  out.port = *p;
  return out;
}

Result<uint32_t> PodOrdinal(std::string_view pod) {
  const std::string shown = Quote(pod);
  if (pod.find("$(") != std::string_view::npos)
    return Invalid(shown +
                   " is not a pod name: a variable was not expanded (set POD_NAME from "
                   "the downward API: fieldRef metadata.name)");
  size_t dash = pod.rfind('-');
  if (dash == std::string_view::npos)
    return Invalid(shown + " has no '-': expected a StatefulSet pod name such as gpuattr-2");
  std::string_view digits = pod.substr(dash + 1);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(),
                                     [](unsigned char c) { return std::isdigit(c) != 0; }))
    return Invalid(shown +
                   ": no ordinal after the last '-' (expected a StatefulSet pod name "
                   "such as gpuattr-2)");
  uint32_t n = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size())
    return Invalid(shown + ": ordinal " + Quote(digits) + " is too large");
  return n;
}

}  // namespace gpuattr::app
