// The reference writer of the family groups (metrics/families.h): prometheus-cpp MetricFamily
// objects, one ClientMetric per series, which tests and golden files render through
// prometheus-cpp's TextSerializer. The daemon writes with TextWriter (metrics/text_writer.h) and
// does not link prometheus-cpp; tests check that both print the same text.
#pragma once

#include <prometheus/metric_family.h>

#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpuattr/metrics/families.h"
#include "gpuattr/model/snapshot.h"

namespace gpuattr::metrics {

class FamilyCollector final : public FamilyWriter {
 public:
  FamilyCollector() = default;
  // Declares the families of `groups` in table order first.
  explicit FamilyCollector(std::span<const FamilyGroup* const> groups);
  void Add(const FamilySpec& spec, const Labels& labels, double value) override;
  // Families in table order; those without series are left out.
  std::vector<prometheus::MetricFamily> Finish() &&;

 private:
  size_t Declare(const FamilySpec& spec);
  std::vector<prometheus::MetricFamily> families_;
  std::unordered_map<std::string_view, size_t> index_;
};

// Every group of the table (FamilyGroups()) through the reference writer.
std::vector<prometheus::MetricFamily> BuildFamilies(const model::Snapshot& snapshot);

}  // namespace gpuattr::metrics
