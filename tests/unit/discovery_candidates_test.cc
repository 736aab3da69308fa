#include "gpuattr/discovery/candidates.h"

#include <gtest/gtest.h>

#include "support/pods.h"

namespace gpuattr::discovery {
namespace {

kube::Pod MakePod(std::string ns, std::string name, std::string node, std::string image,
                  std::vector<kube::ContainerPort> ports = {}) {
  return gpuattr::testing::MakeRunningPod(std::move(ns), std::move(name), std::move(node),
                                          std::move(image), std::move(ports));
}

void Add(kube::ClusterObjects& o, kube::Pod p) { o.pods[p.Key()] = std::move(p); }

std::vector<std::string> Keys(const std::vector<Candidate>& cs) {
  std::vector<std::string> out;
  for (const auto& c : cs) out.push_back(c.Key());
  return out;
}

TEST(NameWithoutNode, RemovesTheNodeName) {
  EXPECT_EQ(NameWithoutNode("kube-apiserver-gpu-node-1", "gpu-node-1"), "kube-apiserver-");
  EXPECT_EQ(NameWithoutNode("etcd-gpu-node-1", "gpu-node-1"), "etcd-");
  EXPECT_EQ(NameWithoutNode("dcgm-exporter-x7", "gpu-node-1"), "dcgm-exporter-x7");
  EXPECT_EQ(NameWithoutNode("gpu-burn", ""), "gpu-burn");
}

TEST(ExporterCandidates, StaticPodsOnAGpuNamedNodeAreNotCandidates) {
  kube::ClusterObjects o;
  Add(o, MakePod("kube-system", "kube-apiserver-gpu-node-1", "gpu-node-1",
                 "registry.k8s.io/kube-apiserver:v1.30.4", {{"https", 6443}}));
  Add(o, MakePod("kube-system", "etcd-gpu-node-1", "gpu-node-1", "registry.k8s.io/etcd:3.5",
                 {{"metrics", 2381}}));
  EXPECT_TRUE(ExporterCandidates(o).empty());
}

TEST(ExporterCandidates, FoundByImageLabelAndName) {
  kube::ClusterObjects o;
  Add(o, MakePod("a", "exporter-by-image", "n1", "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.7",
                 {{"metrics", 9400}}));
  kube::Pod by_label = MakePod("a", "telemetry-x", "n1", "example.com/telemetry:1", {{"", 9400}});
  by_label.labels["app.kubernetes.io/name"] = "DCGM-Exporter";
  Add(o, by_label);
  Add(o, MakePod("a", "my-gpu-telemetry", "n1", "example.com/telemetry:1", {{"", 9500}}));
  Add(o, MakePod("a", "web", "n1", "nginx:1.27", {{"http", 80}}));
  auto cs = ExporterCandidates(o);
  EXPECT_EQ(Keys(cs), (std::vector<std::string>{"a/exporter-by-image:9400",
                                                "a/my-gpu-telemetry:9500", "a/telemetry-x:9400"}));
  EXPECT_NE(cs[0].why.find("image"), std::string::npos);
  EXPECT_NE(cs[1].why.find("name"), std::string::npos);
  EXPECT_NE(cs[2].why.find("label"), std::string::npos);
}

TEST(ExporterCandidates, OnlyRunningPodsWithAPort) {
  kube::ClusterObjects o;
  kube::Pod pending = MakePod("a", "dcgm-pending", "n1", "dcgm", {{"metrics", 9400}});
  pending.phase = "Pending";
  Add(o, pending);
  Add(o, MakePod("a", "dcgm-noport", "n1", "dcgm"));
  EXPECT_TRUE(ExporterCandidates(o).empty());
}

TEST(ExporterPort, AnnotationThenNamedMetricsThenFirst) {
  kube::Pod p = MakePod("a", "dcgm", "n1", "x", {{"web", 8080}, {"metrics", 9400}});
  p.annotations["prometheus.io/port"] = "9401";
  EXPECT_EQ(ExporterPort(p)->port, 9401);
  EXPECT_EQ(ExporterPort(p)->source, "annotation");
  p.annotations["prometheus.io/port"] = "not-a-port";
  EXPECT_EQ(ExporterPort(p)->port, 9400);
  EXPECT_EQ(ExporterPort(p)->source, "named metrics");
  p.containers[0].ports = {{"web", 8080}, {"grpc", 9000}};
  EXPECT_EQ(ExporterPort(p)->port, 8080);
  EXPECT_EQ(ExporterPort(p)->source, "first");
  p.containers[0].ports.clear();
  p.annotations.clear();
  EXPECT_FALSE(ExporterPort(p).has_value());
}

TEST(InferencePort, AnnotationMetricsHttp8000First) {
  kube::Pod p = MakePod("a", "vllm", "n1", "vllm/vllm-openai", {{"grpc", 9000}, {"", 8000}});
  EXPECT_EQ(InferencePort(p)->port, 8000);
  EXPECT_EQ(InferencePort(p)->source, "8000");
  p.containers[0].ports.push_back({"http", 8080});
  EXPECT_EQ(InferencePort(p)->port, 8080);
  EXPECT_EQ(InferencePort(p)->source, "named http");
  p.containers[0].ports.push_back({"metrics", 9090});
  EXPECT_EQ(InferencePort(p)->port, 9090);
  p.annotations["prometheus.io/port"] = "7000";
  EXPECT_EQ(InferencePort(p)->port, 7000);
  EXPECT_EQ(InferencePort(p)->source, "annotation");
  kube::Pod first = MakePod("a", "sglang", "n1", "x", {{"grpc", 30000}});
  EXPECT_EQ(InferencePort(first)->port, 30000);
  EXPECT_EQ(InferencePort(first)->source, "first");
}

// docs/design.md#candidates: no declared port and no annotation → never probed, no guessed 8000.
TEST(InferencePort, NoDeclaredPortAndNoAnnotationIsNoPort) {
  kube::Pod none = MakePod("a", "sglang", "n1", "x");
  EXPECT_FALSE(InferencePort(none).has_value());
  none.annotations["prometheus.io/port"] = "not-a-port";
  EXPECT_FALSE(InferencePort(none).has_value());
  none.annotations["prometheus.io/port"] = "8000";
  ASSERT_TRUE(InferencePort(none).has_value());
  EXPECT_EQ(InferencePort(none)->port, 8000);
  EXPECT_EQ(InferencePort(none)->source, "annotation");
}

TEST(ScanCandidates, PortlessGpuPodsAreCountedOnceAndNeverCandidates) {
  kube::ClusterObjects o;
  kube::Pod job = MakePod("ml", "train-1", "n1", "registry.example/trainer:1");
  job.containers[0].limits["nvidia.com/gpu"] = 1;
  Add(o, job);
  // Holds a GPU and its image matches an exporter keyword: counted once.
  kube::Pod both = MakePod("ml", "train-2", "n1", "nvcr.io/nvidia/pytorch:24.01-py3");
  both.containers[0].limits["nvidia.com/gpu"] = 1;
  Add(o, both);
  Add(o,
      MakePod("kube-system", "nvidia-device-plugin-x", "n1", "nvcr.io/nvidia/k8s-device-plugin"));
  kube::Pod annotated = MakePod("ml", "vllm-0", "n1", "vllm/vllm-openai:0.6");
  annotated.annotations["prometheus.io/port"] = "8000";
  Add(o, annotated);
  kube::Pod served = MakePod("ml", "serve-0", "n1", "registry.example/server:1", {{"http", 8080}});
  served.containers[0].limits["nvidia.com/gpu"] = 1;
  Add(o, served);
  kube::Pod not_ready = MakePod("ml", "train-3", "n1", "registry.example/trainer:1");
  not_ready.containers[0].limits["nvidia.com/gpu"] = 1;
  not_ready.all_containers_ready = false;  // not an inference candidate at all yet
  Add(o, not_ready);

  CandidateScan scan = ScanCandidates(o);
  EXPECT_EQ(scan.no_port, 3u);  // train-1, train-2, nvidia-device-plugin-x
  EXPECT_TRUE(scan.exporters.empty());
  EXPECT_EQ(Keys(scan.inference), (std::vector<std::string>{"ml/serve-0:8080", "ml/vllm-0:8000"}));
  EXPECT_EQ(Keys(InferenceCandidates(o)), Keys(scan.inference));
}

TEST(InferenceCandidates, ReadyGpuHoldersAndKeywordPods) {
  kube::ClusterObjects o;
  kube::Pod gpu = MakePod("ml", "llama", "n1", "example.com/server:1", {{"http", 8080}});
  gpu.containers[0].limits["nvidia.com/gpu"] = 1;
  Add(o, gpu);
  Add(o, MakePod("ml", "kserve-predictor-abc", "n1", "example.com/model:1", {{"", 8080}}));
  kube::Pod not_ready = MakePod("ml", "vllm-starting", "n1", "vllm/vllm-openai:0.6");
  not_ready.all_containers_ready = false;
  Add(o, not_ready);
  Add(o, MakePod("ml", "web", "n1", "nginx"));
  auto cs = InferenceCandidates(o);
  EXPECT_EQ(Keys(cs), (std::vector<std::string>{"ml/kserve-predictor-abc:8080", "ml/llama:8080"}));
  EXPECT_EQ(cs[1].role, Role::kInference);
}

TEST(DetectGpuPresence, NodesPodsOrExporterLookingPods) {
  kube::ClusterObjects o;
  Add(o, MakePod("kube-system", "kube-apiserver-gpu-node-1", "gpu-node-1", "registry.k8s.io/x"));
  EXPECT_FALSE(DetectGpuPresence(o).present);
  EXPECT_NE(DetectGpuPresence(o).reason.find("1 pods checked"), std::string::npos);

  kube::ClusterObjects with_node = o;
  kube::Node n;
  n.name = "gpu-node-1";
  n.capacity["nvidia.com/gpu"] = 0;  // advertised, even at 0
  with_node.nodes[n.name] = n;
  EXPECT_TRUE(DetectGpuPresence(with_node).present);

  kube::ClusterObjects with_request = o;
  kube::Pod job = MakePod("ml", "train", "n1", "python:3");
  job.containers[0].requests["nvidia.com/mig-1g.10gb"] = 1;
  Add(with_request, job);
  EXPECT_TRUE(DetectGpuPresence(with_request).present);

  kube::ClusterObjects with_exporter = o;
  Add(with_exporter, MakePod("m", "dcgm-exporter-1", "n1", "x"));
  EXPECT_TRUE(DetectGpuPresence(with_exporter).present);
}

TEST(MergeCandidates, ExporterRoleAndPinWin) {
  kube::Pod p = MakePod("a", "both", "n1", "x", {{"metrics", 9400}});
  Candidate inf;
  inf.namespace_ = "a";
  inf.pod = "both";
  inf.port = 9400;
  inf.role = Role::kInference;
  inf.why = "holds a GPU";
  Candidate exp = inf;
  exp.role = Role::kExporter;
  exp.why = "name";
  Candidate pin = inf;
  pin.role = Role::kExporter;
  pin.pinned = true;
  pin.port_source = "pin";
  pin.why = "pin a/b:9400";
  auto merged = MergeCandidates(MergeCandidates({inf}, {exp}), {pin});
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].role, Role::kExporter);
  EXPECT_TRUE(merged[0].pinned);
  EXPECT_EQ(merged[0].port_source, "pin");
  EXPECT_NE(merged[0].why.find("holds a GPU"), std::string::npos);
  EXPECT_NE(merged[0].why.find("pin"), std::string::npos);
}

}  // namespace
}  // namespace gpuattr::discovery
