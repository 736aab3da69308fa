// Health group: one-hot device and node states, and the issues behind them.
#include "gpuattr/metrics/health.h"

#include "gpuattr/metrics/attribution_labels.h"

namespace gpuattr::metrics {
namespace {

constexpr FamilySpec kDeviceHealth{
    "gpuattr_device_health", MetricType::kGauge,
    "One-hot device health: 1 for the device's state (ok, warning, critical, unknown), 0 for the "
    "others. Worst severity of its issues; ok only when a health field (XID, ECC, row remap, DCGM "
    "health status) was exported and nothing is wrong; unknown when none was. MIG slices share "
    "their card's health."};
constexpr FamilySpec kIssue{
    "gpuattr_device_health_issue", MetricType::kGauge,
    "Always 1: one problem of the device (issue = xid, ecc_dbe, row_remap_failed, "
    "rows_pending_remap, throttle_hw_slowdown, throttle_sw_thermal, throttle_hw_thermal, "
    "throttle_hw_power_brake, health_check), its severity (warning, critical) and a human "
    "detail (e.g. the XID's meaning). detail carries no changing numbers (counts are on the "
    "status page), so the series does not restart when a count grows."};
constexpr FamilySpec kNodeHealth{
    "gpuattr_node_health", MetricType::kGauge,
    "One-hot node health: the worst state its devices report; critical when an nvidia.com/ "
    "resource's capacity exceeds its allocatable (the device plugin withdrew unhealthy devices); "
    "unknown only when no device reports. Every GPU node has it."};

constexpr FamilySpec kFamilies[] = {kDeviceHealth, kIssue, kNodeHealth};

void Build(const model::Snapshot& s, FamilyWriter& w) {
  for (const model::ClusterSnapshot& c : s.clusters)
    if (c.latest.output) WriteHealth(*c.latest.output, w);
}

}  // namespace

void WriteHealth(const model::CycleOutput& out, FamilyWriter& w) {
  const attribution::Attribution& a = out.attribution;
  for (const attribution::Device& d : a.devices)
    for (health::State state : health::kAllStates) {
      Labels l = DeviceLabels(a.cluster, d.id);
      l.emplace("state", health::StateName(state));
      w.Add(kDeviceHealth, std::move(l), d.health.state == state ? 1 : 0);
    }
  for (const attribution::Device& d : a.devices)
    for (const health::Issue& issue : d.health.issues) {
      Labels l = DeviceLabels(a.cluster, d.id);
      l.emplace("issue", issue.name);
      l.emplace("severity", health::SeverityName(issue.severity));
      l.emplace("detail", issue.detail);
      w.Add(kIssue, std::move(l), 1);
    }
  for (const health::NodeHealth& n : out.node_health)
    for (health::State state : health::kAllStates)
      w.Add(kNodeHealth,
            Labels{{"cluster", a.cluster}, {"node", n.node}, {"state", health::StateName(state)}},
            n.state == state ? 1 : 0);
}

constinit const FamilyGroup kHealthGroup{"health", kFamilies, &Build};

}  // namespace gpuattr::metrics
