// The kube-backed cluster session: one object per cluster owning what lives across its cycles —
// the transport and ApiClient, the ObjectCache (LIST once, then WATCH), discovery (verdict cache,
// query-API choice) and the stages' state (ledger, inference tracker) — and running each cycle:
// objects (cut to the shard's share) → discovery decides and scrape reads (scrape/cycle.h) → the
// stages (stages.h) → the state file.
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
  // The cycle interval: a kind whose watch has not been connected for 2 intervals is out of sync,
  // and the cluster down (gpuattr_cluster_up 0).
  std::chrono::milliseconds interval{20000};
  // GET /version's timeout when every proxy GET of a cycle failed (is it the apiserver or the
  // exporters?).
  std::chrono::milliseconds liveness_timeout{5000};
  Clock* clock = nullptr;       // cache expiries and timestamps; SystemClock() when null
  ledger::LedgerParams ledger;  // idle runs and energy counters: the gap rule
  rightsizing::RightsizingParams rightsizing;  // window, min_observation, headroom, the gap rule
  // Shared by the sessions of one process; null keeps idle runs and energy in memory only.
  std::shared_ptr<ledger::StateFile> state_file;
  // Tests: sees each cycle's input before the stages run (the daemon keeps none of it).
  std::function<void(const CycleInput&)> observe_input;
  // Exporters and query APIs are read directly by pod IP and ClusterIP (scrape.path direct, or
  // auto in the cluster: docs/deploy.md#direct-scraping), else through the apiserver's proxies.
  bool direct = false;
  scrape::DirectOptions direct_options;
  // This process's shard (--shard/--total-shards or --pod): discovery and the stages see only
  // the shard's share of the objects (kube::ShardObjects), readings only of its nodes.
  kube::Shard shard;
};

// kube::RequestCount rows → the gpuattr_apiserver_requests_total map.
model::RequestCounts ToPublishCounts(const std::vector<kube::RequestCount>& counts);

class KubeClusterSession : public ClusterSession {
 public:
  KubeClusterSession(std::string cluster, std::shared_ptr<kube::Transport> transport,
                     KubeSessionOptions options = {});
  ~KubeClusterSession() override;
  KubeClusterSession(const KubeClusterSession&) = delete;
  KubeClusterSession& operator=(const KubeClusterSession&) = delete;

  std::string Cluster() const override { return cluster_; }
  // Starts the ObjectCache on the first call (and waits for its first sync), then runs one cycle
  // on the cache's current snapshot. The cycle is up (and its output published) only when the
  // cache is in sync (kube::KindsOutOfSync over 2 intervals) and the apiserver answered the
  // cycle's requests. One GET /version asks it when an informer's latest LIST or WATCH failed
  // (then nothing is scraped when it does not answer), and when every proxy GET failed
  // without an answer (no response, or 5xx: the apiserver, or only the exporters?). Steady state:
  // no extra request.
  model::CycleResult RunCycle() override;
  // Shutdown: stops starting new GETs, aborts those in flight and the watch streams (the
  // transport's Cancel), and joins the informers. RunCycle returns promptly.
  void Cancel() override;

  kube::ObjectCache& object_cache() { return *cache_; }

 private:
  struct Timing;  // where a cycle's time goes (kube_session.cc)

  bool WaitForFirstLists();
  std::vector<std::string> CacheErrors() const;
  bool InSync(model::CycleResult& result);
  CycleInput CutInput();
  void ReadAndStage(model::CycleResult& result, Timing& timing);
  void Stage(CycleInput& input, model::CycleResult& result, const Timing& timing);
  // Empty when the apiserver answered; else why not (the cycle is then down). ApiserverSilence
  // looks at the cycle's proxy GETs since `before`; AskVersion sends one GET /version.
  std::string ApiserverSilence(const std::vector<kube::RequestCount>& before);
  std::string AskVersion(const std::string& why);

  std::string cluster_;
  KubeSessionOptions options_;
  Clock& clock_;
  std::shared_ptr<kube::Transport> transport_;
  std::shared_ptr<kube::ApiClient> client_;
  std::unique_ptr<scrape::Fetcher> fetcher_;
  std::unique_ptr<kube::ObjectCache> cache_;
  discovery::Discovery discovery_;
  StopSignal stop_;
  bool started_ = false;
  StageState stages_;  // RunCycle's thread only
  // Sharded: the latest snapshot's cut (ShardInput, without readings), kept while the snapshot
  // (its cluster_objects) is unchanged.
  CycleInput cut_;
};

}  // namespace gpuattr::app
