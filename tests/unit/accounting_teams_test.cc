// Teams (docs/accounting.md#teams): the listed labels of each namespace, their Prometheus names as
// kube-state-metrics writes them, the configuration's checks, and gpuattr_namespace_labels.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuattr/accounting/teams.h"
#include "gpuattr/app/config.h"
#include "gpuattr/kube/decode.h"
#include "gpuattr/metrics/families.h"
#include "gpuattr/model/snapshot.h"
#include "gpuattr/util/json_document.h"

namespace gpuattr::accounting {
namespace {

using ::testing::HasSubstr;

kube::Namespace Ns(std::string name, std::map<std::string, std::string> labels) {
  kube::Namespace n;
  n.name = std::move(name);
  n.labels = std::move(labels);
  return n;
}

TEST(Teams, EveryNamespaceWithOnlyTheListedLabelsItHas) {
  const std::map<std::string, kube::Namespace> namespaces = {
      {"ml", Ns("ml", {{"team", "vision"}, {"cost-center", "42"}, {"env", "prod"}})},
      {"etl", Ns("etl", {{"env", "dev"}})},
  };
  const NamespaceLabels got = TeamLabelsOf(namespaces, {"team", "cost-center"});
  EXPECT_EQ(got,
            (NamespaceLabels{{"etl", {}}, {"ml", {{"cost-center", "42"}, {"team", "vision"}}}}));
  EXPECT_EQ(TeamLabelsOf(namespaces, {}), (NamespaceLabels{{"etl", {}}, {"ml", {}}}));
}

TEST(Teams, PrometheusNamesAsKubeStateMetricsWritesThem) {
  EXPECT_EQ(PrometheusLabelFor("team"), "label_team");
  EXPECT_EQ(PrometheusLabelFor("example.com/cost-center"), "label_example_com_cost_center");
  EXPECT_EQ(PrometheusLabelFor("Team_2"), "label_Team_2");
}

TEST(Teams, NamesThatWouldCollideOrAreEmptyAreRefused) {
  EXPECT_TRUE(CheckNamespaceLabelNames({"team", "example.com/owner"}));
  const Status clash = CheckNamespaceLabelNames({"team.io/x", "team_io_x"});
  ASSERT_FALSE(clash);
  EXPECT_THAT(clash.message(), HasSubstr("\"team.io/x\" and \"team_io_x\" are both published as "
                                         "label_team_io_x"));
  EXPECT_FALSE(CheckNamespaceLabelNames({""}));
  EXPECT_THAT(CheckNamespaceLabelNames(std::vector<std::string>(11, "a")).message(),
              HasSubstr("at most 10"));
}

TEST(Teams, TheConfigurationNamesTheKeyAtFault) {
  auto ok = app::LoadConfig({}, "config.yaml", "accounting:\n  namespace_labels: [team, owner]\n");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->accounting.namespace_labels, (std::vector<std::string>{"team", "owner"}));
  auto defaults = app::LoadConfig({}, "config.yaml", "");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->accounting.namespace_labels, (std::vector<std::string>{"team"}));
  auto clash = app::LoadConfig({}, "config.yaml", "accounting:\n  namespace_labels: [a.b, a_b]\n");
  ASSERT_FALSE(clash.ok());
  EXPECT_THAT(clash.error().message, HasSubstr("accounting.namespace_labels: \"a.b\" and \"a_b\""));
  auto empty = app::LoadConfig({}, "config.yaml", "accounting:\n  namespace_labels: [\"\"]\n");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().message, HasSubstr("accounting.namespace_labels[0]"));
}

TEST(Teams, DecodedFromTheNamespaceObject) {
  auto doc = gpuattr::JsonDocument::Parse(
      R"({"kind":"Namespace","metadata":{"name":"ml","resourceVersion":"9","labels":{"team":"vision"}}})");
  ASSERT_TRUE(doc.ok());
  auto ns = kube::DecodeNamespace(doc->Root());
  ASSERT_TRUE(ns.ok()) << ns.error().message;
  EXPECT_EQ(ns->name, "ml");
  EXPECT_EQ(ns->resource_version, "9");
  EXPECT_EQ(ns->labels.at("team"), "vision");
}

TEST(Teams, PublishedOneSeriesPerNamespace) {
  model::Snapshot s;
  s.complete = true;
  model::ClusterSnapshot c;
  c.cluster = "lab";
  c.latest.up = true;
  c.cycles = 1;
  auto out = std::make_shared<model::CycleOutput>();
  out->namespace_labels = {{"etl", {}}, {"ml", {{"example.com/owner", "ana"}, {"team", "vision"}}}};
  c.latest.output = out;
  s.clusters.push_back(c);
  const std::string text = metrics::RenderText(s);
  EXPECT_THAT(text, HasSubstr("# TYPE gpuattr_namespace_labels gauge\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_namespace_labels{cluster=\"lab\",namespace=\"etl\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_namespace_labels{cluster=\"lab\",label_example_com_owner="
                              "\"ana\",label_team=\"vision\",namespace=\"ml\"} 1\n"));
}

}  // namespace
}  // namespace gpuattr::accounting
