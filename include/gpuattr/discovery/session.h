// The kube-backed cluster session: one object per cluster owning its transport, ApiClient,
// ObjectCache (LIST once, then WATCH), discovery state and scraper. Plugs into the app's cycle
// loop as an app::ClusterSession; the full output of the latest cycle (report, attribution input)
// is available from LastCycle().
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpuattr/app/session.h"
#include "gpuattr/attribution/attribution.h"
#include "gpuattr/discovery/discovery.h"
#include "gpuattr/inference/inference.h"
#include "gpuattr/kube/api_client.h"
#include "gpuattr/kube/object_cache.h"
#include "gpuattr/kube/transport.h"
#include "gpuattr/util/clock.h"

namespace gpuattr::discovery {

struct KubeSessionOptions {
  DiscoveryOptions discovery;
  attribution::AttributionParams attribution;  // idle thresholds
  kube::ApiClientOptions api;                  // api.clock also drives retry waits
  kube::ObjectCacheOptions cache;              // which kinds to watch
  // How long the first cycle waits (real time) for the first LIST of every kind.
  std::chrono::milliseconds sync_timeout{30000};
  Clock* clock = nullptr;  // cache expiries and timestamps; SystemClock() when null
};

// Everything one cycle produced, immutable once published.
struct SessionCycle {
  bool up = false;
  std::vector<std::string> errors;
  publish::RequestCounts apiserver_requests;
  DiscoveryReport report;
  std::vector<ScrapeResult> scrapes;  // diagnostics only: their readings moved into `input`
  CycleInput input;
};

// kube::RequestCount rows → the app's gpuattr_apiserver_requests_total map.
publish::RequestCounts ToPublishCounts(const std::vector<kube::RequestCount>& counts);

class KubeClusterSession : public app::ClusterSession {
 public:
  KubeClusterSession(std::string cluster, std::shared_ptr<kube::Transport> transport,
                     KubeSessionOptions options = {});
  ~KubeClusterSession() override;
  KubeClusterSession(const KubeClusterSession&) = delete;
  KubeClusterSession& operator=(const KubeClusterSession&) = delete;

  std::string Cluster() const override { return cluster_; }
  // Starts the ObjectCache on the first call (and waits for its first sync), then runs one
  // discovery-and-scrape cycle on the cache's current snapshot.
  app::CycleResult RunCycle() override;
  // Stops starting new GETs and ends the watches; in-flight GETs end within their timeouts.
  void Cancel() override;

  std::shared_ptr<const SessionCycle> LastCycle() const;
  kube::ApiClient& client() { return *client_; }
  kube::ObjectCache& object_cache() { return *cache_; }
  const Discovery& discovery() const { return discovery_; }

 private:
  bool WaitForFirstLists();

  std::string cluster_;
  KubeSessionOptions options_;
  Clock& clock_;
  std::shared_ptr<kube::ApiClient> client_;
  std::unique_ptr<kube::ObjectCache> cache_;
  Discovery discovery_;
  StopSignal stop_;
  bool started_ = false;
  inference::InferenceTracker inference_;  // previous readings for rates; RunCycle only
  mutable std::mutex mu_;
  std::shared_ptr<const SessionCycle> last_;
};

}  // namespace gpuattr::discovery
