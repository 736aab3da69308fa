// The bundled Grafana dashboards are importable, portable and honest (docs/dashboards.md):
// valid JSON with unique panel ids; the data source is the `datasource` variable (file
// provisioning works as the files are); a cluster/namespace/node variable exists only where every
// data panel uses it; units from a short list, and thresholds of their own on every stat, gauge
// and gauge cell; aggregations keep `cluster` and never add different resources; no division by a
// series that may be 0; top-k graphs pick their series over the whole range; drill-down links
// reach dashboards and variables that exist; firing gpuattr alerts are annotations.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>

#include "support/dashboards.h"
#include "support/paths.h"

namespace gpuattr::testing {
namespace {

using nlohmann::json;

constexpr std::string_view kDatasource = "${datasource}";

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

bool IsDataPanel(const json& p) {
  const std::string type = p.value("type", "");
  return type != "row" && type != "text";
}

// A panel's field overrides ([] for rows and text panels, which have none).
const json& Overrides(const json& panel) {
  static const json none = json::array();
  if (!panel.contains("fieldConfig") || !panel["fieldConfig"].contains("overrides")) return none;
  return panel["fieldConfig"]["overrides"];
}

std::set<std::string> VariableNames(const json& dashboard) {
  std::set<std::string> out;
  for (const auto& v : dashboard["templating"]["list"]) out.insert(v.value("name", ""));
  return out;
}

// `$name` or `${name}` (or `${name:format}`) as a whole variable reference.
bool UsesVariable(std::string_view expr, const std::string& name) {
  const std::regex ref("\\$(\\{" + name + "[}:]|" + name + "\\b)");
  return std::regex_search(expr.begin(), expr.end(), ref);
}

// The argument of the call whose "(" is at `open`, up to its balanced ")" (parentheses inside
// quoted label values do not count).
std::string Argument(const std::string& expr, size_t open) {
  int depth = 0;
  char quote = 0;
  for (size_t i = open; i < expr.size(); ++i) {
    const char c = expr[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') quote = c;
    if (c == '(') ++depth;
    if (c == ')' && --depth == 0) return expr.substr(open + 1, i - open - 1);
  }
  return expr.substr(open + 1);
}

struct Aggregation {
  std::string op;                 // sum, count, ...
  std::optional<std::string> by;  // the by (...) list, if any
  std::string argument;           // what is aggregated
};

// Every aggregation of an expression, in the leading form `op by (labels) (argument)` or bare
// `op(argument)` (the trailing `op(argument) by (labels)` form is not used by the generator and is
// reported as bare, so a test fails on it).
std::vector<Aggregation> Aggregations(const std::string& expr) {
  static const std::regex agg(
      R"(\b(sum|count|avg|min|max|group|stddev|stdvar|quantile)\s*(?:by\s*\(([^)]*)\)\s*)?\()");
  std::vector<Aggregation> out;
  for (auto it = std::sregex_iterator(expr.begin(), expr.end(), agg); it != std::sregex_iterator();
       ++it) {
    Aggregation a;
    a.op = (*it)[1];
    if ((*it)[2].matched) a.by = (*it)[2];
    a.argument = Argument(expr, static_cast<size_t>(it->position() + it->length() - 1));
    out.push_back(std::move(a));
  }
  return out;
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
                           "allocation.json", "pending.json", "inference.json", "chargeback.json",
                           "self.json"})
    EXPECT_TRUE(names.count(want)) << "grafana/dashboards/" << want << " is missing";
}

TEST_P(Dashboards, HasTitleUidAndModernSchema) {
  EXPECT_FALSE(dashboard_.value("title", "").empty()) << file_;
  EXPECT_FALSE(dashboard_.value("uid", "").empty()) << file_;
  EXPECT_TRUE(dashboard_["id"].is_null()) << file_ << ": an exported id collides on import";
  EXPECT_GE(dashboard_.value("schemaVersion", 0), 36) << file_;
}

// A `datasource` variable instead of an import-time ${DS_...} input: Grafana's file
// provisioning does not resolve __inputs, the variable works both ways.
TEST_P(Dashboards, DataSourceIsAVariable) {
  bool found = false;
  for (const auto& v : dashboard_["templating"]["list"])
    if (v.value("name", "") == "datasource") {
      found = true;
      EXPECT_EQ(v.value("type", ""), "datasource") << file_;
      EXPECT_EQ(v.value("query", ""), "prometheus") << file_;
    }
  EXPECT_TRUE(found) << file_ << ": no `datasource` variable";
  EXPECT_FALSE(dashboard_.contains("__inputs")) << file_ << ": __inputs needs editing to provision";
  EXPECT_EQ(dashboard_.dump().find("${DS_"), std::string::npos) << file_;
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

TEST_P(Dashboards, QueryVariablesAreLabelValuesWithAll) {
  for (const char* var : {"job", "instance", "cluster"})
    EXPECT_TRUE(VariableNames(dashboard_).count(var)) << file_ << ": no variable " << var;
  for (const auto& v : dashboard_["templating"]["list"]) {
    if (v.value("type", "") != "query") continue;
    const std::string definition = v.value("definition", "");
    EXPECT_EQ(definition.rfind("label_values(", 0), 0u)
        << file_ << ": variable " << v.value("name", "") << " is not a label_values query";
    EXPECT_EQ(v["datasource"].value("uid", ""), kDatasource) << file_;
    EXPECT_TRUE(v.value("includeAll", false)) << file_ << ": " << v.value("name", "");
  }
}

// A variable that some panel ignores misleads: pick a node and a panel that cannot filter by node
// still shows every node. So a dashboard has cluster/namespace/node only if every data panel uses
// it.
TEST_P(Dashboards, EveryFilterVariableIsUsedByEveryDataPanel) {
  const auto names = VariableNames(dashboard_);
  for (const char* var : {"job", "instance", "cluster", "namespace", "node"}) {
    if (!names.count(var)) continue;
    for (const json* p : AllPanels(dashboard_)) {
      if (!IsDataPanel(*p)) continue;
      bool used = false;
      for (const auto& t : (*p)["targets"]) used = used || UsesVariable(t.value("expr", ""), var);
      EXPECT_TRUE(used) << file_ << ": panel \"" << p->value("title", "") << "\" ignores $" << var
                        << " (use it, or remove the variable from the dashboard)";
    }
  }
}

TEST(DashboardFiles, SelfDashboardDoesNotFilterExportersByTheWorkloadNamespace) {
  auto d = LoadDashboard(SourceDir() / "grafana" / "dashboards" / "self.json");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_FALSE(VariableNames(*d).count("namespace"));
  for (const auto& q : DashboardQueries(*d, "self.json"))
    EXPECT_FALSE(UsesVariable(q.expr, "namespace")) << q.Where();
}

TEST_P(Dashboards, EveryTargetHasAQueryAndEveryDataPanelAKnownUnit) {
  // Counts are `short`; energy is kWh (never joules); the rest are what the numbers are.
  const std::set<std::string> units = {"short", "watt",    "bytes",       "percentunit", "kwatth",
                                       "s",     "celsius", "bool_yes_no", "reqps"};
  for (const json* p : AllPanels(dashboard_)) {
    if (!IsDataPanel(*p)) continue;
    const std::string title = p->value("title", "");
    ASSERT_TRUE(p->contains("targets") && !(*p)["targets"].empty()) << file_ << ": " << title;
    const std::string unit = (*p)["fieldConfig"]["defaults"].value("unit", "");
    EXPECT_TRUE(units.count(unit))
        << file_ << ": panel \"" << title << "\" has unit \"" << unit << "\"";
    for (const auto& o : Overrides(*p))
      for (const auto& prop : o["properties"]) {
        if (prop.value("id", "") != "unit") continue;
        EXPECT_TRUE(units.count(prop.value("value", "")))
            << file_ << ": panel \"" << title << "\" column unit " << prop["value"];
      }
    std::set<std::string> refs;
    for (const auto& t : (*p)["targets"]) {
      EXPECT_FALSE(t.value("expr", "").empty()) << file_ << ": " << title;
      EXPECT_TRUE(refs.insert(t.value("refId", "")).second) << file_ << ": " << title;
    }
  }
}

// Grafana's default thresholds (green, red at 80) paint "805 W" red and "5 critical" green.
void ExpectOwnThresholds(const json& t, const std::string& where) {
  ASSERT_TRUE(t.is_object() && t.contains("steps")) << where << ": no thresholds";
  EXPECT_EQ(t.value("mode", ""), "absolute") << where;
  const auto& steps = t["steps"];
  ASSERT_FALSE(steps.empty()) << where;
  EXPECT_TRUE(steps[0]["value"].is_null()) << where << ": the first step is the base";
  const bool grafana_default = steps.size() == 2 && steps[0].value("color", "") == "green" &&
                               steps[1].value("color", "") == "red" && steps[1]["value"] == 80;
  EXPECT_FALSE(grafana_default) << where << ": Grafana's default thresholds";
}

TEST_P(Dashboards, EveryStatGaugeAndGaugeCellHasItsOwnThresholds) {
  size_t checked = 0;
  for (const json* p : AllPanels(dashboard_)) {
    const std::string type = p->value("type", ""), title = p->value("title", "");
    if (type == "stat" || type == "gauge" || type == "bargauge") {
      ExpectOwnThresholds((*p)["fieldConfig"]["defaults"].value("thresholds", json()),
                          file_ + " panel \"" + title + "\"");
      ++checked;
    }
    for (const auto& o : Overrides(*p)) {
      bool gauge_cell = false;
      json thresholds;
      for (const auto& prop : o["properties"]) {
        if (prop.value("id", "") == "custom.cellOptions" && prop["value"].is_object() &&
            prop["value"].value("type", "") == "gauge")
          gauge_cell = true;
        if (prop.value("id", "") == "thresholds") thresholds = prop["value"];
      }
      if (!gauge_cell) continue;
      ExpectOwnThresholds(thresholds, file_ + " panel \"" + title + "\" column " +
                                          o["matcher"].value("options", ""));
      ++checked;
    }
  }
  EXPECT_GT(checked, 0u) << file_;
}

TEST_P(Dashboards, QueriesFilterOnTheClusterVariable) {
  // A dashboard over two clusters must not mix them: every gpuattr selector is filtered.
  for (const auto& q : DashboardQueries(dashboard_, file_)) {
    if (GpuattrMetricNames(q.expr).empty()) continue;
    EXPECT_NE(q.expr.find("cluster=~\"$cluster\""), std::string::npos) << q.Where();
  }
}

// Totals are per cluster: two clusters are never added into one number.
TEST_P(Dashboards, EveryAggregationKeepsCluster) {
  for (const auto& q : DashboardQueries(dashboard_, file_))
    for (const auto& a : Aggregations(q.expr)) {
      ASSERT_TRUE(a.by.has_value()) << q.Where() << ": " << a.op << "(...) without by: " << q.expr;
      EXPECT_NE(a.by->find("cluster"), std::string::npos)
          << q.Where() << ": " << a.op << " by (" << *a.by << ") drops cluster";
    }
}

// Replicas, whole GPUs and MIG slices are different things: per-resource quantities are summed
// only per resource, device counts that mix kinds are never summed, and no query names devices
// and replicas together.
TEST_P(Dashboards, NeverAddsReplicasWholeGpusAndMigSlices) {
  const std::regex per_resource(
      R"(gpuattr_(pod|namespace)_requested_(devices|replicas)|gpuattr_node_resource_\w+)");
  const std::regex mixed_counts(R"(gpuattr_node_devices_\w+|gpuattr_namespace_devices_in_use)");
  for (const auto& q : DashboardQueries(dashboard_, file_)) {
    for (const auto& a : Aggregations(q.expr)) {
      if (a.op != "sum") continue;
      if (std::regex_search(a.argument, per_resource)) {
        EXPECT_NE(a.by.value_or("").find("resource"), std::string::npos)
            << q.Where() << ": sums a per-resource family across resources: " << q.expr;
      }
      EXPECT_FALSE(std::regex_search(a.argument, mixed_counts))
          << q.Where() << ": sums device counts that mix whole GPUs and MIG slices: " << q.expr;
    }
    const auto names = GpuattrMetricNames(q.expr);
    const bool devices = names.count("gpuattr_pod_requested_devices") ||
                         names.count("gpuattr_namespace_requested_devices");
    const bool replicas = names.count("gpuattr_pod_requested_replicas") ||
                          names.count("gpuattr_namespace_requested_replicas");
    EXPECT_FALSE(devices && replicas) << q.Where() << ": devices and replicas in one query";
  }
}

// x / y where y may be 0 gives Inf or NaN: a divisor that is a series must be guarded (`> 0`).
TEST_P(Dashboards, NoDivisionByASeriesThatMayBeZero) {
  static const std::regex quoted(R"("(?:[^"\\]|\\.)*")");
  for (const auto& q : DashboardQueries(dashboard_, file_)) {
    const std::string e = std::regex_replace(q.expr, quoted, "\"\"");  // "a/b" is no division
    for (size_t i = e.find('/'); i != std::string::npos; i = e.find('/', i + 1)) {
      size_t j = e.find_first_not_of(' ', i + 1);
      if (j == std::string::npos) break;
      if (std::isdigit(static_cast<unsigned char>(e[j]))) continue;  // a constant
      if (e[j] == '(') {
        EXPECT_NE(Argument(e, j).find("> 0"), std::string::npos)
            << q.Where() << ": unguarded divisor in " << e;
      } else if (std::isalpha(static_cast<unsigned char>(e[j])) || e[j] == '_') {
        ADD_FAILURE() << q.Where() << ": divides by a bare series: " << e;
      }
    }
  }
}

// topk at each step of a graph shows a different top k at every point (dozens of lines for a
// "top 10"); the series are chosen once over the dashboard's range (`[$__range] @ end()`).
TEST_P(Dashboards, TopkInGraphsIsChosenOverTheRange) {
  for (const json* p : AllPanels(dashboard_)) {
    if (p->value("type", "") != "timeseries") continue;
    for (const auto& t : (*p)["targets"]) {
      const std::string e = t.value("expr", "");
      for (size_t i = e.find("topk("); i != std::string::npos; i = e.find("topk(", i + 1)) {
        const std::string arg = Argument(e, i + 4);
        EXPECT_NE(arg.find("[$__range] @ end()"), std::string::npos)
            << file_ << " panel \"" << p->value("title", "") << "\": topk per step: " << e;
      }
    }
  }
}

// Firing gpuattr alerts show on the graphs.
TEST_P(Dashboards, AnnotatesFiringGpuattrAlerts) {
  bool found = false;
  for (const auto& a : dashboard_["annotations"]["list"]) {
    const std::string expr = a.value("expr", "");
    if (expr.find("ALERTS{alertname=~\"Gpuattr.*\"") == std::string::npos) continue;
    found = true;
    EXPECT_NE(expr.find("alertstate=\"firing\""), std::string::npos) << file_ << ": " << expr;
    EXPECT_EQ(a["datasource"].value("uid", ""), kDatasource) << file_;
    EXPECT_TRUE(a.value("enable", false)) << file_;
  }
  EXPECT_TRUE(found) << file_ << ": no annotation from ALERTS{alertname=~\"Gpuattr.*\"}";
}

// Every data link reaches a bundled dashboard, sets only variables that dashboard has, and keeps
// the data source and the time range.
TEST(DashboardLinks, ReachBundledDashboardsAndTheirVariables) {
  std::map<std::string, std::set<std::string>> vars_by_uid;
  std::vector<json> dashboards;
  for (const auto& f : DashboardFiles()) {
    auto d = LoadDashboard(f);
    ASSERT_TRUE(d.ok()) << d.error().message;
    vars_by_uid[d->value("uid", "")] = VariableNames(*d);
    dashboards.push_back(std::move(*d));
  }
  const std::regex url_re(R"(^/d/([a-z0-9-]+)/[a-z0-9-]+\?(.*)$)");
  const std::regex var_re(R"(var-([a-z_]+)=)");
  std::set<std::pair<std::string, std::string>> edges;  // (from uid, to uid)
  for (const auto& d : dashboards) {
    const std::string from = d.value("uid", "");
    for (const json* p : AllPanels(d))
      for (const auto& o : Overrides(*p))
        for (const auto& prop : o["properties"]) {
          if (prop.value("id", "") != "links") continue;
          for (const auto& l : prop["value"]) {
            const std::string url = l.value("url", "");
            std::smatch m;
            ASSERT_TRUE(std::regex_match(url, m, url_re)) << from << ": link " << url;
            const std::string to = m[1], query = m[2];
            ASSERT_TRUE(vars_by_uid.count(to)) << from << ": link to unknown dashboard " << to;
            edges.insert({from, to});
            for (auto it = std::sregex_iterator(query.begin(), query.end(), var_re);
                 it != std::sregex_iterator(); ++it)
              EXPECT_TRUE(vars_by_uid[to].count((*it)[1]))
                  << from << ": link sets var-" << (*it)[1] << " that " << to << " lacks";
            EXPECT_NE(query.find("${datasource:queryparam}"), std::string::npos) << url;
            // Two gpuattr jobs in one Prometheus: the selection of job and instance goes along.
            EXPECT_NE(query.find("${job:queryparam}"), std::string::npos) << url;
            EXPECT_NE(query.find("${instance:queryparam}"), std::string::npos) << url;
            EXPECT_NE(query.find("${__url_time_range}"), std::string::npos) << url;
          }
        }
  }
  // The drill-down path: namespace → its pods → the devices of a pod's node.
  EXPECT_TRUE(edges.count({"gpuattr-namespaces", "gpuattr-pods"}));
  EXPECT_TRUE(edges.count({"gpuattr-pods", "gpuattr-devices"}));
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

// The checks above must be able to fail: they do on the mistakes they are for.
TEST(DashboardSupport, AggregationParserFindsBareAndByForms) {
  auto a = Aggregations("sum(x) + count by (cluster, node) (max by (cluster) (y{a=\"(\"}))");
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].op, "sum");
  EXPECT_FALSE(a[0].by.has_value());
  EXPECT_EQ(a[1].by.value_or(""), "cluster, node");
  EXPECT_EQ(a[2].argument, "y{a=\"(\"}");
  EXPECT_TRUE(Aggregations("max_over_time(x[1h]) + clamp_min(y, 0)").empty());
}

TEST(DashboardSupport, VariableReferencesAreWholeNames) {
  EXPECT_TRUE(UsesVariable("x{node=~\"$node\"}", "node"));
  EXPECT_TRUE(UsesVariable("x{c=~\"${cluster}|\"}", "cluster"));
  EXPECT_FALSE(UsesVariable("x{namespace=~\"$namespace\"}", "name"));
  EXPECT_FALSE(UsesVariable("x{node=\"a\"}", "node"));
}

}  // namespace
}  // namespace gpuattr::testing
