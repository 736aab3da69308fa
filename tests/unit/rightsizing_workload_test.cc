// Workload identity from the pod object alone (docs/rightsizing.md#workloads).
#include "gpuattr/rightsizing/workload.h"

#include <gtest/gtest.h>

namespace gpuattr::rightsizing {
namespace {

kube::Pod MakePod(std::string name, std::vector<kube::OwnerReference> owners,
                  std::map<std::string, std::string> labels = {}) {
  kube::Pod p;
  p.namespace_ = "ml";
  p.name = std::move(name);
  p.owners = std::move(owners);
  p.labels = std::move(labels);
  return p;
}

kube::OwnerReference Controller(std::string kind, std::string name, std::string api_version) {
  return {std::move(kind), std::move(name), true, std::move(api_version)};
}

TEST(RightsizingWorkload, DeploymentThroughItsReplicaSet) {
  const kube::Pod pod =
      MakePod("chat-7d9f8c6b5-x2x9z", {Controller("ReplicaSet", "chat-7d9f8c6b5", "apps/v1")},
              {{"pod-template-hash", "7d9f8c6b5"}});
  EXPECT_EQ(WorkloadOf(pod), (WorkloadId{"ml", "Deployment", "chat"}));
}

TEST(RightsizingWorkload, DeploymentNameWithDashes) {
  const kube::Pod pod =
      MakePod("llm-chat-v2-5c4b-abcde", {Controller("ReplicaSet", "llm-chat-v2-5c4b", "apps/v1")},
              {{"pod-template-hash", "5c4b"}});
  EXPECT_EQ(WorkloadOf(pod), (WorkloadId{"ml", "Deployment", "llm-chat-v2"}));
}

TEST(RightsizingWorkload, ReplicaSetWhoseNameDoesNotEndInItsHashIsItself) {
  // A bare ReplicaSet (no Deployment): its pods still carry a hash it did not put in its name.
  const kube::Pod pod = MakePod("workers-abcde", {Controller("ReplicaSet", "workers", "apps/v1")},
                                {{"pod-template-hash", "7d9f8c6b5"}});
  EXPECT_EQ(WorkloadOf(pod), (WorkloadId{"ml", "ReplicaSet", "workers"}));
  // The hash label alone, without the dash before it, is no Deployment either.
  const kube::Pod glued =
      MakePod("workers7d9f8c6b5-abcde", {Controller("ReplicaSet", "workers7d9f8c6b5", "apps/v1")},
              {{"pod-template-hash", "7d9f8c6b5"}});
  EXPECT_EQ(WorkloadOf(glued), (WorkloadId{"ml", "ReplicaSet", "workers7d9f8c6b5"}));
  // Nor is a ReplicaSet whose name is only the hash.
  const kube::Pod only_hash = MakePod("x", {Controller("ReplicaSet", "-7d9f8c6b5", "apps/v1")},
                                      {{"pod-template-hash", "7d9f8c6b5"}});
  EXPECT_EQ(WorkloadOf(only_hash).kind, "ReplicaSet");
}

TEST(RightsizingWorkload, ReplicaSetWithoutHashLabelIsItself) {
  const kube::Pod pod =
      MakePod("chat-7d9f8c6b5-x2x9z", {Controller("ReplicaSet", "chat-7d9f8c6b5", "apps/v1")});
  EXPECT_EQ(WorkloadOf(pod), (WorkloadId{"ml", "ReplicaSet", "chat-7d9f8c6b5"}));
}

TEST(RightsizingWorkload, CustomReplicaSetKindOfAnotherGroupIsItself) {
  const kube::Pod pod = MakePod("chat-7d9f8c6b5-x2x9z",
                                {Controller("ReplicaSet", "chat-7d9f8c6b5", "example.com/v1")},
                                {{"pod-template-hash", "7d9f8c6b5"}});
  EXPECT_EQ(WorkloadOf(pod), (WorkloadId{"ml", "ReplicaSet", "chat-7d9f8c6b5"}));
}

TEST(RightsizingWorkload, StatefulSet) {
  const kube::Pod pod = MakePod("db-0", {Controller("StatefulSet", "db", "apps/v1")},
                                {{"controller-revision-hash", "db-6b8f"}});
  EXPECT_EQ(WorkloadOf(pod), (WorkloadId{"ml", "StatefulSet", "db"}));
}

TEST(RightsizingWorkload, Job) {
  const kube::Pod pod = MakePod("finetune-x7k2p", {Controller("Job", "finetune", "batch/v1")});
  EXPECT_EQ(WorkloadOf(pod), (WorkloadId{"ml", "Job", "finetune"}));
}

TEST(RightsizingWorkload, JobOfACronJob) {
  // A CronJob names its Jobs "<cronjob>-<scheduled time in minutes>": 8 digits or more.
  const kube::Pod pod = MakePod("nightly-eval-29433600-abcde",
                                {Controller("Job", "nightly-eval-29433600", "batch/v1")});
  EXPECT_EQ(WorkloadOf(pod), (WorkloadId{"ml", "CronJob", "nightly-eval"}));
  // Seven digits are a Job's own name.
  const kube::Pod short_suffix =
      MakePod("run-1234567-abcde", {Controller("Job", "run-1234567", "batch/v1")});
  EXPECT_EQ(WorkloadOf(short_suffix), (WorkloadId{"ml", "Job", "run-1234567"}));
  const kube::Pod letters =
      MakePod("run-2943360a-abcde", {Controller("Job", "run-2943360a", "batch/v1")});
  EXPECT_EQ(WorkloadOf(letters), (WorkloadId{"ml", "Job", "run-2943360a"}));
}

TEST(RightsizingWorkload, CustomControllerKind) {
  const kube::Pod pod = MakePod("ray-head-abcde", {Controller("RayCluster", "ray", "ray.io/v1")});
  EXPECT_EQ(WorkloadOf(pod), (WorkloadId{"ml", "RayCluster", "ray"}));
  const kube::Pod lws =
      MakePod("serve-0-1", {Controller("LeaderWorkerSet", "serve", "leaderworkerset.x-k8s.io/v1")});
  EXPECT_EQ(WorkloadOf(lws), (WorkloadId{"ml", "LeaderWorkerSet", "serve"}));
}

TEST(RightsizingWorkload, BarePodIsItself) {
  const kube::Pod pod = MakePod("notebook", {});
  EXPECT_EQ(WorkloadOf(pod), (WorkloadId{"ml", "Pod", "notebook"}));
}

TEST(RightsizingWorkload, NonControllerOwnerIsIgnored) {
  // An owner without `controller: true` (e.g. a garbage-collection parent) does not make the pod
  // part of that object's workload.
  kube::OwnerReference owner{"ConfigMap", "settings", false, "v1"};
  const kube::Pod pod = MakePod("debug", {owner});
  EXPECT_EQ(WorkloadOf(pod), (WorkloadId{"ml", "Pod", "debug"}));
  // With a controller among others, the controller decides.
  const kube::Pod both = MakePod("db-1", {owner, Controller("StatefulSet", "db", "apps/v1")});
  EXPECT_EQ(WorkloadOf(both), (WorkloadId{"ml", "StatefulSet", "db"}));
}

}  // namespace
}  // namespace gpuattr::rightsizing
