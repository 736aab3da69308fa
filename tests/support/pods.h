// Compact pod records for tests of the pure stages (discovery, attribution).
#pragma once

#include <string>
#include <vector>

#include "gpuattr/kube/objects.h"

namespace gpuattr::testing {

// A Running, ready pod with one container "main" of `image` declaring `ports`.
kube::Pod MakeRunningPod(std::string ns, std::string name, std::string node, std::string image,
                         std::vector<kube::ContainerPort> ports = {});

// The same, owned by a DaemonSet (named after the pod up to its last '-'), as exporters are
// deployed: only such a pod (or a pinned one) may speak for its node's GPUs (docs/design.md#trust).
kube::Pod MakeDaemonSetPod(std::string ns, std::string name, std::string node, std::string image,
                           std::vector<kube::ContainerPort> ports = {});

}  // namespace gpuattr::testing
