// Ledger group: idle runs and energy counters from each cluster's LedgerView.
#include "gpuattr/metrics/ledger.h"

#include "gpuattr/metrics/attribution_labels.h"

namespace gpuattr::metrics {
namespace {

constexpr FamilySpec kIdle{
    "gpuattr_pod_idle", MetricType::kGauge,
    "1 when the pod is idle: utilisation below idle.utilization_below (0.05) while holding at "
    "least idle.memory_at_least (256 MiB) of GPU memory; 0 otherwise. Absent when unknown."};
constexpr FamilySpec kIdleSeconds{
    "gpuattr_pod_idle_seconds", MetricType::kGauge,
    "Length of the pod's current unbroken idle run in seconds, from the first cycle that found it "
    "idle (0 when busy). A busy or unknown cycle, or a gap between successful cycles longer than "
    "5 minutes (or 5 intervals), ends the run; runs survive restarts through the state file."};
constexpr FamilySpec kPodEnergy{
    "gpuattr_pod_energy_joules_total", MetricType::kCounter,
    "Energy attributed to the pod in joules: gpuattr_pod_power_watts integrated over time "
    "(trapezoid) between successful cycles; a gap longer than 5 minutes (or 5 intervals) adds "
    "nothing. Starts at 0 the first cycle the pod's power is known."};
constexpr FamilySpec kNamespaceEnergy{
    "gpuattr_namespace_energy_joules_total", MetricType::kCounter,
    "Energy attributed to the namespace's pods in joules, including pods that have left, so it "
    "never goes down: the sum of its pods' gpuattr_pod_energy_joules_total while none has left."};

constexpr FamilySpec kFamilies[] = {kIdle, kIdleSeconds, kPodEnergy, kNamespaceEnergy};

Labels PodNodeLabels(const std::string& cluster, const ledger::PodLedgerRef& p) {
  return Labels{
      {"cluster", cluster}, {"namespace", p.id.namespace_}, {"node", p.node}, {"pod", p.id.name}};
}

void Build(const model::Snapshot& s, FamilyWriter& w) {
  for (const model::ClusterSnapshot& c : s.clusters)
    if (c.latest.output) WriteLedger(c.latest.output->ledger, c.latest.output->attribution.pods, w);
}

}  // namespace

// Family by family, each over the pods in pod order (ForEachPodLedger).
void WriteLedger(const ledger::LedgerView& v, const std::vector<attribution::Pod>& pods,
                 FamilyWriter& w) {
  using ledger::PodLedgerRef;
  ledger::ForEachPodLedger(v, pods, [&](const PodLedgerRef& p) {
    if (p.idle) w.Add(kIdle, PodNodeLabels(v.cluster, p), *p.idle ? 1 : 0);
  });
  ledger::ForEachPodLedger(v, pods, [&](const PodLedgerRef& p) {
    AddKnown(w, kIdleSeconds, PodNodeLabels(v.cluster, p), p.idle_seconds);
  });
  ledger::ForEachPodLedger(v, pods, [&](const PodLedgerRef& p) {
    AddKnown(w, kPodEnergy, PodNodeLabels(v.cluster, p), p.energy_joules);
  });
  for (const ledger::NamespaceLedger& n : v.namespaces)
    w.Add(kNamespaceEnergy, Labels{{"cluster", v.cluster}, {"namespace", n.name}}, n.energy_joules);
}

constinit const FamilyGroup kLedgerGroup{"ledger", kFamilies, &Build};

}  // namespace gpuattr::metrics
