#include "gpuattr/kube/decode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gpuattr::kube {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// The decoders take a parsed document; these tests write objects as nlohmann JSON.
Result<Pod> DecodePod(const json& j) { return DecodeText(&kube::DecodePod, j.dump()); }
Result<Node> DecodeNode(const json& j) { return DecodeText(&kube::DecodeNode, j.dump()); }
Result<Service> DecodeService(const json& j) { return DecodeText(&kube::DecodeService, j.dump()); }

// Trimmed from a real `kubectl get pod -o json` of a vLLM pod with a sidecar and a DRA claim.
constexpr const char* kPod = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {
    "name": "vllm-7b-6d9f", "namespace": "inference", "uid": "0b3c-11",
    "resourceVersion": "48213", "creationTimestamp": "2025-03-04T05:06:07Z",
    "labels": {"app": "vllm", "pod-template-hash": "6d9f"},
    "annotations": {
      "prometheus.io/scrape": "true", "prometheus.io/port": "8000",
      "kubectl.kubernetes.io/last-applied-configuration": "{\"huge\": true}"
    },
    "ownerReferences": [{"kind": "ReplicaSet", "name": "vllm-7b"}]
  },
  "spec": {
    "nodeName": "gpu-node-3",
    "initContainers": [
      {"name": "fetch-model", "image": "busybox:1.36",
       "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}},
      {"name": "log-shipper", "image": "fluent-bit:3", "restartPolicy": "Always",
       "resources": {"requests": {"cpu": "100m", "example.com/foo": "500m"}}}
    ],
    "containers": [
      {"name": "server", "image": "vllm/vllm-openai:v0.6.3",
       "ports": [{"name": "http", "containerPort": 8000, "protocol": "TCP"}, {"containerPort": 9000}],
       "resources": {
         "limits": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "2", "nvidia.com/mig-1g.10gb": 1},
         "requests": {"cpu": "4", "memory": "32Gi", "ephemeral-storage": "10Gi", "hugepages-2Mi": "1Gi"},
         "claims": [{"name": "gpu"}]
       }}
    ],
    "resourceClaims": [
      {"name": "gpu", "resourceClaimTemplateName": "single-gpu"},
      {"name": "shared", "resourceClaimName": "team-shared-gpu"}
    ]
  },
  "status": {
    "phase": "Running",
    "conditions": [
      {"type": "Initialized", "status": "True"},
      {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2025-03-04T05:06:08Z"}
    ],
    "containerStatuses": [{"name": "server", "ready": true, "restartCount": 0}],
    "initContainerStatuses": [{"name": "log-shipper", "ready": true}],
    "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "vllm-7b-6d9f-gpu-x7k2p"}]
  }
})";

TEST(DecodePod, RealisticPod) {
  auto r = DecodePod(json::parse(kPod));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Pod& p = *r;
  EXPECT_EQ(p.Key(), "inference/vllm-7b-6d9f");
  EXPECT_EQ(p.uid, "0b3c-11");
  EXPECT_EQ(p.resource_version, "48213");
  EXPECT_EQ(p.node_name, "gpu-node-3");
  EXPECT_EQ(p.phase, "Running");
  EXPECT_EQ(p.creation_unix, 1741064767);
  EXPECT_EQ(p.labels.at("app"), "vllm");
  // Only prometheus.io/* annotations are kept (last-applied-configuration can be huge).
  EXPECT_EQ(p.annotations.size(), 2u);
  EXPECT_EQ(p.annotations.at("prometheus.io/port"), "8000");
  // Owner references: an exporter owned by a DaemonSet may speak for its node
  // (docs/design.md#trust).
  ASSERT_EQ(p.owners.size(), 1u);
  EXPECT_EQ(p.owners[0].kind, "ReplicaSet");
  EXPECT_EQ(p.owners[0].name, "vllm-7b");
  EXPECT_FALSE(p.owners[0].controller);
  EXPECT_EQ(p.OwnedBy("DaemonSet"), nullptr);
  ASSERT_NE(p.OwnedBy("ReplicaSet"), nullptr);

  ASSERT_EQ(p.containers.size(), 1u);
  const Container& c = p.containers[0];
  EXPECT_EQ(c.image, "vllm/vllm-openai:v0.6.3");
  ASSERT_EQ(c.ports.size(), 2u);
  EXPECT_EQ(c.ports[0].name, "http");
  EXPECT_EQ(c.ports[0].container_port, 8000);
  EXPECT_EQ(c.ports[1].name, "");
  EXPECT_EQ(c.ports[1].container_port, 9000);
  // Extended resources in limits only; cpu/memory/ephemeral-storage/hugepages dropped.
  EXPECT_EQ(c.limits, (ResourceList{{"nvidia.com/gpu", 2}, {"nvidia.com/mig-1g.10gb", 1}}));
  EXPECT_TRUE(c.requests.empty());
  EXPECT_FALSE(c.IsSidecar());

  ASSERT_EQ(p.init_containers.size(), 2u);
  EXPECT_FALSE(p.init_containers[0].IsSidecar());
  EXPECT_TRUE(p.init_containers[0].limits.empty());
  EXPECT_TRUE(p.init_containers[1].IsSidecar());
  EXPECT_EQ(p.init_containers[1].requests, (ResourceList{{"example.com/foo", 1}}));

  EXPECT_TRUE(p.all_containers_ready);
  EXPECT_TRUE(p.scheduled.present);
  EXPECT_EQ(p.scheduled.status, "True");

  ASSERT_EQ(p.resource_claims.size(), 2u);
  EXPECT_EQ(p.resource_claims[0].name, "gpu");
  EXPECT_EQ(p.resource_claims[0].claim_name, "vllm-7b-6d9f-gpu-x7k2p");  // from the status
  EXPECT_EQ(p.resource_claims[1].name, "shared");
  EXPECT_EQ(p.resource_claims[1].claim_name, "team-shared-gpu");  // direct reference
}

TEST(DecodePod, PendingUnschedulable) {
  auto r = DecodePod(json::parse(R"({
    "metadata": {"name": "big", "namespace": "ml"},
    "spec": {"containers": [{"name": "a", "resources": {"limits": {"nvidia.com/gpu": "16"}}},
                            {"name": "b"}]},
    "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
      "reason": "Unschedulable", "message": "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."}]}
  })"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->node_name, "");
  EXPECT_EQ(r->scheduled.status, "False");
  EXPECT_EQ(r->scheduled.reason, "Unschedulable");
  EXPECT_THAT(r->scheduled.message, HasSubstr("Insufficient nvidia.com/gpu"));
  EXPECT_FALSE(r->all_containers_ready);
  EXPECT_EQ(r->containers[0].limits.at("nvidia.com/gpu"), 16);
}

TEST(DecodePod, LegacyClaimSource) {
  auto r = DecodePod(json::parse(R"({"metadata": {"name": "p", "namespace": "n"},
    "spec": {"resourceClaims": [{"name": "gpu", "source": {"resourceClaimName": "old-style"}}]}})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->resource_claims.size(), 1u);
  EXPECT_EQ(r->resource_claims[0].claim_name, "old-style");
}

TEST(DecodePod, NotAllContainersReady) {
  auto r = DecodePod(json::parse(R"({
    "metadata": {"name": "p", "namespace": "n"},
    "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
    "status": {"containerStatuses": [{"name": "a", "ready": true}, {"name": "b", "ready": false}]}
  })"));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->all_containers_ready);
}

TEST(DecodePod, MissingFieldsAreFine) {
  auto r =
      DecodePod(json::parse(R"({"metadata": {"name": "bare", "namespace": "x", "labels": null}})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->Key(), "x/bare");
  EXPECT_TRUE(r->containers.empty());
  EXPECT_FALSE(r->scheduled.present);
  EXPECT_TRUE(DecodePod(json::object()).ok());
}

TEST(DecodePod, DaemonSetOwner) {
  auto r = DecodePod(json::parse(R"({"metadata": {"name": "nvidia-dcgm-exporter-7xk2p",
      "namespace": "gpu-operator", "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "nvidia-dcgm-exporter",
         "uid": "5d1c", "controller": true, "blockOwnerDeletion": true}]}})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const OwnerReference* ds = r->OwnedBy("DaemonSet");
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->name, "nvidia-dcgm-exporter");
  EXPECT_TRUE(ds->controller);
  EXPECT_EQ(ds->api_version, "apps/v1");  // a hand-written reference may name any group
  EXPECT_EQ(r->Controller(), ds);
}

TEST(DecodePod, WrongTypesNameTheObjectAndTheField) {
  auto j = json::parse(kPod);
  j["spec"]["containers"][0]["ports"][0]["containerPort"] = "8000";
  auto r = DecodePod(j);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(r.error().message, HasSubstr("pod \"inference/vllm-7b-6d9f\""));
  EXPECT_THAT(r.error().message, HasSubstr("spec.containers[0].ports[0].containerPort"));
  EXPECT_THAT(r.error().message, HasSubstr("got string"));

  j = json::parse(kPod);
  j["metadata"]["labels"]["app"] = 3;
  r = DecodePod(j);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("metadata.labels[\"app\"]"));

  j = json::parse(kPod);
  j["metadata"]["ownerReferences"][0]["kind"] = 7;
  r = DecodePod(j);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("metadata.ownerReferences[0].kind"));

  j = json::parse(kPod);
  j["spec"]["initContainers"] = "nope";
  r = DecodePod(j);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("spec.initContainers: expected an array"));

  j = json::parse(kPod);
  j["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "two";
  r = DecodePod(j);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message,
              HasSubstr("spec.containers[0].resources.limits[\"nvidia.com/gpu\"]"));
  EXPECT_THAT(r.error().message, HasSubstr("invalid quantity \"two\""));

  j = json::parse(kPod);
  j["metadata"]["creationTimestamp"] = "yesterday";
  r = DecodePod(j);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("metadata.creationTimestamp"));

  r = DecodePod(json::array());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("expected an object, got array"));
}

TEST(DecodeNode, MigMixedNode) {
  auto r = DecodeNode(json::parse(R"({
    "metadata": {"name": "a100-1", "uid": "n-1", "resourceVersion": "77", "labels": {
      "nvidia.com/mig.strategy": "mixed", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
      "nvidia.com/gpu.replicas": "1", "kubernetes.io/hostname": "a100-1"}},
    "spec": {"unschedulable": true, "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
    "status": {
      "capacity": {"cpu": "96", "memory": "1056000Mi", "nvidia.com/gpu": "0",
                   "nvidia.com/mig-1g.10gb": "46", "nvidia.com/mig-3g.40gb": "1", "pods": "110"},
      "allocatable": {"cpu": "95500m", "nvidia.com/gpu": "0", "nvidia.com/mig-1g.10gb": "45",
                      "nvidia.com/mig-3g.40gb": "1"}}
  })"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->Key(), "a100-1");
  EXPECT_TRUE(r->unschedulable);
  EXPECT_EQ(r->labels.size(), 4u);
  EXPECT_EQ(r->labels.at("nvidia.com/mig.strategy"), "mixed");
  EXPECT_EQ(r->capacity, (ResourceList{{"nvidia.com/gpu", 0},
                                       {"nvidia.com/mig-1g.10gb", 46},
                                       {"nvidia.com/mig-3g.40gb", 1}}));
  EXPECT_EQ(r->allocatable.at("nvidia.com/mig-1g.10gb"), 45);
  EXPECT_EQ(r->allocatable.count("cpu"), 0u);
}

TEST(DecodeNode, WrongTypeNamesNode) {
  auto r =
      DecodeNode(json::parse(R"({"metadata": {"name": "n1"}, "spec": {"unschedulable": "yes"}})"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message,
              HasSubstr("node \"n1\": field spec.unschedulable: expected a boolean"));
}

TEST(DecodeService, Ports) {
  auto r = DecodeService(json::parse(R"({
    "metadata": {"name": "prometheus-k8s", "namespace": "monitoring", "labels": {"app": "prometheus"}},
    "spec": {"type": "ClusterIP", "ports": [{"name": "web", "port": 9090, "targetPort": "web"},
                                              {"port": 8080, "targetPort": 8080}]}
  })"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->Key(), "monitoring/prometheus-k8s");
  ASSERT_EQ(r->ports.size(), 2u);
  EXPECT_EQ(r->ports[0].name, "web");
  EXPECT_EQ(r->ports[0].port, 9090);
  EXPECT_EQ(r->ports[1].port, 8080);

  auto bad = DecodeService(json::parse(R"({"metadata": {"name": "s", "namespace": "n"},
                                           "spec": {"ports": [{"port": 1.5}]}})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("service \"n/s\": field spec.ports[0].port"));
}

TEST(ParseTimestamp, Forms) {
  EXPECT_EQ(*ParseTimestamp("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(*ParseTimestamp("2024-02-29T12:00:00Z"), 1709208000);
  EXPECT_EQ(*ParseTimestamp("2024-02-29T13:30:00+01:30"), 1709208000);
  EXPECT_EQ(*ParseTimestamp("2024-02-29T12:00:00.123456Z"), 1709208000);
  EXPECT_FALSE(ParseTimestamp("2024-02-29").ok());
  EXPECT_FALSE(ParseTimestamp("2024-13-01T00:00:00Z").ok());
  EXPECT_FALSE(ParseTimestamp("2024-01-01T00:00:00").ok());
  EXPECT_FALSE(ParseTimestamp("2024-01-01T00:00:00Zjunk").ok());
}

}  // namespace
}  // namespace gpuattr::kube
