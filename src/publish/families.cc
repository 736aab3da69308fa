#include "gpuattr/publish/families.h"

#include <prometheus/text_serializer.h>

#include "gpuattr/publish/allocation.h"
#include "gpuattr/publish/devices.h"
#include "gpuattr/publish/health.h"
#include "gpuattr/publish/inference.h"
#include "gpuattr/publish/ledger.h"
#include "gpuattr/publish/namespaces.h"
#include "gpuattr/publish/node_power.h"
#include "gpuattr/publish/pods.h"

namespace gpuattr::publish {
namespace {

// THE table of family groups, in output order. A new group is a file under src/publish/ that
// defines its FamilyGroup, its declaration in a header, and one line here. Pointers (not copies)
// keep this constant-initialised across translation units.
// clang-format off
constexpr const FamilyGroup* kGroups[] = {
    &kSelfMetricsGroup,
    &kDiscoveryGroup,
    &kDevicesGroup,
    &kPodsGroup,
    &kNamespacesGroup,
    &kNodePowerGroup,
    &kAllocationGroup,
    &kInferenceGroup,
    &kLedgerGroup,
    &kHealthGroup,
};
// clang-format on

}  // namespace

std::span<const FamilyGroup* const> FamilyGroups() { return kGroups; }

void FamilyWriter::Declare(const FamilySpec& spec) {
  if (index_.count(spec.name)) return;
  prometheus::MetricFamily f;
  f.name = std::string(spec.name);
  f.help = std::string(spec.help);
  f.type = spec.type;
  index_.emplace(spec.name, families_.size());
  families_.push_back(std::move(f));
}

void FamilyWriter::Add(const FamilySpec& spec, Labels labels, double value) {
  Declare(spec);  // no-op for tabled families; keeps a stray spec visible rather than lost
  prometheus::ClientMetric m;
  m.label.reserve(labels.size());
  for (auto& [k, v] : labels) m.label.push_back({k, std::move(v)});
  if (spec.type == prometheus::MetricType::Counter)
    m.counter.value = value;
  else
    m.gauge.value = value;
  families_[index_.at(spec.name)].metric.push_back(std::move(m));
}

std::vector<prometheus::MetricFamily> FamilyWriter::Finish() && {
  std::vector<prometheus::MetricFamily> out;
  out.reserve(families_.size());
  for (auto& f : families_)
    if (!f.metric.empty()) out.push_back(std::move(f));
  return out;
}

std::vector<prometheus::MetricFamily> BuildFamilies(const Snapshot& snapshot) {
  FamilyWriter w;
  for (const FamilyGroup* g : kGroups)
    for (const FamilySpec& spec : g->families) w.Declare(spec);
  for (const FamilyGroup* g : kGroups) g->build(snapshot, w);
  return std::move(w).Finish();
}

std::string RenderText(const Snapshot& snapshot) {
  try {
    return prometheus::TextSerializer().Serialize(BuildFamilies(snapshot));
  } catch (const std::exception& e) {  // the serializer writes to a stringstream; be safe anyway
    return "# gpuattr: rendering failed: " + std::string(e.what()) + "\n";
  }
}

}  // namespace gpuattr::publish
