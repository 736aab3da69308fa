// Accounting group: GPU-hours counters of pods, namespaces and nodes' idle, one series per basis,
// from each cluster's LedgerView (docs/accounting.md#counters), and the namespaces' team labels
// (docs/accounting.md#teams).
#include "gpuattr/metrics/accounting.h"

#include <map>
#include <string>

#include "gpuattr/accounting/teams.h"

namespace gpuattr::metrics {
namespace {

using accounting::Basis;

constexpr FamilySpec kPodHours{
    "gpuattr_pod_gpu_hours_total", MetricType::kCounter,
    "GPU-hours accounted to the pod on each basis (allocation: what the scheduler handed out; "
    "memory: GPU memory occupied; usage: compute used), between successful cycles."};
constexpr FamilySpec kNamespaceHours{
    "gpuattr_namespace_gpu_hours_total", MetricType::kCounter,
    "GPU-hours accounted to the namespace's pods on each basis, including pods that have left, "
    "so it never goes down."};
constexpr FamilySpec kNodeIdleHours{
    "gpuattr_node_idle_gpu_hours_total", MetricType::kCounter,
    "GPU-hours of the node's cards that no pod got on each basis; with the pods' hours they add "
    "up to the cards' hours."};

constexpr FamilySpec kPodCost{
    "gpuattr_pod_cost_total", MetricType::kCounter,
    "Cost of the pod's GPU-hours on each basis at the configured prices (accounting.prices), in "
    "`currency`; priced cards only: absent when none of its hours was priced."};
constexpr FamilySpec kNamespaceCost{
    "gpuattr_namespace_cost_total", MetricType::kCounter,
    "Cost of the namespace's GPU-hours on each basis, including pods that have left; priced "
    "cards only."};
constexpr FamilySpec kNodeIdleCost{
    "gpuattr_node_idle_cost_total", MetricType::kCounter,
    "Cost of the node's idle GPU-hours on each basis; absent when all its cards are unpriced."};
constexpr FamilySpec kCardPrice{
    "gpuattr_card_price_per_hour", MetricType::kGauge,
    "Price of one GPU-hour of the card, from the first accounting.prices rule that matches it; "
    "absent for an unpriced card."};

constexpr FamilySpec kNamespaceLabels{
    "gpuattr_namespace_labels", MetricType::kGauge,
    "Always 1: one series per namespace with the labels of accounting.namespace_labels it has, "
    "as label_<name> (kube-state-metrics' convention); join on (cluster, namespace) to group by "
    "team."};

constexpr FamilySpec kFamilies[] = {kPodHours,  kNamespaceHours, kNodeIdleHours,
                                    kPodCost,   kNamespaceCost,  kNodeIdleCost,
                                    kCardPrice, kNamespaceLabels};

void WriteNamespaceLabels(const std::string& cluster, const accounting::NamespaceLabels& teams,
                          FamilyWriter& w) {
  std::map<std::string, std::string> names;  // Kubernetes label -> label_<name>, kept alive
  for (const auto& [ns, labels] : teams)
    for (const auto& [label, value] : labels)
      if (!names.contains(label)) names.emplace(label, accounting::PrometheusLabelFor(label));
  for (const auto& [ns, labels] : teams) {
    Labels l{{"cluster", cluster}, {"namespace", ns}};
    for (const auto& [label, value] : labels) l.emplace(names.at(label), value);
    w.Add(kNamespaceLabels, l, 1);
  }
}

void Build(const model::Snapshot& s, FamilyWriter& w) {
  for (const model::ClusterSnapshot& c : s.clusters) {
    if (!c.latest.output) continue;
    WriteAccounting(c.latest.output->ledger, c.latest.output->attribution.pods, w);
    WriteNamespaceLabels(c.cluster, c.latest.output->namespace_labels, w);
  }
}

// One family's series, per published basis: the hours, or (`cost`) the cost with `currency` of
// the rows that have one. `extra` adds the row's own labels.
template <typename AddLabels>
void WriteBases(const ledger::LedgerView& v, const std::vector<ledger::GpuHoursView>& rows,
                const FamilySpec& family, bool cost, AddLabels extra, FamilyWriter& w) {
  for (Basis b : v.bases)
    for (const ledger::GpuHoursView& r : rows) {
      if (cost && !r.cost) continue;
      Labels l{{"basis", BasisName(b)}, {"cluster", v.cluster}};
      if (cost) l.emplace("currency", v.currency);
      extra(r, l);
      w.Add(family, l, cost ? At(*r.cost, b) : At(r.hours, b));
    }
}

// The pods' series, per published basis, in pod order as the other families (ForEachPodHours).
void WritePodBases(const ledger::LedgerView& v, const std::vector<attribution::Pod>& pods,
                   const FamilySpec& family, bool cost, FamilyWriter& w) {
  for (Basis b : v.bases)
    ledger::ForEachPodHours(v, pods, [&](const ledger::PodHoursRef& r) {
      if (cost && !r.cost) return;
      Labels l{{"basis", BasisName(b)}, {"cluster", v.cluster}};
      if (cost) l.emplace("currency", v.currency);
      l.emplace("namespace", r.pod.namespace_);
      l.emplace("node", r.node);
      l.emplace("pod", r.pod.name);
      w.Add(family, l, cost ? At(*r.cost, b) : At(r.hours, b));
    });
}

}  // namespace

// Family by family in table order (kFamilies), as the exposition is (text_writer.h, StreamTo).
void WriteAccounting(const ledger::LedgerView& v, const std::vector<attribution::Pod>& pods,
                     FamilyWriter& w) {
  const auto ns = [](const ledger::GpuHoursView& r, Labels& l) { l.emplace("namespace", r.name); };
  const auto node = [](const ledger::GpuHoursView& r, Labels& l) { l.emplace("node", r.name); };
  WritePodBases(v, pods, kPodHours, false, w);
  WriteBases(v, v.namespace_gpu_hours, kNamespaceHours, false, ns, w);
  WriteBases(v, v.node_idle_gpu_hours, kNodeIdleHours, false, node, w);
  WritePodBases(v, pods, kPodCost, true, w);
  WriteBases(v, v.namespace_gpu_hours, kNamespaceCost, true, ns, w);
  WriteBases(v, v.node_idle_gpu_hours, kNodeIdleCost, true, node, w);
  for (const ledger::CardPriceView& c : v.card_prices)
    w.Add(kCardPrice,
          Labels{{"cluster", v.cluster},
                 {"currency", v.currency},
                 {"gpu", c.gpu},
                 {"model", c.model},
                 {"node", c.node},
                 {"uuid", c.uuid}},
          c.per_gpu_hour);
}

constinit const FamilyGroup kAccountingGroup{"accounting", kFamilies, &Build};

}  // namespace gpuattr::metrics
