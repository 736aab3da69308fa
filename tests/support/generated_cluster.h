// A generated GPU cluster for scale tests and benchmarks, served by the fake apiserver like any
// scenario: N nodes with 8 A100-80GB cards each, every other node MIG-partitioned (each card split
// into one 3g.40gb and two 2g.20gb slices, mig.strategy=mixed), one GPU job pod per device (pods
// that declare no container port, as batch jobs do), one DaemonSet dcgm-exporter pod per node
// serving a dcgm-shaped body (~60 KB per node on average, families and labels as real
// dcgm-exporter 3.x with --kubernetes writes them), one nvidia-device-plugin pod per node (no
// port), and optionally a few vLLM servers (a GPU pod declaring port "http" 8000 with a vLLM body)
// and notebooks (a GPU pod declaring port 8888 that serves nothing: its probes fail). Everything is
// generated in memory and is the same for the same spec.
#pragma once

#include <cstddef>
#include <string>

#include "support/scenario.h"

namespace gpuattr::testing {

struct GeneratedClusterSpec {
  int nodes = 10;
  int gpus_per_node = 8;
  // Device pods turned into vLLM servers (spread over the nodes, never on the same device twice).
  int inference_pods = 0;
  // Device pods that declare a port (8888) but serve no metrics.
  int notebook_pods = 0;
  std::string name = "generated";
};

// What the generator made, for tests and benchmark reports.
struct GeneratedClusterInfo {
  size_t nodes = 0;
  size_t devices = 0;        // whole cards on non-MIG nodes + MIG slices
  size_t gpu_pods = 0;       // one per device, inference and notebook pods included
  size_t portless_pods = 0;  // GPU job pods and device-plugin pods: no declared port
  size_t exporters = 0;      // dcgm-exporter pods
  size_t body_bytes = 0;     // all exporter bodies together
};

// The scenario (objects and exporter bodies) for `spec`; `info` (optional) gets the counts.
Scenario GenerateCluster(const GeneratedClusterSpec& spec, GeneratedClusterInfo* info = nullptr);

// Names used by the generator, so that tests can find what they look for.
std::string GeneratedNodeName(int node);
std::string GeneratedExporterPodName(int node);
constexpr const char* kGeneratedExporterNamespace = "gpu-operator";
constexpr const char* kGeneratedInferenceNamespace = "serving";
constexpr int kGeneratedExporterPort = 9400;
constexpr int kGeneratedInferencePort = 8000;

}  // namespace gpuattr::testing
