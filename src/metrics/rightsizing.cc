// Rightsizing group: one row of series per workload from each cluster's RightsizingView.
#include "gpuattr/metrics/rightsizing.h"

#include "gpuattr/metrics/attribution_labels.h"

namespace gpuattr::metrics {
namespace {

constexpr FamilySpec kRecommendation{
    "gpuattr_workload_recommendation", MetricType::kGauge,
    "1 per workload: what its pods hold now (current) and the smallest offering that fits what it "
    "used over rightsizing.window (recommended): whole, a MIG profile or share-1/k; reason "
    "insufficient_data, memory_bound, compute_bound, needs_larger, fits_smaller, right_sized or "
    "no_mig_model (docs/rightsizing.md). Recommends only; changes nothing."};
constexpr FamilySpec kPods{"gpuattr_workload_pods", MetricType::kGauge,
                           "Pods of the workload on a GPU device now (0 while it has none but "
                           "still has observations in the window)."};
constexpr FamilySpec kMemoryPeak{
    "gpuattr_workload_memory_peak_bytes", MetricType::kGauge,
    "The most GPU memory any one pod of the workload used on one device over the window, in "
    "bytes. Absent when never known."};
constexpr FamilySpec kUtilizationP95{
    "gpuattr_workload_utilization_p95_ratio", MetricType::kGauge,
    "95th percentile (0..1, within 2 % relative) of the utilisation of the devices the workload's "
    "pods held, over all their samples in the window. Absent when never known."};
constexpr FamilySpec kObserved{
    "gpuattr_workload_observed_seconds", MetricType::kGauge,
    "Seconds in the window in which any of the workload's pods had data: the successful "
    "intervals, each at most 5 minutes (or 5 intervals); unknown cycles add nothing."};
constexpr FamilySpec kGpuEquivalents{
    "gpuattr_workload_gpu_equivalents", MetricType::kGauge,
    "Compute the workload's pods hold now: the sum over their devices of 1 for a whole GPU, g/G "
    "for a MIG slice, 1/r for a time-slicing replica."};
constexpr FamilySpec kReclaimable{
    "gpuattr_workload_reclaimable_gpu_equivalents", MetricType::kGauge,
    "GPU-equivalents following the recommendation would give back now: the sum over the "
    "workload's pods' devices of max(0, held share - recommended share)."};

constexpr FamilySpec kReclaimableCost{
    "gpuattr_workload_reclaimable_cost_per_hour", MetricType::kGauge,
    "What following the recommendation would save per hour now, in `currency`: the sum over the "
    "workload's pods' devices of max(0, held share - recommended share) times the price per "
    "GPU-hour of that device's card (accounting.prices). Priced cards only: absent when none of "
    "its pods' cards is priced."};

constexpr FamilySpec kFamilies[] = {kRecommendation, kPods,           kMemoryPeak,
                                    kUtilizationP95, kObserved,       kGpuEquivalents,
                                    kReclaimable,    kReclaimableCost};

Labels WorkloadLabels(const std::string& cluster, const rightsizing::WorkloadView& v) {
  return Labels{{"cluster", cluster},
                {"namespace", v.id.namespace_},
                {"workload", v.id.name},
                {"workload_kind", v.id.kind}};
}

void Build(const model::Snapshot& s, FamilyWriter& w) {
  for (const model::ClusterSnapshot& c : s.clusters)
    if (c.latest.output) WriteRightsizing(c.cluster, c.latest.output->rightsizing, w);
}

}  // namespace

void WriteRightsizing(const std::string& cluster, const rightsizing::RightsizingView& view,
                      FamilyWriter& w) {
  for (const rightsizing::WorkloadView& v : view.workloads) {
    Labels l = WorkloadLabels(cluster, v);
    l.emplace("current", v.recommendation.current);
    l.emplace("recommended", v.recommendation.recommended);
    l.emplace("reason", rightsizing::ReasonName(v.recommendation.reason));
    w.Add(kRecommendation, l, 1);
  }
  for (const rightsizing::WorkloadView& v : view.workloads)
    w.Add(kPods, WorkloadLabels(cluster, v), static_cast<double>(v.pods));
  for (const rightsizing::WorkloadView& v : view.workloads)
    AddKnown(w, kMemoryPeak, WorkloadLabels(cluster, v), v.memory_peak_bytes);
  for (const rightsizing::WorkloadView& v : view.workloads)
    AddKnown(w, kUtilizationP95, WorkloadLabels(cluster, v), v.utilization_p95);
  for (const rightsizing::WorkloadView& v : view.workloads)
    w.Add(kObserved, WorkloadLabels(cluster, v), v.observed_seconds);
  for (const rightsizing::WorkloadView& v : view.workloads)
    w.Add(kGpuEquivalents, WorkloadLabels(cluster, v), v.gpu_equivalents);
  for (const rightsizing::WorkloadView& v : view.workloads)
    w.Add(kReclaimable, WorkloadLabels(cluster, v), v.reclaimable_gpu_equivalents);
  for (const rightsizing::WorkloadView& v : view.workloads) {
    if (!v.reclaimable_cost_per_hour) continue;
    Labels l = WorkloadLabels(cluster, v);
    l.emplace("currency", view.currency);
    w.Add(kReclaimableCost, l, *v.reclaimable_cost_per_hour);
  }
}

constinit const FamilyGroup kRightsizingGroup{"rightsizing", kFamilies, &Build};

}  // namespace gpuattr::metrics
