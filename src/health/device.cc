// Device assessment: the health fields of a card → issues → one state.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "gpuattr/health/health.h"

namespace gpuattr::health {
namespace {

void MaxInto(std::optional<double>& dst, const std::optional<double>& src) {
  if (src && (!dst || *src > *dst)) dst = src;
}

// Which of two last XIDs to keep: a non-zero one over 0, then the more severe, then the larger.
bool WorseXid(int a, int b) {
  auto rank = [](int x) {
    return std::make_tuple(x != 0, x != 0 && LookupXid(x).severity == Severity::kCritical, x);
  };
  return rank(a) > rank(b);
}

std::string Plural(double n, std::string_view one, std::string_view many) {
  auto count = static_cast<long long>(std::llround(n));
  return std::to_string(count) + " " + std::string(count == 1 ? one : many);
}

struct ThrottleBit {
  uint64_t bit;
  std::string_view issue;
  std::string_view detail;
};
constexpr ThrottleBit kThrottleBits[] = {
    {kThrottleHwSlowdown, "throttle_hw_slowdown",
     "clocks cut by hardware slowdown (0x8: overheating or power supply problem)"},
    {kThrottleSwThermal, "throttle_sw_thermal",
     "clocks cut by the driver to stay within the thermal limit (0x20)"},
    {kThrottleHwThermal, "throttle_hw_thermal", "clocks cut by hardware overheating (0x40)"},
    {kThrottleHwPowerBrake, "throttle_hw_power_brake",
     "clocks cut by the external power brake signal (0x80)"},
};

}  // namespace

std::string_view SeverityName(Severity severity) {
  return severity == Severity::kCritical ? "critical" : "warning";
}

std::string_view StateName(State state) {
  switch (state) {
    case State::kOk:
      return "ok";
    case State::kWarning:
      return "warning";
    case State::kCritical:
      return "critical";
    case State::kUnknown:
      break;
  }
  return "unknown";
}

void HealthFields::Add(const sources::DcgmValues& v, const std::map<int, double>& xid_counts) {
  if (v.last_xid && *v.last_xid >= 0 && *v.last_xid < 1e9) {
    int xid = static_cast<int>(std::llround(*v.last_xid));
    if (!last_xid || WorseXid(xid, *last_xid)) last_xid = xid;
  }
  MaxInto(ecc_dbe_volatile, v.ecc_dbe_volatile);
  MaxInto(row_remap_failure, v.row_remap_failure);
  MaxInto(uncorrectable_remapped_rows, v.uncorrectable_remapped_rows);
  MaxInto(row_remap_pending, v.row_remap_pending);
  MaxInto(health_status, v.health_status);
  // A bitmask exported as a float: only exact non-negative integers are masks.
  if (v.clocks_event_reasons && *v.clocks_event_reasons >= 0 && *v.clocks_event_reasons < 0x1p63 &&
      std::floor(*v.clocks_event_reasons) == *v.clocks_event_reasons)
    clocks_event_reasons =
        clocks_event_reasons.value_or(0) | static_cast<uint64_t>(*v.clocks_event_reasons);
  for (const auto& [xid, count] : xid_counts) {
    auto [it, added] = xid_error_counts.emplace(xid, count);
    if (!added) it->second = std::max(it->second, count);
  }
}

bool HealthFields::AnyHealthField() const {
  return last_xid || ecc_dbe_volatile || row_remap_failure || uncorrectable_remapped_rows ||
         row_remap_pending || health_status || !xid_error_counts.empty();
}

DeviceHealth AssessDevice(const HealthFields& f) {
  DeviceHealth h;
  // `detail` is the label (no counts); `text` adds the counts for people (same when empty).
  auto add = [&](std::string_view name, Severity severity, std::string detail,
                 std::string text = "") {
    if (text.empty()) text = detail;
    h.issues.push_back(Issue{std::string(name), severity, std::move(detail), std::move(text)});
  };
  if (f.last_xid && *f.last_xid > 0)
    add("xid", LookupXid(*f.last_xid).severity, "last " + XidText(*f.last_xid));
  // The exporter's recent-XID counts: one issue per XID seen in its window, except the last XID
  // (already an issue above).
  for (const auto& [xid, count] : f.xid_error_counts)
    if (xid > 0 && count > 0 && xid != f.last_xid.value_or(0))
      add("xid", LookupXid(xid).severity, XidText(xid) + " (in the exporter's window)",
          XidText(xid) + " (" + Plural(count, "time", "times") + " in the exporter's window)");
  if (f.ecc_dbe_volatile && *f.ecc_dbe_volatile > 0)
    add("ecc_dbe", Severity::kCritical,
        "uncorrectable (double-bit) ECC errors since the driver loaded",
        Plural(*f.ecc_dbe_volatile, "uncorrectable (double-bit) ECC error",
               "uncorrectable (double-bit) ECC errors") +
            " since the driver loaded");
  if (f.row_remap_failure && *f.row_remap_failure > 0)
    add("row_remap_failed", Severity::kCritical,
        "row remapping failed: memory errors can no longer be repaired");
  if (f.uncorrectable_remapped_rows && *f.uncorrectable_remapped_rows > 0)
    add("rows_pending_remap", Severity::kWarning, "rows pending remap",
        Plural(*f.uncorrectable_remapped_rows, "row", "rows") + " pending remap");
  else if (f.row_remap_pending && *f.row_remap_pending > 0)
    add("rows_pending_remap", Severity::kWarning, "row remap pending (reset the GPU to apply it)");
  if (f.clocks_event_reasons)
    for (const ThrottleBit& t : kThrottleBits)
      if (*f.clocks_event_reasons & t.bit) add(t.issue, Severity::kWarning, std::string(t.detail));
  if (f.health_status && *f.health_status >= 20)
    add("health_check", Severity::kCritical, "DCGM health check failed");
  else if (f.health_status && *f.health_status > 0)
    add("health_check", Severity::kWarning, "DCGM health check warns");

  std::sort(h.issues.begin(), h.issues.end(), [](const Issue& a, const Issue& b) {
    if (a.severity != b.severity) return a.severity > b.severity;  // critical first
    return std::tie(a.name, a.detail) < std::tie(b.name, b.detail);
  });
  if (!h.issues.empty())
    h.state = h.issues.front().severity == Severity::kCritical ? State::kCritical : State::kWarning;
  else
    h.state = f.AnyHealthField() ? State::kOk : State::kUnknown;
  return h;
}

}  // namespace gpuattr::health
