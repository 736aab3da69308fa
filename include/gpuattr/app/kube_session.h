// The kube-backed cluster session: one object per cluster owning what lives across its cycles —
// the transport and ApiClient, the ObjectCache (LIST once, then WATCH), discovery (verdict cache,
// query-API choice) and the stages' state (ledger, inference tracker) — and running each cycle:
// objects → discovery and fetching → the stages (stages.h) → the state file.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpuattr/app/session.h"
#include "gpuattr/app/stages.h"
#include "gpuattr/discovery/discovery.h"
#include "gpuattr/kube/api_client.h"
#include "gpuattr/kube/object_cache.h"
#include "gpuattr/kube/shard.h"
#include "gpuattr/kube/transport.h"
#include "gpuattr/ledger/state_file.h"
#include "gpuattr/scrape/fetch.h"
#include "gpuattr/util/clock.h"

namespace gpuattr::app {

struct KubeSessionOptions {
  discovery::DiscoveryOptions discovery;
  StageParams stages;
  kube::ApiClientOptions api;      // api.clock also drives retry waits
  kube::ObjectCacheOptions cache;  // which kinds to watch
  // How long the first cycle waits (real time) for the first LIST of every kind.
  std::chrono::milliseconds sync_timeout{30000};
  Clock* clock = nullptr;       // cache expiries and timestamps; SystemClock() when null
  ledger::LedgerParams ledger;  // idle runs and energy counters: the gap rule
  // Shared by the sessions of one process; null keeps idle runs and energy in memory only.
  std::shared_ptr<ledger::StateFile> state_file;
  // Tests: sees each cycle's input before the stages run (the daemon keeps none of it).
  std::function<void(const CycleInput&)> observe_input;
  // This process's shard (--shard/--total-shards or --pod): discovery and the stages see only
  // the shard's share of the objects (kube::ShardObjects), readings only of its nodes.
  kube::Shard shard;
};

// kube::RequestCount rows → the gpuattr_apiserver_requests_total map.
publish::RequestCounts ToPublishCounts(const std::vector<kube::RequestCount>& counts);

class KubeClusterSession : public ClusterSession {
 public:
  KubeClusterSession(std::string cluster, std::shared_ptr<kube::Transport> transport,
                     KubeSessionOptions options = {});
  ~KubeClusterSession() override;
  KubeClusterSession(const KubeClusterSession&) = delete;
  KubeClusterSession& operator=(const KubeClusterSession&) = delete;

  std::string Cluster() const override { return cluster_; }
  // Starts the ObjectCache on the first call (and waits for its first sync), then runs one cycle
  // on the cache's current snapshot.
  publish::CycleResult RunCycle() override;
  // Stops starting new GETs and ends the watches; in-flight GETs end within their timeouts.
  void Cancel() override;

  kube::ObjectCache& object_cache() { return *cache_; }

 private:
  bool WaitForFirstLists();
  std::vector<std::string> CacheErrors() const;

  std::string cluster_;
  KubeSessionOptions options_;
  Clock& clock_;
  std::shared_ptr<kube::ApiClient> client_;
  std::unique_ptr<scrape::Fetcher> fetcher_;
  std::unique_ptr<kube::ObjectCache> cache_;
  discovery::Discovery discovery_;
  StopSignal stop_;
  bool started_ = false;
  StageState stages_;  // RunCycle's thread only
  // The shard's share of the latest snapshot, recut only when the snapshot changed.
  std::shared_ptr<const kube::ClusterObjects> shard_of_;
  std::shared_ptr<const kube::ClusterObjects> shard_view_;
};

}  // namespace gpuattr::app
