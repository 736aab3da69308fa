#include "gpuattr/app/kube_session.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <tuple>

#include "gpuattr/scrape/cycle.h"
#include "gpuattr/util/log.h"

namespace gpuattr::app {
namespace {

// The stages' state, continuing from the state file's sections for the cluster.
StageState StagesFrom(ledger::StateFile::Sections saved, const KubeSessionOptions& options) {
  return {ledger::Ledger(options.ledger, std::move(saved.ledger)),
          {},
          rightsizing::Tracker(options.rightsizing, std::move(saved.rightsizing))};
}

void AddUnique(std::vector<std::string>& to, std::string e) {
  if (std::find(to.begin(), to.end(), e) == to.end()) to.push_back(std::move(e));
}

bool IsProxy(const kube::RequestCount& c) {
  return c.verb == "get" && (c.resource == "pods/proxy" || c.resource == "services/proxy");
}

// The request counters' rows, keyed for subtraction.
std::map<std::tuple<std::string, std::string, std::string>, uint64_t> Rows(
    const std::vector<kube::RequestCount>& counts) {
  std::map<std::tuple<std::string, std::string, std::string>, uint64_t> out;
  for (const auto& c : counts) out[{c.verb, c.resource, c.code}] = c.count;
  return out;
}

// A proxied GET that got no answer from the apiserver itself: no response at all, or a 5xx
// (which the apiserver also sends for an exporter it cannot reach, hence the /version check).
bool Unanswered(const std::string& code) { return code == "error" || code.front() == '5'; }

kube::ObjectCacheOptions CacheOptions(kube::ObjectCacheOptions o,
                                      std::shared_ptr<kube::Transport> transport) {
  // Stop() (shutdown, or the session's end) aborts the open watch streams at once.
  o.cancel_streams = [t = std::move(transport), also = std::move(o.cancel_streams)] {
    t->Cancel();
    if (also) also();
  };
  return o;
}

double WallSeconds(Clock& clock) { return UnixSeconds(clock.WallNow()); }

// CPU seconds of this thread, and of the whole process: on a busy machine wall time says little
// about a cycle's own cost (the "cycle parts" debug line has both).
double CpuSeconds(clockid_t which) {
  timespec ts{};
  clock_gettime(which, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

model::RequestCounts ToPublishCounts(const std::vector<kube::RequestCount>& counts) {
  model::RequestCounts out;
  for (const auto& c : counts) out[model::RequestKey{c.verb, c.resource, c.code}] += c.count;
  return out;
}

KubeClusterSession::KubeClusterSession(std::string cluster,
                                       std::shared_ptr<kube::Transport> transport,
                                       KubeSessionOptions options)
    : cluster_(std::move(cluster)),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : SystemClock()),
      transport_(std::move(transport)),
      client_(std::make_shared<kube::ApiClient>(transport_, options_.api)),
      fetcher_(options_.direct ? scrape::MakeDirectFetcher(options_.direct_options)
                               : scrape::MakeApiFetcher(client_)),
      cache_(
          std::make_unique<kube::ObjectCache>(client_, CacheOptions(options_.cache, transport_))),
      discovery_(cluster_, options_.discovery, clock_),
      stages_(StagesFrom(
          options_.state_file ? options_.state_file->Take(cluster_) : ledger::StateFile::Sections{},
          options_)) {}

KubeClusterSession::~KubeClusterSession() { cache_->Stop(); }

void KubeClusterSession::Cancel() {
  stop_.Stop();
  transport_->Cancel();
  fetcher_->Cancel();
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
    // Give up early only when every kind still missing has failed. With none missing (every
    // kind listed a moment before the cache says it is synced) there is nothing to give up on.
    bool any_missing = false, all_missing_failed = true;
    for (const kube::KindStatus& k : cache_->KindStatuses()) {
      if (k.synced) continue;
      any_missing = true;
      if (k.last_error.empty()) all_missing_failed = false;
    }
    if (any_missing && all_missing_failed) return false;
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

std::string KubeClusterSession::AskVersion(const std::string& why) {
  kube::GetOptions get;
  get.timeout = options_.liveness_timeout;
  get.max_attempts = 1;
  get.stop = &stop_;
  auto version = client_->Get("/version", get);
  if (version.ok() || stop_.stopped()) return {};
  return "cluster \"" + cluster_ + "\": the apiserver did not answer this cycle (" + why + "; " +
         version.error().message + ")";
}

std::string KubeClusterSession::ApiserverSilence(const std::vector<kube::RequestCount>& before) {
  const auto was = Rows(before);
  uint64_t proxied = 0, unanswered = 0;
  std::string sample;
  for (const kube::RequestCount& c : client_->RequestCounts()) {
    if (!IsProxy(c)) continue;
    auto it = was.find({c.verb, c.resource, c.code});
    const uint64_t n = c.count - (it == was.end() ? 0 : it->second);
    proxied += n;
    if (n > 0 && Unanswered(c.code)) {
      unanswered += n;
      if (sample.empty()) sample = c.code == "error" ? "no response" : "HTTP " + c.code;
    }
  }
  if (proxied == 0 || unanswered < proxied) return {};
  // The exporters are down, or the apiserver: ask it directly.
  return AskVersion("all " + std::to_string(proxied) + " proxy GETs failed (" + sample + ")");
}

// Where a cycle's time goes, in real time whatever clock drives the session (the "cycle parts"
// debug line).
struct KubeClusterSession::Timing {
  using Real = std::chrono::steady_clock;
  Real::time_point start = Real::now();
  double cpu_start = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
  double wait_seconds = 0;       // for the first LISTs, the sync checks
  double discovery_seconds = 0;  // discovery and scraping

  static double Since(Real::time_point t) {
    return std::chrono::duration<double>(Real::now() - t).count();
  }
};

model::CycleResult KubeClusterSession::RunCycle() {
  model::CycleResult result;
  if (!started_ && !stop_.stopped()) {
    cache_->Start();
    started_ = true;
  }
  Timing timing;
  if (InSync(result) && !stop_.stopped()) ReadAndStage(result, timing);
  if (!result.up && stages_.ledger.state().accounting.last_unix) {
    // GPU-hours never accrue over a failed cycle (docs/accounting.md#counters), not even after a
    // restart: the state file forgets the interval too.
    stages_.ledger.BreakInterval();
    if (options_.state_file) options_.state_file->Save(cluster_, stages_.ledger.state());
  }
  for (const kube::DraKindStatus& d : cache_->OptionalStatuses())
    if (!d.note.empty()) result.notes.push_back("cluster \"" + cluster_ + "\": " + d.note);
  result.apiserver_requests = ToPublishCounts(client_->RequestCounts());
  return result;
}

// True when every kind is listed and in sync and the apiserver answers: only then is anything
// read. The reasons why not go to result.errors.
bool KubeClusterSession::InSync(model::CycleResult& result) {
  const bool listed = WaitForFirstLists();
  result.errors = CacheErrors();
  if (!listed) return false;
  if (options_.cache.keep_watching) {  // without watches, listed once is all there is
    const double window = 2 * std::chrono::duration<double>(options_.interval).count();
    std::vector<std::string> out_of_sync = kube::KindsOutOfSync(
        cache_->SyncStatuses(), WallSeconds(client_->clock()), window, cluster_);
    if (!out_of_sync.empty()) {
      for (std::string& e : out_of_sync) AddUnique(result.errors, std::move(e));
      return false;
    }
  }
  if (stop_.stopped()) return false;
  // An informer whose latest LIST or WATCH failed may mean the apiserver is gone: then do not
  // scrape through it (its failures would also mark every exporter down).
  for (const kube::KindStatus& k : cache_->SyncStatuses()) {
    if (k.last_error.empty()) continue;
    std::string silence = AskVersion("the watch of " + k.resource + " failed: " + k.last_error);
    if (silence.empty()) break;
    AddUnique(result.errors, std::move(silence));
    return false;
  }
  return true;
}

// The cycle's objects: the latest snapshot cut to this shard's share (ShardInput), before
// discovery, so that a shard probes and scrapes only its own nodes' exporters; the whole snapshot
// stays for the read-path choice and pending pods' hints. Recut only when the snapshot changed.
CycleInput KubeClusterSession::CutInput() {
  CycleInput whole;
  whole.cluster = cluster_;
  whole.objects = cache_->Snapshot();
  if (!options_.shard.sharded()) return ShardInput(whole, options_.shard);
  if (cut_.cluster_objects != whole.objects) cut_ = ShardInput(whole, options_.shard);
  return cut_;
}

// Discovery and scraping, then (when the apiserver answered them) the stages.
void KubeClusterSession::ReadAndStage(model::CycleResult& result, Timing& timing) {
  timing.wait_seconds = Timing::Since(timing.start);
  const auto t_discovery = Timing::Real::now();
  CycleInput input = CutInput();
  const std::vector<kube::RequestCount> before = client_->RequestCounts();
  scrape::ScrapeResult found =
      scrape::ReadCycle(discovery_, *fetcher_, *input.objects, &stop_, input.cluster_objects.get());
  for (std::string& e : found.errors) AddUnique(result.errors, std::move(e));
  if (input.shard.sharded())
    found.report.shard = "shard " + std::to_string(input.shard.index) + " of " +
                         std::to_string(input.shard.total) + " owns " +
                         std::to_string(input.objects->nodes.size()) + " of " +
                         std::to_string(input.cluster_objects->nodes.size()) + " nodes";
  result.discovery = std::make_shared<const discovery::DiscoveryReport>(std::move(found.report));
  if (std::string silence = ApiserverSilence(before); !silence.empty()) {
    AddUnique(result.errors, std::move(silence));
    return;
  }
  if (stop_.stopped()) return;
  input.readings = OwnedReadings(std::move(found.readings), input.shard);
  input.now_unix = UnixSeconds(clock_.WallNow());
  input.now = clock_.Now();
  if (options_.observe_input) options_.observe_input(input);
  timing.discovery_seconds = Timing::Since(t_discovery);
  Stage(input, result, timing);
}

// The stages on one cycle's input, then the state file; the cycle is up.
void KubeClusterSession::Stage(CycleInput& input, model::CycleResult& result,
                               const Timing& timing) {
  const auto t_stages = Timing::Real::now();
  const double stages_cpu_start = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
  const size_t readings = input.readings.size();
  // The readings (18 MB at 1,000 nodes) are freed as soon as the stages that read them are done.
  result.output = std::make_shared<const model::CycleOutput>(
      RunStages(std::move(input), stages_, options_.stages));
  const double stages_seconds = Timing::Since(t_stages);
  const double stages_cpu = CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - stages_cpu_start;
  const auto t_save = Timing::Real::now();
  if (options_.state_file)
    options_.state_file->Save(cluster_, stages_.ledger.state(), &stages_.rightsizing.state());
  result.up = true;
  log::Debug("cycle parts",
             {{"cluster", cluster_},
              {"wait_seconds", timing.wait_seconds},
              {"discovery_seconds", timing.discovery_seconds},
              {"stages_seconds", stages_seconds},
              {"save_seconds", Timing::Since(t_save)},
              {"stages_cpu_seconds", stages_cpu},
              {"process_cpu_seconds", CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - timing.cpu_start},
              {"readings", readings},
              {"probed", result.discovery->probed_this_cycle}});
}

}  // namespace gpuattr::app
