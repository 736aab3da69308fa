// gpuattr_pod_info: one series per attributed pod with its uid and its rightsizing workload, built
// by the stage from the pod objects (app::PodIdentities) and written by the pods group.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuattr/app/stages.h"
#include "gpuattr/metrics/pods.h"
#include "support/snapshots.h"

namespace gpuattr::metrics {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

kube::Pod PodObject(std::string ns, std::string name, std::string uid) {
  kube::Pod p;
  p.namespace_ = std::move(ns);
  p.name = std::move(name);
  p.uid = std::move(uid);
  return p;
}

std::string Render(const std::vector<model::PodIdentity>& pods) {
  model::Snapshot s;
  s.complete = true;
  model::ClusterSnapshot c;
  c.cluster = "kind-gpu";
  c.latest.up = true;
  gpuattr::testing::MutableOutput(c).pod_identities = pods;
  s.clusters.push_back(std::move(c));
  return RenderText(s);
}

TEST(MetricsPodInfo, UidAndWorkloadFromThePodObject) {
  kube::ClusterObjects objects;
  kube::Pod chat = PodObject("ml", "chat-7d9f8c6b5-x2k4p", "u-chat");
  chat.labels["pod-template-hash"] = "7d9f8c6b5";
  chat.owners.push_back({"ReplicaSet", "chat-7d9f8c6b5", true, "apps/v1"});
  kube::Pod bare = PodObject("ml", "notebook", "u-notebook");
  objects.pods.emplace(chat.Key(), chat);
  objects.pods.emplace(bare.Key(), bare);

  attribution::Attribution a;
  a.cluster = "kind-gpu";
  for (const kube::PodId& id : {chat.Id(), bare.Id(), kube::PodId{"ml", "ghost"}}) {
    attribution::Pod p;
    p.id = id;
    p.node = "gpu-node-1";
    a.pods.push_back(p);
  }
  const std::vector<model::PodIdentity> pods = app::PodIdentities(a, objects);
  ASSERT_EQ(pods.size(), 3u);
  // The same workload the rightsizing stage records the pod under.
  EXPECT_EQ(pods[0].workload, rightsizing::WorkloadOf(chat));

  const std::string text = Render(pods);
  EXPECT_THAT(text, HasSubstr("# TYPE gpuattr_pod_info gauge\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_pod_info{cluster=\"kind-gpu\",namespace=\"ml\","
                              "node=\"gpu-node-1\",pod=\"chat-7d9f8c6b5-x2k4p\",uid=\"u-chat\","
                              "workload=\"chat\",workload_kind=\"Deployment\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_pod_info{cluster=\"kind-gpu\",namespace=\"ml\","
                              "node=\"gpu-node-1\",pod=\"notebook\",uid=\"u-notebook\","
                              "workload=\"notebook\",workload_kind=\"Pod\"} 1\n"));
  // No object: the pod is still listed, with no uid and no workload (absent, not "").
  EXPECT_THAT(text, HasSubstr("gpuattr_pod_info{cluster=\"kind-gpu\",namespace=\"ml\","
                              "node=\"gpu-node-1\",pod=\"ghost\"} 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("uid=\"\"")));
}

TEST(MetricsPodInfo, AnEmptyUidIsLeftOut) {
  model::PodIdentity p{{"ml", "job-0"}, "n1", "", rightsizing::WorkloadId{"ml", "Job", "train"}};
  EXPECT_THAT(Render({p}), HasSubstr("gpuattr_pod_info{cluster=\"kind-gpu\",namespace=\"ml\","
                                     "node=\"n1\",pod=\"job-0\",workload=\"train\","
                                     "workload_kind=\"Job\"} 1\n"));
}

}  // namespace
}  // namespace gpuattr::metrics
