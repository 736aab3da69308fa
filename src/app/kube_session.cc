#include "gpuattr/app/kube_session.h"

#include <algorithm>
#include <chrono>

#include "gpuattr/util/log.h"

namespace gpuattr::app {
namespace {

void AddUnique(std::vector<std::string>& to, std::string e) {
  if (std::find(to.begin(), to.end(), e) == to.end()) to.push_back(std::move(e));
}

}  // namespace

publish::RequestCounts ToPublishCounts(const std::vector<kube::RequestCount>& counts) {
  publish::RequestCounts out;
  for (const auto& c : counts) out[publish::RequestKey{c.verb, c.resource, c.code}] += c.count;
  return out;
}

KubeClusterSession::KubeClusterSession(std::string cluster,
                                       std::shared_ptr<kube::Transport> transport,
                                       KubeSessionOptions options)
    : cluster_(std::move(cluster)),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : SystemClock()),
      client_(std::make_shared<kube::ApiClient>(std::move(transport), options_.api)),
      fetcher_(scrape::MakeApiFetcher(client_)),
      cache_(std::make_unique<kube::ObjectCache>(client_, options_.cache)),
      discovery_(cluster_, options_.discovery, clock_),
      stages_{
          ledger::Ledger(options_.ledger, options_.state_file ? options_.state_file->Load(cluster_)
                                                              : ledger::LedgerState{}),
          {}} {}

KubeClusterSession::~KubeClusterSession() { cache_->Stop(); }

void KubeClusterSession::Cancel() {
  stop_.Stop();
  cache_->Stop();
}

// True once every kind completed its first LIST. Returns false early when every kind still
// missing has already failed (an unreachable or forbidding apiserver): the cycle then reports the
// cluster down with the error at once, rather than after sync_timeout, while the cache keeps
// retrying with backoff in the background.
// The optional DRA kinds are waited for only until they know where they stand (absent,
// forbidden, listed or failing), so that the first cycle already sees DRA holders.
bool KubeClusterSession::WaitForFirstLists() {
  const auto deadline = std::chrono::steady_clock::now() + options_.sync_timeout;
  while (!stop_.stopped() && std::chrono::steady_clock::now() < deadline) {
    if (cache_->WaitSynced(std::chrono::milliseconds(50))) {
      if (cache_->DraSettled()) return true;
      continue;
    }
    bool all_missing_failed = true;
    for (const kube::KindStatus& k : cache_->KindStatuses())
      if (!k.synced && k.last_error.empty()) all_missing_failed = false;
    if (all_missing_failed) return false;
  }
  return !stop_.stopped() && cache_->synced();  // DRA still unsettled: do not wait for it longer
}

// Each kind's last error once, and the kinds still waiting for their first LIST.
std::vector<std::string> KubeClusterSession::CacheErrors() const {
  std::vector<std::string> errors;
  for (const kube::KindStatus& k : cache_->KindStatuses()) {
    if (!k.last_error.empty()) AddUnique(errors, k.last_error);
    if (!k.synced && k.last_error.empty())
      errors.push_back("cluster \"" + cluster_ + "\": " + k.resource +
                       " not listed yet (waiting for the first LIST)");
  }
  return errors;
}

publish::CycleResult KubeClusterSession::RunCycle() {
  publish::CycleResult result;
  if (!started_ && !stop_.stopped()) {
    cache_->Start();
    started_ = true;
  }
  // Where a cycle's time goes, in real time whatever clock drives the session (a debug line).
  using Real = std::chrono::steady_clock;
  auto seconds_since = [](Real::time_point t) {
    return std::chrono::duration<double>(Real::now() - t).count();
  };
  const auto t_start = Real::now();
  result.up = WaitForFirstLists();
  result.errors = CacheErrors();
  if (result.up) {
    const double wait_seconds = seconds_since(t_start);
    const auto t_discovery = Real::now();
    CycleInput input;
    input.cluster = cluster_;
    input.objects = cache_->Snapshot();
    const kube::Shard& shard = options_.shard;
    if (shard.sharded()) {
      // Discovery and the stages see only this shard's share; the whole snapshot stays for the
      // GPU-node count of the read-path choice and for pending pods' hints.
      if (shard_of_ != input.objects) {
        shard_view_ =
            std::make_shared<const kube::ClusterObjects>(kube::ShardObjects(*input.objects, shard));
        shard_of_ = input.objects;
      }
      input.shard = shard;
      input.cluster_objects = std::move(input.objects);
      input.objects = shard_view_;
    }
    discovery::DiscoveryResult found =
        discovery_.RunCycle(*fetcher_, *input.objects, &stop_, input.cluster_objects.get());
    for (std::string& e : found.errors) AddUnique(result.errors, std::move(e));
    if (shard.sharded())
      found.report.shard = "shard " + std::to_string(shard.index) + " of " +
                           std::to_string(shard.total) + " owns " +
                           std::to_string(input.objects->nodes.size()) + " of " +
                           std::to_string(input.cluster_objects->nodes.size()) + " nodes";
    result.discovery = std::make_shared<const discovery::DiscoveryReport>(std::move(found.report));
    input.readings = OwnedReadings(std::move(found.readings), shard);
    input.now_unix = UnixSeconds(clock_.WallNow());
    input.now = clock_.Now();
    if (options_.observe_input) options_.observe_input(input);
    const double discovery_seconds = seconds_since(t_discovery);
    const auto t_stages = Real::now();
    result.output =
        std::make_shared<const publish::CycleOutput>(RunStages(input, stages_, options_.stages));
    const double stages_seconds = seconds_since(t_stages);
    const auto t_save = Real::now();
    if (options_.state_file) options_.state_file->Save(cluster_, stages_.ledger.state());
    log::Debug("cycle parts", {{"cluster", cluster_},
                               {"wait_seconds", wait_seconds},
                               {"discovery_seconds", discovery_seconds},
                               {"stages_seconds", stages_seconds},
                               {"save_seconds", seconds_since(t_save)},
                               {"readings", input.readings.size()},
                               {"probed", result.discovery->probed_this_cycle}});
  }
  for (const kube::DraKindStatus& d : cache_->DraStatuses())
    if (!d.note.empty()) result.notes.push_back("cluster \"" + cluster_ + "\": " + d.note);
  result.apiserver_requests = ToPublishCounts(client_->RequestCounts());
  return result;
}

}  // namespace gpuattr::app
