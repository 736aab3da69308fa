#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "golden/rich_snapshot.h"
#include "gpuattr/build_info.h"
#include "gpuattr/metrics/families.h"
#include "gpuattr/report/status_page.h"
#include "gpuattr/util/strings.h"
#include "support/family_collector.h"
#include "support/paths.h"

namespace gpuattr::metrics {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

model::ClusterSnapshot Pending(std::string name) {
  model::ClusterSnapshot c;
  c.cluster = std::move(name);
  return c;
}

model::Snapshot TwoClusters() { return gpuattr::testing::RichSnapshot(); }

TEST(MetricsFamilies, EveryFamilyIsDeclaredOnceAcrossTheTable) {
  std::set<std::string> names;
  for (const FamilyGroup* g : FamilyGroups()) {
    ASSERT_NE(g, nullptr);
    EXPECT_FALSE(g->name.empty());
    EXPECT_FALSE(g->families.empty()) << g->name;
    for (const FamilySpec& f : g->families) {
      EXPECT_TRUE(names.insert(std::string(f.name)).second) << f.name << " declared twice";
      EXPECT_TRUE(f.name.starts_with("gpuattr_")) << f.name;
      EXPECT_GT(f.help.size(), 20u) << f.name << ": HELP must say what the number means";
      if (f.type == MetricType::kCounter)
        EXPECT_TRUE(f.name.ends_with("_total")) << f.name;
      else
        EXPECT_EQ(f.type, MetricType::kGauge) << f.name;
    }
  }
  for (const char* want :
       {"gpuattr_build_info", "gpuattr_cluster_up", "gpuattr_last_cycle_timestamp_seconds",
        "gpuattr_cycle_duration_seconds", "gpuattr_apiserver_requests_total"})
    EXPECT_TRUE(names.count(want)) << want;
}

TEST(MetricsFamilies, EmittedFamiliesAreUniqueAndTabled) {
  std::set<std::string> tabled;
  for (const FamilyGroup* g : FamilyGroups())
    for (const FamilySpec& f : g->families) tabled.insert(std::string(f.name));
  std::set<std::string> seen;
  for (const auto& fam : BuildFamilies(TwoClusters())) {
    EXPECT_TRUE(seen.insert(fam.name).second) << fam.name << " emitted twice";
    EXPECT_TRUE(tabled.count(fam.name)) << fam.name << " is not in the family table";
    // The process's own configuration reloads and its HTTP server belong to no cluster (as
    // Prometheus's).
    if (fam.name.starts_with("gpuattr_config_last_reload") ||
        fam.name == "gpuattr_http_refused_total")
      continue;
    for (const auto& m : fam.metric) {
      bool has_cluster = false;
      for (const auto& l : m.label) has_cluster |= l.name == "cluster";
      EXPECT_TRUE(has_cluster) << fam.name << " series without a cluster label";
    }
  }
  EXPECT_EQ(seen.size(), tabled.size()) << "a rich snapshot should exercise every family";
}

// Docs are a tested contract, labels included (as kube-state-metrics' documentation test): the
// label names of every family emitted from the rich snapshot, besides `cluster`, are exactly the
// README metric table's labels column for that family.
TEST(MetricsFamilies, ReadmeLabelsColumnMatchesEmittedLabels) {
  std::istringstream in(gpuattr::testing::ReadFile(gpuattr::testing::SourceDir() / "README.md"));
  const std::regex row(R"(^\| `(gpuattr_[a-z0-9_]+)` \| (?:gauge|counter) \| ([^|]*)\|)");
  std::map<std::string, std::set<std::string>> documented;
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!std::regex_search(line, m, row)) continue;
    std::set<std::string>& labels = documented[m[1]];
    std::istringstream cells(m[2].str());
    std::string name;
    while (std::getline(cells, name, ',')) {
      name = std::string(Trim(name));
      if (!name.empty()) labels.insert(name);
    }
  }
  ASSERT_FALSE(documented.empty()) << "README.md has no metric table rows";
  for (const auto& fam : BuildFamilies(TwoClusters())) {
    std::set<std::string> emitted;
    for (const auto& series : fam.metric)
      for (const auto& l : series.label)
        if (l.name != "cluster") emitted.insert(l.name);
    // label_<name>...: the labels accounting.namespace_labels names (docs/accounting.md#teams).
    if (std::erase_if(emitted, [](const std::string& l) { return l.starts_with("label_"); }) > 0)
      emitted.insert("label_<name>...");
    auto it = documented.find(fam.name);
    ASSERT_NE(it, documented.end()) << fam.name << " is not in the README metric table";
    EXPECT_EQ(emitted, it->second) << fam.name << ": README labels column differs";
  }
}

TEST(MetricsFamilies, SelfMetricsText) {
  std::string text = RenderText(TwoClusters());
  const std::string rev = build::kRevision, ver = build::kVersion;
  EXPECT_THAT(text, HasSubstr("# TYPE gpuattr_build_info gauge\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_build_info{cluster=\"kind-gpu\",revision=\"" + rev +
                              "\",version=\"" + ver + "\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_cluster_up{cluster=\"kind-gpu\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_cluster_up{cluster=\"prod \\\"eu\\\"\"} 0\n"));
  EXPECT_THAT(text,
              HasSubstr("gpuattr_last_cycle_timestamp_seconds{cluster=\"kind-gpu\"} 1764460800\n"));
  // Absent means unknown: the cluster that never succeeded has no timestamp at all.
  EXPECT_THAT(text, Not(HasSubstr("gpuattr_last_cycle_timestamp_seconds{cluster=\"prod")));
  EXPECT_THAT(text, HasSubstr("gpuattr_cycle_duration_seconds{cluster=\"kind-gpu\"} 0.25\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_cycle_duration_seconds{cluster=\"prod \\\"eu\\\"\"} 15\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE gpuattr_apiserver_requests_total counter\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_apiserver_requests_total{cluster=\"kind-gpu\",code=\"200\","
                              "resource=\"pods\",verb=\"list\"} 2\n"));
  EXPECT_THAT(text,
              HasSubstr("gpuattr_apiserver_requests_total{cluster=\"kind-gpu\",code=\"error\","
                        "resource=\"pods/proxy\",verb=\"get\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("# HELP gpuattr_cluster_up 1 when"));
}

TEST(MetricsFamilies, VanishedClusterVanishesAndEmptyFamiliesAreLeftOut) {
  model::Snapshot s = TwoClusters();
  s.clusters.pop_back();
  std::string text = RenderText(s);
  EXPECT_THAT(text, Not(HasSubstr("prod")));
  model::Snapshot empty;
  EXPECT_EQ(RenderText(empty), "");
  // Before the first cycle: no duration, no timestamp, cluster_up 0.
  model::Snapshot pending;
  pending.clusters.push_back(Pending("c"));
  std::string p = RenderText(pending);
  EXPECT_THAT(p, HasSubstr("gpuattr_cluster_up{cluster=\"c\"} 0\n"));
  EXPECT_THAT(p, Not(HasSubstr("gpuattr_cycle_duration_seconds")));
  EXPECT_THAT(p, Not(HasSubstr("gpuattr_last_cycle_timestamp_seconds")));
  EXPECT_THAT(p, Not(HasSubstr("gpuattr_cycle_interval_seconds")));
}

// The configured interval is published from before the first cycle on (GpuattrStale divides the
// data's age by it, docs/alerts.md#gpuattrstale); a snapshot that does not know it leaves it out.
TEST(MetricsFamilies, CycleIntervalIsPublishedWhenKnown) {
  model::Snapshot s;
  s.clusters.push_back(Pending("lab"));
  s.clusters.back().interval_seconds = 600;
  s.clusters.push_back(Pending("old"));
  const std::string text = RenderText(s);
  EXPECT_THAT(text, HasSubstr("# TYPE gpuattr_cycle_interval_seconds gauge\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_cycle_interval_seconds{cluster=\"lab\"} 600\n"));
  EXPECT_THAT(text, Not(HasSubstr("gpuattr_cycle_interval_seconds{cluster=\"old\"}")));
}

TEST(ReportStatusPage, EscapesEverythingFromTheSnapshot) {
  model::Snapshot s = TwoClusters();
  s.clusters[0].cluster = "<script>alert(1)</script>";
  s.clusters[1].latest.errors = {"pods is forbidden: User \"x\" cannot list <b>pods</b> & more"};
  std::string html = report::RenderStatusPage(s, 1764460812);
  EXPECT_THAT(html, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(html, Not(HasSubstr("<b>pods</b>")));
  EXPECT_THAT(html, HasSubstr("User &quot;x&quot; cannot list &lt;b&gt;pods&lt;/b&gt; &amp; more"));
  EXPECT_THAT(html, HasSubstr("class=\"b up\">up<"));
  EXPECT_THAT(html, HasSubstr("class=\"b down\">down<"));
  EXPECT_THAT(html, HasSubstr("2025-11-30 00:00:00 UTC"));
  EXPECT_THAT(html, HasSubstr("data-k=\"data_age_seconds\" data-v=\"12\"><span>12 s<"));
  EXPECT_THAT(html, HasSubstr("Exporters and probes"));
  EXPECT_THAT(html, HasSubstr("dcgm-exporter-x"));  // the discovery section of the report
}

// The daemon publishes its reloads like Prometheus (no cluster label); --once has none.
TEST(MetricsFamilies, ConfigReloadSeriesOnlyWhenTheDaemonSetsThem) {
  model::Snapshot s = TwoClusters();
  s.config_reload.reset();
  EXPECT_THAT(RenderText(s), Not(HasSubstr("gpuattr_config_last_reload")));
  s.config_reload = model::ConfigReload{false, 1764460800};
  const std::string text = RenderText(s);
  EXPECT_THAT(text, HasSubstr("# TYPE gpuattr_config_last_reload_successful gauge\n"
                              "gpuattr_config_last_reload_successful 0\n"));
  EXPECT_THAT(text,
              HasSubstr("\ngpuattr_config_last_reload_success_timestamp_seconds 1764460800\n"));
}

TEST(ReportStatusPage, PendingBeforeFirstCycle) {
  model::Snapshot s;
  s.clusters.push_back(Pending("c"));
  std::string html = report::RenderStatusPage(s, 0);
  EXPECT_THAT(html, HasSubstr("The first cycle has not finished yet."));
  EXPECT_THAT(html, HasSubstr(">pending<"));
  EXPECT_EQ(report::HtmlEscape("a'b\"c<d>&"), "a&#39;b&quot;c&lt;d&gt;&amp;");
}

}  // namespace
}  // namespace gpuattr::metrics
