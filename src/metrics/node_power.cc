// Node power group: Σ cards per node, and what no pod accounts for.
#include "gpuattr/metrics/node_power.h"

#include "gpuattr/metrics/attribution_labels.h"

namespace gpuattr::metrics {
namespace {

constexpr FamilySpec kPower{
    "gpuattr_node_power_watts", MetricType::kGauge,
    "Sum of gpuattr_card_power_watts over the node's cards (each card counted once)."};
constexpr FamilySpec kUnattributed{
    "gpuattr_node_unattributed_power_watts", MetricType::kGauge,
    "Node power no pod accounts for: gpuattr_node_power_watts minus the sum of the node's "
    "gpuattr_pod_power_watts (idle MIG slices, GPUs with no pod, unused shares of shared GPUs, "
    "nodes whose exporter has no pod labels)."};

constexpr FamilySpec kFamilies[] = {kPower, kUnattributed};

void Build(const model::Snapshot& s, FamilyWriter& w) {
  for (const model::ClusterSnapshot& c : s.clusters)
    if (c.latest.output) WriteNodePower(c.latest.output->attribution, w);
}

}  // namespace

void WriteNodePower(const attribution::Attribution& a, FamilyWriter& w) {
  for (const auto& n : a.nodes)
    AddKnown(w, kPower, Labels{{"cluster", a.cluster}, {"node", n.node}}, n.power_watts);
  for (const auto& n : a.nodes)
    AddKnown(w, kUnattributed, Labels{{"cluster", a.cluster}, {"node", n.node}},
             n.unattributed_power_watts);
}

constinit const FamilyGroup kNodePowerGroup{"node_power", kFamilies, &Build};

}  // namespace gpuattr::metrics
