// --metric-allowlist / --metric-denylist (docs/app.md#choosing-metric-families):
// kube-state-metrics' semantics (comma-separated regular expressions, unanchored, mutually
// exclusive), the exposition without the excluded families, and errors that name the flag or key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "golden/rich_snapshot.h"
#include "gpuattr/app/config.h"
#include "gpuattr/app/options.h"
#include "gpuattr/metrics/families.h"
#include "gpuattr/metrics/family_filter.h"
#include "support/paths.h"

namespace gpuattr {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

app::CommandLine Flags(std::vector<std::string> args) {
  auto cl = app::ParseCommandLine(args);
  EXPECT_TRUE(cl.ok()) << cl.error().message;
  return cl.ok() ? *cl : app::CommandLine{};
}

Result<app::Config> Load(std::vector<std::string> args, std::string_view file = "") {
  return app::LoadConfig(Flags(std::move(args)), "gpuattr.yaml", file);
}

TEST(FamilyFilter, AllowAndDenyAsKubeStateMetrics) {
  auto none = metrics::FamilyFilter::Make({}, {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->keeps_everything());
  EXPECT_TRUE(none->Includes("gpuattr_pod_power_watts"));

  auto allow = metrics::FamilyFilter::Make({"^gpuattr_namespace_", "gpuattr_cluster_up$"}, {});
  ASSERT_TRUE(allow.ok()) << allow.error().message;
  EXPECT_TRUE(allow->Includes("gpuattr_namespace_power_watts"));
  EXPECT_TRUE(allow->Includes("gpuattr_cluster_up"));
  EXPECT_FALSE(allow->Includes("gpuattr_pod_power_watts"));

  // Unanchored, as kube-state-metrics matches: "pod_power" is found inside the name.
  auto deny = metrics::FamilyFilter::Make({}, {"pod_power"});
  ASSERT_TRUE(deny.ok());
  EXPECT_FALSE(deny->Includes("gpuattr_pod_power_watts"));
  EXPECT_TRUE(deny->Includes("gpuattr_namespace_power_watts"));

  auto both = metrics::FamilyFilter::Make({"a"}, {"b"});
  ASSERT_FALSE(both.ok());
  EXPECT_THAT(both.error().message, HasSubstr("mutually exclusive"));
  auto bad = metrics::FamilyFilter::Make({"gpuattr_(pod"}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("\"gpuattr_(pod\" is not a regular expression"));
  EXPECT_FALSE(metrics::FamilyFilter::Make({}, {""}).ok());
}

TEST(FamilyFilter, TheExpositionLeavesOutExcludedFamiliesWhole) {
  const model::Snapshot s = testing::RichSnapshot();
  const std::string all = metrics::RenderText(s);
  ASSERT_THAT(all, HasSubstr("gpuattr_pod_power_watts{"));
  auto deny = metrics::FamilyFilter::Make({}, {"^gpuattr_pod_"});
  ASSERT_TRUE(deny.ok());
  const std::string denied = metrics::RenderText(s, &*deny);
  // No series, no HELP, no TYPE (other families' HELP texts may name them).
  EXPECT_THAT(denied, Not(HasSubstr("\ngpuattr_pod_")));
  EXPECT_THAT(denied, Not(HasSubstr("# HELP gpuattr_pod_")));
  EXPECT_THAT(denied, Not(HasSubstr("# TYPE gpuattr_pod_")));
  EXPECT_THAT(denied, HasSubstr("# TYPE gpuattr_namespace_power_watts gauge\n"));
  EXPECT_THAT(denied, HasSubstr("gpuattr_cluster_up{"));

  auto allow = metrics::FamilyFilter::Make({"^gpuattr_cluster_up$"}, {});
  ASSERT_TRUE(allow.ok());
  const std::string only = metrics::RenderText(s, &*allow);
  EXPECT_THAT(only, HasSubstr("gpuattr_cluster_up{"));
  size_t lines = 0;
  for (char c : only) lines += c == '\n';
  EXPECT_EQ(lines, 2 + s.clusters.size()) << only;  // HELP, TYPE, one series per cluster
}

TEST(MetricSelectionSettings, FlagsAreCommaSeparatedAndTheFileTakesLists) {
  auto c = Load({"--metric-denylist", "^gpuattr_device_sm_, tensor_active"});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->metric_denylist, (std::vector<std::string>{"^gpuattr_device_sm_", "tensor_active"}));
  EXPECT_TRUE(c->metric_allowlist.empty());
  auto f = Load({}, "metric_allowlist: ['^gpuattr_namespace_']\n");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->metric_allowlist, (std::vector<std::string>{"^gpuattr_namespace_"}));
  // The flag replaces the file's list.
  auto both = Load({"--metric-allowlist", "up"}, "metric_allowlist: [a, b]\n");
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->metric_allowlist, (std::vector<std::string>{"up"}));
}

// docs/app.md#at-fleet-scale: each documented denylist, as a user would paste it, drops exactly
// the families the doc names, and none that a shipped alert or recording rule reads.
TEST(MetricSelectionSettings, TheDocumentedFleetDenylistsDropTheirFamiliesAndNoRulesInput) {
  namespace fs = std::filesystem;
  const std::string doc = testing::ReadFile(testing::SourceDir() / "docs/app.md");
  static const std::regex block(
      R"(<!-- denylist: (\S+) -->\n```sh\ngpuattr --metric-denylist '([^']+)'\n```)");
  std::map<std::string, std::string> lists;
  for (std::sregex_iterator it(doc.begin(), doc.end(), block), end; it != end; ++it)
    lists[(*it)[1]] = (*it)[2];
  ASSERT_EQ(lists.size(), 2u) << "docs/app.md's denylists changed: check each below";

  std::set<std::string> read_by_rules;
  static const std::regex family(R"(gpuattr_[a-z0-9_]+)");
  for (const auto& entry : fs::directory_iterator(testing::SourceDir() / "config/prometheus")) {
    if (entry.path().extension() != ".yml") continue;
    const std::string rules = testing::ReadFile(entry.path());
    for (std::sregex_iterator it(rules.begin(), rules.end(), family), end; it != end; ++it)
      read_by_rules.insert(it->str());
  }
  ASSERT_TRUE(read_by_rules.count("gpuattr_pod_idle_seconds"));  // the files were read

  const std::set<std::string> dcgm_overlap = {
      "gpuattr_device_utilization_ratio",   "gpuattr_device_sm_active_ratio",
      "gpuattr_device_tensor_active_ratio", "gpuattr_device_dram_active_ratio",
      "gpuattr_device_memory_used_bytes",   "gpuattr_device_memory_total_bytes",
      "gpuattr_device_temperature_celsius"};
  std::set<std::string> fleet = dcgm_overlap;
  for (const char* f :
       {"gpuattr_pod_devices", "gpuattr_pod_memory_total_bytes", "gpuattr_pod_attribution",
        "gpuattr_pod_gpu_equivalents", "gpuattr_pod_energy_joules_total", "gpuattr_workload_pods",
        "gpuattr_workload_memory_peak_bytes", "gpuattr_workload_utilization_p95_ratio",
        "gpuattr_workload_observed_seconds", "gpuattr_workload_gpu_equivalents"})
    fleet.insert(f);
  const std::map<std::string, std::set<std::string>> expected = {{"dcgm-overlap", dcgm_overlap},
                                                                 {"fleet", fleet}};
  for (const auto& [name, list] : lists) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(expected.count(name));
    auto config = Load({"--metric-denylist", list});
    ASSERT_TRUE(config.ok()) << config.error().message;
    auto filter = metrics::FamilyFilter::Make({}, config->metric_denylist);
    ASSERT_TRUE(filter.ok()) << filter.error().message;
    std::set<std::string> dropped;
    for (const metrics::FamilyGroup* group : metrics::FamilyGroups())
      for (const metrics::FamilySpec& f : group->families)
        if (!filter->Includes(f.name)) dropped.emplace(f.name);
    EXPECT_EQ(dropped, expected.at(name));
    for (const std::string& f : dropped) EXPECT_FALSE(read_by_rules.count(f)) << f;
  }
}

TEST(MetricSelectionSettings, ErrorsNameTheFlagOrKey) {
  auto both = Load({"--metric-allowlist", "a", "--metric-denylist", "b"});
  ASSERT_FALSE(both.ok());
  EXPECT_THAT(both.error().message, HasSubstr("--metric-allowlist"));
  EXPECT_THAT(both.error().message, HasSubstr("--metric-denylist"));
  EXPECT_THAT(both.error().message, HasSubstr("mutually exclusive"));
  auto mixed = Load({"--metric-denylist", "b"}, "metric_allowlist: [a]\n");
  ASSERT_FALSE(mixed.ok());
  EXPECT_THAT(mixed.error().message, HasSubstr("mutually exclusive"));
  auto bad = Load({"--metric-allowlist", "ok,gpuattr_[pod"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("--metric-allowlist: \"gpuattr_[pod\""));
  auto bad_file = Load({}, "metric_denylist: ['(']\n");
  ASSERT_FALSE(bad_file.ok());
  EXPECT_THAT(bad_file.error().message, HasSubstr("metric_denylist"));
}

}  // namespace
}  // namespace gpuattr
