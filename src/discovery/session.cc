#include "gpuattr/discovery/session.h"

#include <chrono>
#include <set>

#include "gpuattr/allocation/allocation.h"

namespace gpuattr::discovery {

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
      cache_(std::make_unique<kube::ObjectCache>(client_, options_.cache)),
      discovery_(cluster_, options_.discovery, clock_) {}

KubeClusterSession::~KubeClusterSession() { cache_->Stop(); }

void KubeClusterSession::Cancel() {
  stop_.Stop();
  cache_->Stop();
}

std::shared_ptr<const SessionCycle> KubeClusterSession::LastCycle() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_;
}

namespace {

// The scraped readings and the cached objects of one cycle, attributed (pure).
attribution::Attribution Attribute(const CycleInput& in, const attribution::AttributionParams& p) {
  attribution::AttributionInput a{in.cluster, *in.objects, {}, p};
  a.exporters.reserve(in.exporters.size());
  for (const ExporterData& e : in.exporters)
    a.exporters.push_back({e.namespace_, e.pod, e.node, e.readings});
  return attribution::Attribute(a);
}

std::vector<inference::ServerScrape> InferenceScrapes(const CycleInput& in) {
  std::vector<inference::ServerScrape> out;
  out.reserve(in.inference.size());
  for (const InferenceData& d : in.inference)
    out.push_back({d.namespace_, d.pod, d.node, d.readings});
  return out;
}

}  // namespace

// True once every kind completed its first LIST. Returns false early when every kind still
// missing has already failed (an unreachable or forbidding apiserver): the cycle then reports the
// cluster down with the error at once, rather than after sync_timeout, while the cache keeps
// retrying with backoff in the background.
bool KubeClusterSession::WaitForFirstLists() {
  const auto deadline = std::chrono::steady_clock::now() + options_.sync_timeout;
  while (!stop_.stopped() && std::chrono::steady_clock::now() < deadline) {
    if (cache_->WaitSynced(std::chrono::milliseconds(50))) return true;
    bool all_missing_failed = true;
    for (const kube::KindStatus& k : cache_->KindStatuses())
      if (!k.synced && k.last_error.empty()) all_missing_failed = false;
    if (all_missing_failed) return false;
  }
  return false;
}

app::CycleResult KubeClusterSession::RunCycle() {
  auto cycle = std::make_shared<SessionCycle>();
  if (!started_ && !stop_.stopped()) {
    cache_->Start();
    started_ = true;
  }
  const bool synced = WaitForFirstLists();
  std::set<std::string> seen;
  for (const kube::KindStatus& k : cache_->KindStatuses()) {
    if (!k.last_error.empty() && seen.insert(k.last_error).second)
      cycle->errors.push_back(k.last_error);
    if (!k.synced && k.last_error.empty())
      cycle->errors.push_back("cluster \"" + cluster_ + "\": " + k.resource +
                              " not listed yet (waiting for the first LIST)");
  }
  if (synced) {
    DiscoveryCycle d = discovery_.RunCycle(*client_, cache_->Snapshot(), &stop_);
    for (auto& e : d.errors)
      if (seen.insert(e).second) cycle->errors.push_back(std::move(e));
    cycle->report = std::move(d.report);
    cycle->scrapes = std::move(d.scrapes);
    cycle->input = std::move(d.input);
  } else {
    cycle->input.cluster = cluster_;
    cycle->input.objects = std::make_shared<const kube::ClusterObjects>();
    cycle->report.cluster = cluster_;
  }
  cycle->up = synced;
  cycle->apiserver_requests = ToPublishCounts(client_->RequestCounts());

  app::CycleResult result;
  result.up = cycle->up;
  result.errors = cycle->errors;
  result.apiserver_requests = cycle->apiserver_requests;
  if (synced) {
    result.discovery = std::make_shared<const DiscoveryReport>(cycle->report);
    auto attributed = std::make_shared<const attribution::Attribution>(
        Attribute(cycle->input, options_.attribution));
    const double now_unix =
        std::chrono::duration<double>(clock_.WallNow().time_since_epoch()).count();
    result.allocation = std::make_shared<const allocation::Allocation>(
        allocation::Allocate({cluster_, *cycle->input.objects, *attributed, now_unix}));
    result.inference = std::make_shared<const inference::InferenceView>(inference_.Update(
        cluster_, InferenceScrapes(cycle->input), clock_.Now(), attributed.get()));
    result.attribution = std::move(attributed);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_ = std::move(cycle);
  }
  return result;
}

}  // namespace gpuattr::discovery
