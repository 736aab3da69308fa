// kubectl gpuattr (src/app/kubectl_plugin.cc, docs/install.md#kubectl-gpuattr): the plugin is
// recognised by its name, kubectl's flags become gpuattr's, and -n keeps one namespace's rows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuattr/app/kubectl_plugin.h"
#include "gpuattr/report/namespace_filter.h"

namespace gpuattr::app {
namespace {

using ::testing::ElementsAre;

TEST(KubectlPlugin, RecognisedByItsName) {
  EXPECT_TRUE(IsKubectlPlugin("kubectl-gpuattr"));
  EXPECT_TRUE(IsKubectlPlugin("/home/me/.krew/bin/kubectl-gpuattr"));
  EXPECT_FALSE(IsKubectlPlugin("/usr/bin/gpuattr"));
  EXPECT_FALSE(IsKubectlPlugin("kubectl-gpuattr-old"));
  EXPECT_FALSE(IsKubectlPlugin(""));
}

TEST(KubectlPlugin, DefaultsToOneCycleAsATable) {
  auto p = TranslatePluginArgs({});
  ASSERT_TRUE(p.ok());
  EXPECT_THAT(p->args, ElementsAre("--once", "--output", "table"));
  EXPECT_EQ(p->ns, "");
}

TEST(KubectlPlugin, KubectlSpellingsBecomeGpuattrFlags) {
  for (const std::vector<std::string>& in : {std::vector<std::string>{"-o", "markdown"},
                                             {"-omarkdown"},
                                             {"-o=markdown"},
                                             {"--output", "markdown"},
                                             {"--output=markdown"}}) {
    auto p = TranslatePluginArgs(in);
    ASSERT_TRUE(p.ok()) << in[0];
    EXPECT_THAT(p->args, ElementsAre("--output", "markdown", "--once")) << in[0];
  }
  for (const std::vector<std::string>& in : {std::vector<std::string>{"-n", "team-a"},
                                             {"-nteam-a"},
                                             {"--namespace", "team-a"},
                                             {"--namespace=team-a"}}) {
    auto p = TranslatePluginArgs(in);
    ASSERT_TRUE(p.ok()) << in[0];
    EXPECT_EQ(p->ns, "team-a") << in[0];
  }
  auto all = TranslatePluginArgs({"-n", "team-a", "-A"});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->ns, "");
  // gpuattr's own flags pass through; --kubeconfig and --context are the same names as kubectl's.
  auto p = TranslatePluginArgs({"--kubeconfig", "/k", "--context=lab", "--once", "-ojson"});
  ASSERT_TRUE(p.ok());
  EXPECT_THAT(p->args,
              ElementsAre("--kubeconfig", "/k", "--context=lab", "--once", "--output", "json"));
}

TEST(KubectlPlugin, MissingValuesAreErrors) {
  EXPECT_FALSE(TranslatePluginArgs({"-n"}).ok());
  EXPECT_FALSE(TranslatePluginArgs({"--namespace="}).ok());
  auto o = TranslatePluginArgs({"-o"});
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(o.error().message, ::testing::HasSubstr("-o/--output"));
}

TEST(KubectlPlugin, NamespaceFilterKeepsThatNamespacesRows) {
  attribution::Pod a, b;
  a.id = {"team-a", "worker-0"};
  b.id = {"team-b", "worker-1"};
  allocation::PendingPod pa, pb;
  pa.pod = {"team-a", "wait-0"};
  pb.pod = {"team-b", "wait-1"};
  report::StatusView view;
  view.namespaces.resize(2);
  view.namespaces[0].name = "team-a";
  view.namespaces[1].name = "team-b";
  report::PodRow ra, rb;
  ra.cluster = rb.cluster = "lab";
  ra.pod = &a;
  rb.pod = &b;
  for (auto* rows : {&view.idle, &view.top_by_power, &view.top_by_memory, &view.pods}) {
    rows->push_back(ra);
    rows->push_back(rb);
  }
  report::PendingRow qa, qb;
  qa.cluster = qb.cluster = "lab";
  qa.pending = &pa;
  qb.pending = &pb;
  view.pending.push_back(qa);
  view.pending.push_back(qb);
  view.nodes.resize(1);  // nodes and cards are everyone's: kept

  report::KeepNamespace(view, "team-b");
  ASSERT_EQ(view.namespaces.size(), 1u);
  EXPECT_EQ(view.namespaces[0].name, "team-b");
  for (auto* rows : {&view.idle, &view.top_by_power, &view.top_by_memory, &view.pods}) {
    ASSERT_EQ(rows->size(), 1u);
    EXPECT_EQ((*rows)[0].pod, &b);
  }
  ASSERT_EQ(view.pending.size(), 1u);
  EXPECT_EQ(view.pending[0].pending, &pb);
  EXPECT_EQ(view.nodes.size(), 1u);
}

}  // namespace
}  // namespace gpuattr::app
