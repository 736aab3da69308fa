// Compact pod records for tests of the pure stages (discovery, attribution).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuattr/kube/objects.h"

namespace gpuattr::testing {

// A Running, ready pod with one container "main" of `image` declaring `ports`.
kube::Pod MakeRunningPod(std::string ns, std::string name, std::string node, std::string image,
                         std::vector<kube::ContainerPort> ports = {});

// The same, controlled by an apps/v1 DaemonSet (named after the pod up to its last '-'), as
// exporters are deployed: in an exporter namespace such a pod may speak for its node's GPUs
// (docs/design.md#trust).
kube::Pod MakeDaemonSetPod(std::string ns, std::string name, std::string node, std::string image,
                           std::vector<kube::ContainerPort> ports = {});

// A node whose capacity advertises `gpus` nvidia.com/gpu.
kube::Node MakeGpuNode(std::string name, int64_t gpus);

}  // namespace gpuattr::testing
