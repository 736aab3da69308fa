// Snapshot → metric families. Every family is declared once in a FamilySpec table of its group
// (one file per group under src/publish/), and every group is listed once in FamilyGroups()
// (src/publish/families.cc). Families are built fresh from each Snapshot, so series of things
// that vanished disappear on the next scrape.
#pragma once

#include <prometheus/metric_family.h>

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/publish/snapshot.h"

namespace gpuattr::publish {

struct FamilySpec {
  std::string_view name;
  prometheus::MetricType type;  // Gauge or Counter
  std::string_view help;        // what the number means, with its unit
};

using Labels = std::map<std::string, std::string>;

// Collects series for the families of one rendering. Groups add series by spec; a family with no
// series is left out of the output.
class FamilyWriter {
 public:
  void Add(const FamilySpec& spec, Labels labels, double value);
  // Families in table order (group order, then spec order within the group).
  std::vector<prometheus::MetricFamily> Finish() &&;

 private:
  friend std::vector<prometheus::MetricFamily> BuildFamilies(const Snapshot&);
  void Declare(const FamilySpec& spec);
  std::vector<prometheus::MetricFamily> families_;
  std::map<std::string_view, size_t> index_;
};

struct FamilyGroup {
  std::string_view name;                 // "self", "discovery", "devices", ...
  std::span<const FamilySpec> families;  // every family the group may emit
  void (*build)(const Snapshot&, FamilyWriter&);
};

// The table of groups, in output order.
std::span<const FamilyGroup* const> FamilyGroups();

std::vector<prometheus::MetricFamily> BuildFamilies(const Snapshot& snapshot);
// Prometheus text format 0.0.4.
std::string RenderText(const Snapshot& snapshot);

// Groups (one file each).
extern const FamilyGroup kSelfMetricsGroup;  // self_metrics.cc

}  // namespace gpuattr::publish
