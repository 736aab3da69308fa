// What a GPU node's labels say its `nvidia.com/gpu` units are (docs/design.md#node-shapes): whole
// GPUs, MIG slices of one profile (mig.strategy=single, GKE partitions), time-slicing / MPS / GKE
// time-sharing replicas, or HAMi vGPU slots. One pure function, so that attribution, allocation,
// accounting and rightsizing read a node the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/kube/objects.h"

namespace gpuattr::attribution {

enum class ShapeKind {
  kWhole,           // no sharing label: a unit is a whole GPU
  kMigMixed,        // nvidia.com/mig.strategy=mixed: slices are nvidia.com/mig-<profile>
  kMigSingle,       // nvidia.com/mig.strategy=single: nvidia.com/gpu units are slices
  kTimeSlicing,     // nvidia.com/gpu.replicas = r > 1 (sharing-strategy time-slicing or absent)
  kMps,             // nvidia.com/gpu.sharing-strategy=mps with replicas
  kGkeTimeSharing,  // cloud.google.com/gke-gpu-sharing-strategy=time-sharing
  kGkeMps,          // cloud.google.com/gke-gpu-sharing-strategy=mps
  kGkePartition,    // cloud.google.com/gke-gpu-partition-size=<profile>: units are slices
  kHami,            // HAMi's device plugin registered the node's cards (vGPU slots)
  kUnrecognised,    // sharing labels gpuattr does not understand, or that contradict each other
};
// "whole", "mig-mixed", "mig-single", "time-slicing", "mps", "gke-time-sharing", "gke-mps",
// "gke-partition", "hami", "unrecognised".
std::string_view ShapeKindName(ShapeKind kind);

struct NodeShape {
  ShapeKind kind = ShapeKind::kWhole;
  // Units of nvidia.com/gpu per physical device (time-slicing, MPS, GKE sharing, HAMi slots); 1
  // when units are devices. Where labels disagree, the largest: never more physical GPUs.
  int64_t replicas = 1;
  // mig-single / gke-partition: every nvidia.com/gpu unit is a slice of this profile ("1g.10gb");
  // empty when no label names it (the slices' GPU_I_PROFILE then).
  std::string slice_profile;
  // The card model when no exporter names it: cloud.google.com/gke-accelerator.
  std::string model_hint;
  // HAMi: the cards its device plugin registered (0 otherwise).
  int64_t hami_cards = 0;
  // Pods sharing a device share it through MPS (nvidia or GKE), not by time-slicing.
  bool mps_sharing = false;
  // "key=value" of each sharing label not understood or contradicting another, sorted.
  std::vector<std::string> unrecognised;

  bool UnitsAreSlices() const {
    return kind == ShapeKind::kMigSingle || kind == ShapeKind::kGkePartition;
  }
};

// The node's shape from its labels and HAMi's registration annotation. Never throws; malformed
// values land in `unrecognised`.
NodeShape NodeShapeOf(const kube::Node& node);

// "unrecognised sharing labels: a=b, c=d" for the status page; empty when there are none.
std::string UnrecognisedText(const NodeShape& shape);

// The `<profile>` of a GPU Operator product label "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"; empty when
// it has no such suffix.
std::string_view MigProfileOfProduct(std::string_view product);

// A MIG profile name as Kubernetes resources spell it: "<g>g.<n>gb" (with optional "+me" or
// similar suffixes after a '+'), g in 1..8.
bool LooksLikeMigProfile(std::string_view profile);

// The card model's compute slice count G (docs/design.md#node-shapes): 7 on A100, H100, H200,
// B200 (and H800, A800, GH200, GB200), 4 on A30; 0 when the model is not known. GKE's accelerator
// names ("nvidia-tesla-a100") are read the same.
int ModelSliceCount(std::string_view model);

}  // namespace gpuattr::attribution
