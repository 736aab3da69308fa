#include "gpuattr/publish/families.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_set>

#include "gpuattr/publish/allocation.h"
#include "gpuattr/publish/devices.h"
#include "gpuattr/publish/health.h"
#include "gpuattr/publish/inference.h"
#include "gpuattr/publish/ledger.h"
#include "gpuattr/publish/namespaces.h"
#include "gpuattr/publish/node_power.h"
#include "gpuattr/publish/pods.h"
#include "gpuattr/publish/text_writer.h"

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

bool Labels::Insert(std::string_view name, std::string_view value) {
  Label* items = this->items();
  size_t at = size_;  // insertion point that keeps the names sorted
  int c = 1;
  while (at > 0 && (c = NameOrder(items[at - 1].name, name)) > 0) --at;
  if (at > 0 && c == 0) return false;
  if (size_ == kMax)
    throw std::length_error("a series has more than " + std::to_string(kMax) +
                            " labels (adding \"" + std::string(name) + "\")");
  for (size_t i = size_; i > at; --i) new (&items[i]) Label(items[i - 1]);
  new (&items[at]) Label(name, value);
  ++size_;
  return true;
}

FamilyCollector::FamilyCollector(std::span<const FamilyGroup* const> groups) {
  for (const FamilyGroup* g : groups)
    for (const FamilySpec& spec : g->families) Declare(spec);
}

size_t FamilyCollector::Declare(const FamilySpec& spec) {
  if (auto it = index_.find(spec.name); it != index_.end()) return it->second;
  prometheus::MetricFamily f;
  f.name = std::string(spec.name);
  f.help = std::string(spec.help);
  f.type = spec.type;
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
  if (spec.type == prometheus::MetricType::Counter)
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

std::vector<prometheus::MetricFamily> BuildFamilies(const Snapshot& snapshot) {
  FamilyCollector w(kGroups);
  for (const FamilyGroup* g : kGroups) g->build(snapshot, w);
  return std::move(w).Finish();
}

ExpositionText RenderChunks(const Snapshot& snapshot, size_t size_hint) {
  TextWriter w(kGroups, size_hint);
  for (const FamilyGroup* g : kGroups) g->build(snapshot, w);
  return std::move(w).FinishChunks();
}

bool RenderGroupByGroup(const Snapshot& snapshot, const std::function<void(std::string_view)>& sink,
                        size_t& largest_group) {
  // A family tabled in two groups would be written where its first group is: not group by group.
  static const bool disjoint = [] {
    std::unordered_set<std::string_view> names;
    for (const FamilyGroup* g : kGroups)
      for (const FamilySpec& spec : g->families)
        if (!names.insert(spec.name).second) return false;
    return true;
  }();
  if (!disjoint) return false;
  TextBuffer buffer;
  if (largest_group > 0) buffer.Reserve(largest_group + largest_group / 16);
  size_t largest = 0;
  for (const FamilyGroup* g : kGroups) {
    const FamilyGroup* one[] = {g};
    TextWriter w(one, std::move(buffer));
    g->build(snapshot, w);
    if (w.has_undeclared()) return false;
    buffer = std::move(w).FinishInto(sink);
    largest = std::max(largest, buffer.size());
  }
  largest_group = largest;
  return true;
}

std::string RenderText(const Snapshot& snapshot) { return RenderChunks(snapshot).Join(); }

}  // namespace gpuattr::publish
