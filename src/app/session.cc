#include "gpuattr/app/session.h"

namespace gpuattr::app {

std::vector<ClusterConfig> EffectiveClusters(const Config& config) {
  if (!config.clusters.empty()) return config.clusters;
  return {ClusterConfig{}};
}

}  // namespace gpuattr::app
