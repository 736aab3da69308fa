// The bundled Grafana dashboards are importable and portable: valid JSON, unique panel ids, a
// DS_PROMETHEUS input and no hard-coded datasource uid, the cluster/namespace/node variables,
// a unit on every data panel, and a query on every target.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "support/dashboards.h"
#include "support/paths.h"

namespace gpuattr::testing {
namespace {

using nlohmann::json;

constexpr std::string_view kDatasource = "${DS_PROMETHEUS}";

// Every "datasource" object anywhere in the document, with where it was found.
void CollectDatasources(const json& j, const std::string& path,
                        std::vector<std::pair<std::string, json>>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "datasource") out.emplace_back(path + "/datasource", it.value());
      CollectDatasources(it.value(), path + "/" + it.key(), out);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i)
      CollectDatasources(j[i], path + "/" + std::to_string(i), out);
  }
}

class Dashboards : public ::testing::TestWithParam<std::filesystem::path> {
 protected:
  void SetUp() override {
    auto d = LoadDashboard(GetParam());
    ASSERT_TRUE(d.ok()) << d.error().message;
    dashboard_ = std::move(*d);
    file_ = GetParam().filename().string();
  }
  json dashboard_;
  std::string file_;
};

TEST(DashboardFiles, OnePerQuestionExists) {
  std::set<std::string> names;
  for (const auto& p : DashboardFiles()) names.insert(p.filename().string());
  for (const char* want : {"namespaces.json", "pods.json", "devices.json", "idle.json",
                           "allocation.json", "inference.json", "self.json"})
    EXPECT_TRUE(names.count(want)) << "grafana/dashboards/" << want << " is missing";
}

TEST_P(Dashboards, HasTitleUidAndModernSchema) {
  EXPECT_FALSE(dashboard_.value("title", "").empty()) << file_;
  EXPECT_FALSE(dashboard_.value("uid", "").empty()) << file_;
  EXPECT_TRUE(dashboard_["id"].is_null()) << file_ << ": an exported id collides on import";
  EXPECT_GE(dashboard_.value("schemaVersion", 0), 36) << file_;
}

TEST_P(Dashboards, DeclaresThePrometheusDatasourceInput) {
  ASSERT_TRUE(dashboard_.contains("__inputs")) << file_;
  bool found = false;
  for (const auto& in : dashboard_["__inputs"])
    if (in.value("name", "") == "DS_PROMETHEUS" && in.value("type", "") == "datasource" &&
        in.value("pluginId", "") == "prometheus")
      found = true;
  EXPECT_TRUE(found) << file_ << ": no __inputs entry DS_PROMETHEUS (datasource, prometheus)";
}

TEST_P(Dashboards, NoHardCodedDatasourceUid) {
  std::vector<std::pair<std::string, json>> sources;
  CollectDatasources(dashboard_, "", sources);
  ASSERT_FALSE(sources.empty()) << file_;
  for (const auto& [where, ds] : sources) {
    // Grafana's built-in annotation source is the only other datasource allowed.
    if (ds.is_object() && ds.value("uid", "") == "-- Grafana --") continue;
    ASSERT_TRUE(ds.is_object()) << file_ << where << ": datasource must be {type, uid}";
    EXPECT_EQ(ds.value("uid", ""), kDatasource) << file_ << where;
    EXPECT_EQ(ds.value("type", ""), "prometheus") << file_ << where;
  }
}

TEST_P(Dashboards, PanelIdsAreUnique) {
  std::set<int> ids;
  for (const json* p : AllPanels(dashboard_)) {
    ASSERT_TRUE(p->contains("id") && (*p)["id"].is_number_integer())
        << file_ << ": panel \"" << p->value("title", "") << "\" has no integer id";
    EXPECT_TRUE(ids.insert((*p)["id"].get<int>()).second)
        << file_ << ": panel id " << (*p)["id"] << " is used twice";
  }
  EXPECT_GT(ids.size(), 3u) << file_;
}

TEST_P(Dashboards, HasClusterNamespaceAndNodeVariables) {
  std::set<std::string> names;
  for (const auto& v : dashboard_["templating"]["list"]) {
    names.insert(v.value("name", ""));
    const std::string definition = v.value("definition", "");
    EXPECT_EQ(definition.rfind("label_values(", 0), 0u)
        << file_ << ": variable " << v.value("name", "") << " is not a label_values query";
    EXPECT_EQ(v["datasource"].value("uid", ""), kDatasource) << file_;
    EXPECT_TRUE(v.value("includeAll", false)) << file_ << ": " << v.value("name", "");
  }
  for (const char* want : {"cluster", "namespace", "node"})
    EXPECT_TRUE(names.count(want)) << file_ << ": no variable " << want;
}

TEST_P(Dashboards, EveryTargetHasAQueryAndEveryDataPanelAUnit) {
  for (const json* p : AllPanels(dashboard_)) {
    const std::string type = p->value("type", "");
    if (type == "row" || type == "text") continue;
    const std::string title = p->value("title", "");
    ASSERT_TRUE(p->contains("targets") && !(*p)["targets"].empty()) << file_ << ": " << title;
    EXPECT_FALSE((*p)["fieldConfig"]["defaults"].value("unit", "").empty())
        << file_ << ": panel \"" << title << "\" has no unit";
    std::set<std::string> refs;
    for (const auto& t : (*p)["targets"]) {
      EXPECT_FALSE(t.value("expr", "").empty()) << file_ << ": " << title;
      EXPECT_TRUE(refs.insert(t.value("refId", "")).second) << file_ << ": " << title;
    }
  }
}

TEST_P(Dashboards, QueriesFilterOnTheClusterVariable) {
  // A dashboard over two clusters must not mix them: every gpuattr selector is filtered.
  for (const auto& q : DashboardQueries(dashboard_, file_)) {
    if (GpuattrMetricNames(q.expr).empty()) continue;
    EXPECT_NE(q.expr.find("cluster=~\"$cluster\""), std::string::npos) << q.Where();
  }
}

std::string Name(const ::testing::TestParamInfo<std::filesystem::path>& info) {
  return info.param.stem().string();
}

INSTANTIATE_TEST_SUITE_P(Bundled, Dashboards, ::testing::ValuesIn(DashboardFiles()), Name);

// The JSON is generated: a hand edit that the generator does not make would be lost next time.
TEST(DashboardFiles, MatchTheGenerator) {
  if (std::system("command -v python3 >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
  const std::string cmd =
      "python3 '" + (SourceDir() / "grafana" / "generate.py").string() + "' --check 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0)
      << "grafana/dashboards/*.json differ from grafana/generate.py";
}

TEST(DashboardSupport, MetricNamesSkipQuotedLabelValues) {
  auto names = GpuattrMetricNames(
      R"(sum(gpuattr_pod_power_watts{job="gpuattr_x"}) / on(pod) gpuattr_pod_devices)");
  EXPECT_EQ(names, (std::set<std::string>{"gpuattr_pod_power_watts", "gpuattr_pod_devices"}));
}

TEST(DashboardSupport, SubstitutesLongestVariableFirstAndBraces) {
  EXPECT_EQ(SubstituteVariables(
                "x{a=~\"$node\",b=\"${cluster}\"}[$__range_s $__range]",
                {{"node", "n1"}, {"cluster", "c"}, {"__range", "1h"}, {"__range_s", "3600"}}),
            "x{a=~\"n1\",b=\"c\"}[3600 1h]");
}

TEST(DashboardSupport, AlternationEscapesRegexCharactersForPromql) {
  EXPECT_EQ(GrafanaRegexAlternation({"team-a", "ml.prod"}), R"((team-a|ml\\.prod))");
}

}  // namespace
}  // namespace gpuattr::testing
