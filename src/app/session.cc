#include "gpuattr/app/session.h"

namespace gpuattr::app {
namespace {

class PlaceholderSession : public ClusterSession {
 public:
  explicit PlaceholderSession(std::string cluster) : cluster_(std::move(cluster)) {}
  std::string Cluster() const override { return cluster_; }
  CycleResult RunCycle() override {
    CycleResult r;
    r.errors.push_back("Kubernetes access is not wired into this build yet");
    return r;
  }

 private:
  std::string cluster_;
};

}  // namespace

std::vector<ClusterConfig> EffectiveClusters(const Config& config) {
  if (!config.clusters.empty()) return config.clusters;
  return {ClusterConfig{}};
}

Result<SessionList> MakePlaceholderSessions(const Config& config) {
  SessionList out;
  for (const ClusterConfig& c : EffectiveClusters(config))
    out.push_back(
        std::make_unique<PlaceholderSession>(c.Label().empty() ? "current-context" : c.Label()));
  return out;
}

}  // namespace gpuattr::app
