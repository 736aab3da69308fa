#include "gpuattr/metrics/families.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_set>

#include "gpuattr/metrics/accounting.h"
#include "gpuattr/metrics/allocation.h"
#include "gpuattr/metrics/devices.h"
#include "gpuattr/metrics/health.h"
#include "gpuattr/metrics/inference.h"
#include "gpuattr/metrics/ledger.h"
#include "gpuattr/metrics/namespaces.h"
#include "gpuattr/metrics/node_power.h"
#include "gpuattr/metrics/pods.h"
#include "gpuattr/metrics/rightsizing.h"
#include "gpuattr/metrics/text_writer.h"

namespace gpuattr::metrics {
namespace {

// THE table of family groups, in output order. A new group is a file under src/metrics/ that
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
    &kAccountingGroup,
    &kHealthGroup,
    &kRightsizingGroup,
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

ExpositionText RenderChunks(const model::Snapshot& snapshot, size_t size_hint,
                            const FamilyFilter* filter) {
  TextWriter w(kGroups, size_hint, filter);
  for (const FamilyGroup* g : kGroups) g->build(snapshot, w);
  return std::move(w).FinishChunks();
}

bool RenderGroupByGroup(const model::Snapshot& snapshot,
                        const std::function<void(std::string_view)>& sink, size_t& largest_group,
                        const FamilyFilter* filter, bool by_family) {
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
    TextWriter w(one, std::move(buffer), filter);
    if (by_family) w.StreamTo(&sink);  // a group's text never exists whole
    g->build(snapshot, w);
    if (w.has_undeclared() || w.split()) return false;
    buffer = std::move(w).FinishInto(sink);
    largest = std::max(largest, w.peak_size());
  }
  largest_group = largest;
  return true;
}

std::string RenderText(const model::Snapshot& snapshot, const FamilyFilter* filter) {
  return RenderChunks(snapshot, 0, filter).Join();
}

}  // namespace gpuattr::metrics
