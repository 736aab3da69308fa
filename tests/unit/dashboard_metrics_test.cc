// Every gpuattr_* family a dashboard or an alert rule queries is one gpuattr emits (the family
// table in src/metrics/). A renamed family fails here instead of leaving an empty panel.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "gpuattr/metrics/families.h"
#include "support/dashboards.h"

namespace gpuattr::testing {
namespace {

std::set<std::string> EmittedFamilies() {
  std::set<std::string> out;
  for (const metrics::FamilyGroup* g : metrics::FamilyGroups())
    for (const metrics::FamilySpec& f : g->families) out.insert(std::string(f.name));
  return out;
}

// Families the dashboards and rules already query while the daemon's side of the issue that adds
// them is in progress (docs/design.md#metrics and docs/design.md#trust-limits-and-failure name
// them). Remove an entry once the family table has it; the test says so.
const std::map<std::string, std::string>& NotYetEmitted() {
  static const std::map<std::string, std::string> families = {};
  return families;
}

// metric name → the first place that uses it.
void Expect(const std::map<std::string, std::string>& used) {
  const auto emitted = EmittedFamilies();
  ASSERT_FALSE(emitted.empty());
  std::string missing;
  for (const auto& [name, where] : used)
    if (!emitted.count(name) && !NotYetEmitted().count(name))
      missing += "\n  " + name + " (first used by " + where + ")";
  EXPECT_TRUE(missing.empty()) << "queried but not emitted by gpuattr:" << missing;
}

TEST(DashboardMetrics, NotYetEmittedListIsCurrent) {
  const auto emitted = EmittedFamilies();
  for (const auto& [name, reason] : NotYetEmitted())
    EXPECT_FALSE(emitted.count(name))
        << name << " is emitted now: remove it from NotYetEmitted() (" << reason << ")";
}

TEST(DashboardMetrics, EveryDashboardFamilyIsEmitted) {
  std::map<std::string, std::string> used;
  for (const auto& file : DashboardFiles()) {
    auto d = LoadDashboard(file);
    ASSERT_TRUE(d.ok()) << d.error().message;
    for (const auto& q : DashboardQueries(*d, file.filename().string()))
      for (const auto& name : GpuattrMetricNames(q.expr)) used.emplace(name, q.Where());
  }
  ASSERT_GT(used.size(), 30u) << "the dashboards query suspiciously few families";
  Expect(used);
}

// A recorded series (level:metric:operations) a dashboard queries is recorded by a bundled rule.
TEST(DashboardMetrics, EveryRecordedSeriesIsRecordedByABundledRule) {
  std::set<std::string> recorded;
  for (const auto& file : AlertRuleFiles()) {
    auto names = RecordedSeries(file);
    ASSERT_TRUE(names.ok()) << names.error().message;
    recorded.insert(names->begin(), names->end());
  }
  size_t queried = 0;
  for (const auto& file : DashboardFiles()) {
    auto d = LoadDashboard(file);
    ASSERT_TRUE(d.ok()) << d.error().message;
    for (const auto& q : DashboardQueries(*d, file.filename().string()))
      for (const auto& name : MetricNames(q.expr)) {
        if (name.find(':') == std::string::npos) continue;
        ++queried;
        EXPECT_TRUE(recorded.count(name))
            << q.Where() << " queries " << name << ", which no rule in config/prometheus records";
      }
  }
  EXPECT_GT(queried, 0u) << "the Chargeback dashboard reads the recording rules";
}

TEST(DashboardMetrics, EveryAlertRuleFamilyIsEmitted) {
  std::map<std::string, std::string> used;
  ASSERT_FALSE(AlertRuleFiles().empty());
  for (const auto& file : AlertRuleFiles()) {
    auto exprs = RuleExpressions(file);
    ASSERT_TRUE(exprs.ok()) << exprs.error().message;
    for (const auto& e : *exprs)
      for (const auto& name : GpuattrMetricNames(e))
        used.emplace(name, file.filename().string() + ": " + e);
  }
  ASSERT_GT(used.size(), 5u);
  Expect(used);
}

}  // namespace
}  // namespace gpuattr::testing
