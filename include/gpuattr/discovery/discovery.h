// One cluster's discovery, cycle by cycle: it decides what to read, and learns from what was
// read (docs/design.md#architecture: discovery decides, scrape reads).
//   candidates (keywords, GPU holders, pins) and their trust → due probes (the cache decides;
//   inference probes within the per-cycle budget) and known targets → (scrape/read.h: one
//   bounded pool of pod-proxy GETs, probes 5 s, scrapes 15 s) → verdicts recorded → the
//   query-API fallback when no exporter pod answered → the report for the page and the
//   diagnostics families.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpuattr/discovery/cache.h"
#include "gpuattr/discovery/pins.h"
#include "gpuattr/discovery/query_api.h"
#include "gpuattr/discovery/report.h"
#include "gpuattr/kube/objects.h"
#include "gpuattr/sources/limits.h"
#include "gpuattr/sources/readings.h"
#include "gpuattr/trust/rules.h"
#include "gpuattr/util/clock.h"

namespace gpuattr::discovery {

struct ScrapeOptions {
  size_t concurrency = 16;
  std::chrono::milliseconds timeout{15000};
  // Per body (docs/design.md#limits): the fetch stops at limits.body_bytes, the readers at the
  // rest.
  sources::BodyLimits limits;
};

struct DiscoveryOptions {
  Pins pins;
  CacheTtls ttls;
  std::chrono::milliseconds probe_timeout{5000};
  // Probe budget: at most this many inference-candidate probes per cycle
  // (docs/design.md#caching-and-the-probe-budget). Exporter candidates and pins are always probed
  // when due; the inference probes that do not fit wait for a later cycle (counted as outcome
  // "waiting"), so that a large cluster's first cycle reads its exporters without waiting on
  // thousands of GPU pods. 0: no inference probes at all.
  size_t inference_probes_per_cycle = 50;
  ScrapeOptions scrape;  // concurrency, per-target timeout, body limits (probes use the same pool)
  // Pods trusted as exporters beyond pins (discovery.trust.exporters), and the namespaces whose
  // DaemonSets' pods are (discovery.trust.exporter_namespaces). The query API's series are held
  // to the same rule (their scrape targets).
  std::vector<trust::ExporterRule> trust_rules;
  std::vector<std::string> exporter_namespaces = trust::DefaultExporterNamespaces();
  QueryApiOptions query_api;  // the fallback when no exporter pod answers (docs/fallback.md)
};

// One GET of an exporter pod's /metrics through the pod proxy that discovery decided on: the
// probe of a due candidate, or the scrape of a known target.
struct PodRead {
  Candidate candidate;
  bool probe = false;  // judged first (JudgeProbe); its body is read only when accepted
  sources::BodyKind kind = sources::BodyKind::kUnrecognised;  // a scrape: its cached verdict's
  std::chrono::milliseconds timeout{15000};                   // probes 5 s, scrapes 15 s
  size_t max_body_bytes = 16u << 20;                          // scrape.limits.body_bytes
};

// What one PodRead found, as discovery needs it back (the body and its readings stay with the
// reader, scrape/read.h).
struct PodReadOutcome {
  bool done = false;  // false: cancelled (shutdown) before it started
  FetchFacts fetch;
  ProbeVerdict verdict;  // a probe's
  // The kind the body was read as: a scrape's cached one, or the probe's verdict's.
  sources::BodyKind kind = sources::BodyKind::kUnrecognised;
  bool read = false;  // read as a target's body: a scrape, or an accepted probe
  bool up = false;    // fetched and read into readings
  // Not read: the cycle's body bytes reached scrape.limits.total_bytes. Its status row says so;
  // it is read first next cycle.
  bool deferred = false;
  ExporterStatus status;  // when read: its row of the gpuattr_exporter_* families
};

// The end of a cycle's decisions.
struct DiscoveryFindings {
  DiscoveryReport report;
  std::vector<std::string> errors;  // e.g. a 403 on pods/proxy, naming the missing permission
  // Nodes whose pinned exporter pod answered while a preferred query API was read: that API's
  // readings for them are dropped (the pod is fresher).
  std::set<std::string> pinned_nodes;
};

// Pure: the status-page text for a cluster where no exporter was found.
std::string NothingFoundMessage(size_t pods_listed, size_t candidates_probed, bool gpu_present,
                                const std::string& gpu_presence);

// One cluster's discovery. It makes no request: each cycle is a few steps, and between them the
// caller reads what the previous step decided (scrape::ReadCycle runs them in this order):
//   1. Begin: candidates (keywords, GPU holders, pins), their trust, the read path; on a large
//      cluster (PreferQueryApi) the preferred query API's read, made first.
//   2. PlanPodReads: what that query API answered goes into its cache; then the cycle's pod-proxy
//      GETs.
//   3. RecordPodReads: verdicts and refreshes into the cache; the fallback query API's read when
//      no GPU exporter pod answered.
//   4. Finish: the fallback's answer into its cache, and the cycle's report.
// Not thread-safe: one cycle at a time, steps in order.
class Discovery {
 public:
  Discovery(std::string cluster, DiscoveryOptions options, Clock& clock);

  // Starts a cycle on `objects` (a snapshot from the ObjectCache, or one shard's share of it,
  // kube/shard.h; both must outlive the cycle). `whole`, when `objects` is a shard's share, is the
  // whole snapshot: the read-path choice counts the cluster's GPU nodes, not the shard's.
  std::optional<QueryApiRead> Begin(const kube::ClusterObjects& objects,
                                    const kube::ClusterObjects* whole = nullptr);
  // `preferred`: what the read Begin returned found (null when it returned none). The pod reads:
  // due probes (the cache decides; inference probes within the per-cycle budget) and every
  // accepted target not probed now, by key; when the preferred query API answered, none of the
  // unpinned GPU exporters. A target probed in this cycle is not fetched twice: the probe's body
  // is its scrape.
  std::vector<PodRead> PlanPodReads(const QueryApiReadOutcome* preferred);
  // `outcomes[i]` is what `reads[i]` found. Returns the fallback query API's read when no
  // dcgm/process exporter pod answered (on a GPU cluster, or with a pinned service).
  std::optional<QueryApiRead> RecordPodReads(const std::vector<PodRead>& reads,
                                             const std::vector<PodReadOutcome>& outcomes);
  // `fallback`: what the read RecordPodReads returned found (null when it returned none).
  DiscoveryFindings Finish(const QueryApiReadOutcome* fallback);

  const DiscoveryCache& cache() const { return cache_; }
  const DiscoveryOptions& options() const { return options_; }

 private:
  // What the running cycle decided so far, between its steps.
  struct Cycle {
    const kube::ClusterObjects* objects = nullptr;
    std::chrono::steady_clock::time_point now;
    double now_unix = 0;
    GpuPresence presence;
    PinnedCandidates pinned;
    std::vector<Candidate> current;
    size_t candidates = 0;  // before the preferred query API replaced any exporter
    ReadPathFacts path;
    bool api_ran = false;  // the preferred query API was read
    QueryApiResult api;    // the latest query-API read's result
    bool exporter_answered = false;
    std::set<std::string> pinned_nodes;
    DiscoveryReport report;
    std::vector<std::string> errors;
  };

  std::vector<PodRead> PlanReads(const std::vector<Candidate>& current,
                                 std::chrono::steady_clock::time_point now,
                                 DiscoveryReport& report);
  std::vector<const Candidate*> ProbeOrder(const std::vector<const Candidate*>& due) const;
  void BuildReport(const GpuPresence& presence, const PinnedCandidates& pinned, size_t candidates,
                   const QueryApiResult& fallback, DiscoveryReport& report);

  std::string cluster_;
  DiscoveryOptions options_;
  Clock& clock_;
  DiscoveryCache cache_;
  QueryApiFallback query_api_;
  Cycle cycle_;
  std::set<std::string> due_keys_;  // candidates probed in the running cycle
  std::set<std::string> deferred_;  // candidates the last cycle's byte budget left unread
  std::string last_nothing_found_;  // logged once per change
};

}  // namespace gpuattr::discovery
