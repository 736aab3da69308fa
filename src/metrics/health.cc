// Health group: one-hot device and node states, and the issues behind them.
#include "gpuattr/metrics/health.h"

#include <algorithm>

#include "gpuattr/metrics/attribution_labels.h"

namespace gpuattr::metrics {
namespace {

constexpr FamilySpec kDeviceHealth{
    "gpuattr_device_health", MetricType::kGauge,
    "One-hot device health: 1 for the state (ok, warning, critical, unknown), 0 for the others. "
    "Once per physical card (labels cluster, node, gpu: no gpu_instance); a MIG slice has series "
    "of its own (with gpu_instance) only when its state differs from its card's. Worst severity "
    "of the issues; ok only when a health field (XID, ECC, row remap, DCGM health status) was "
    "exported and nothing is wrong; unknown when none was."};
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

void WriteOneHot(FamilyWriter& w, const Labels& labels, health::State current) {
  for (health::State state : health::kAllStates) {
    Labels l = labels;
    l.emplace("state", health::StateName(state));
    w.Add(kDeviceHealth, std::move(l), current == state ? 1 : 0);
  }
}

// The card a device belongs to, or null when the attribution lists none for it.
const attribution::Card* CardOf(const attribution::Attribution& a, size_t device) {
  const size_t card = a.devices[device].card;
  if (card >= a.cards.size()) return nullptr;
  const std::vector<size_t>& on_card = a.cards[card].devices;
  return std::find(on_card.begin(), on_card.end(), device) != on_card.end() ? &a.cards[card]
                                                                            : nullptr;
}

}  // namespace

void WriteHealth(const model::CycleOutput& out, FamilyWriter& w) {
  const attribution::Attribution& a = out.attribution;
  // One-hot once per card (with its first device, so the series keep the devices' order); a
  // slice's own one-hot only when its state is not its card's. Slices inherit the card's health
  // today (attribution/devices.cc), but that is checked here, not assumed. A device without
  // gpu_instance is its card: same labels, one series.
  for (size_t i = 0; i < a.devices.size(); ++i) {
    const attribution::Device& d = a.devices[i];
    const attribution::Card* card = CardOf(a, i);
    if (!card) {
      WriteOneHot(w, DeviceLabels(a.cluster, d.id), d.health.state);
      continue;
    }
    if (card->devices.front() == i)
      WriteOneHot(w, CardLabels(a.cluster, *card), card->health.state);
    if (d.id.gpu_instance && d.health.state != card->health.state)
      WriteOneHot(w, DeviceLabels(a.cluster, d.id), d.health.state);
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
