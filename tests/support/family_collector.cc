#include "support/family_collector.h"

#include <string>
#include <utility>

namespace gpuattr::metrics {

FamilyCollector::FamilyCollector(std::span<const FamilyGroup* const> groups) {
  for (const FamilyGroup* g : groups)
    for (const FamilySpec& spec : g->families) Declare(spec);
}

size_t FamilyCollector::Declare(const FamilySpec& spec) {
  if (auto it = index_.find(spec.name); it != index_.end()) return it->second;
  prometheus::MetricFamily f;
  f.name = std::string(spec.name);
  f.help = std::string(spec.help);
  f.type = spec.type == MetricType::kCounter ? prometheus::MetricType::Counter
                                             : prometheus::MetricType::Gauge;
  index_.emplace(spec.name, families_.size());
  families_.push_back(std::move(f));
  return families_.size() - 1;
}

void FamilyCollector::Add(const FamilySpec& spec, const Labels& labels, double value) {
  // Declare is a lookup for tabled families; it keeps a stray spec visible rather than lost.
  prometheus::MetricFamily& family = families_[Declare(spec)];
  prometheus::ClientMetric m;
  m.label.reserve(labels.size());
  for (const Label& l : labels) m.label.push_back({std::string(l.name), std::string(l.value)});
  if (spec.type == MetricType::kCounter)
    m.counter.value = value;
  else
    m.gauge.value = value;
  family.metric.push_back(std::move(m));
}

std::vector<prometheus::MetricFamily> FamilyCollector::Finish() && {
  std::vector<prometheus::MetricFamily> out;
  out.reserve(families_.size());
  for (auto& f : families_)
    if (!f.metric.empty()) out.push_back(std::move(f));
  return out;
}

std::vector<prometheus::MetricFamily> BuildFamilies(const model::Snapshot& snapshot) {
  FamilyCollector w(FamilyGroups());
  for (const FamilyGroup* g : FamilyGroups()) g->build(snapshot, w);
  return std::move(w).Finish();
}

}  // namespace gpuattr::metrics
