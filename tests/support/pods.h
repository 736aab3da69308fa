// Compact pod records for tests of the pure stages (discovery, attribution).
#pragma once

#include <string>
#include <vector>

#include "gpuattr/kube/objects.h"

namespace gpuattr::testing {

// A Running, ready pod with one container "main" of `image` declaring `ports`.
kube::Pod MakeRunningPod(std::string ns, std::string name, std::string node, std::string image,
                         std::vector<kube::ContainerPort> ports = {});

}  // namespace gpuattr::testing
