#include "gpuattr/discovery/discovery.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "gpuattr/sources/body.h"
#include "gpuattr/trust/vet.h"
#include "gpuattr/util/log.h"

namespace gpuattr::discovery {

// One GET of the cycle: a probe of a due candidate, or a scrape of a known target.
struct Discovery::Read {
  Candidate candidate;
  bool probe = false;
  sources::BodyKind kind = sources::BodyKind::kUnrecognised;  // scrapes: the cached kind
  // Filled by the worker; the body itself is dropped once read.
  scrape::Fetch fetch;
  ProbeVerdict verdict;
  bool read = false;  // the body was read as a target's (a scrape, or an accepted probe)
  sources::BodyRead body;
  bool done = false;

  bool up() const { return fetch.ok && body.readings.has_value(); }
};

namespace {

void Perform(Discovery::Read& r, scrape::Fetcher& fetcher, const DiscoveryOptions& options) {
  const Candidate& c = r.candidate;
  const sources::BodyLimits& limits = options.scrape.limits;
  scrape::FetchOptions fo{r.probe ? options.probe_timeout : options.scrape.timeout,
                          limits.body_bytes};
  r.fetch = fetcher.Get(scrape::ProxyMetricsPath(c.namespace_, c.pod, c.port), fo);
  if (!r.fetch.ok && r.fetch.over_cap)  // the reason names the limit (docs/design.md#limits)
    r.fetch.error = sources::LimitBreach{"body_bytes", limits.body_bytes, 0, ""}.Describe();
  if (r.probe) {
    r.verdict = JudgeProbe(c, r.fetch);
    r.kind = r.verdict.kind;
    r.read = IsAccepted(r.verdict.outcome);
  } else {
    r.read = true;
  }
  if (r.read && r.fetch.ok) r.body = sources::ReadBody(r.fetch.body, r.kind, limits);
  r.fetch.body.clear();
  r.fetch.body.shrink_to_fit();
  r.done = true;
}

ExporterStatus StatusOf(const Discovery::Read& r) {
  ExporterStatus e;
  e.namespace_ = r.candidate.namespace_;
  e.pod = r.candidate.pod;
  e.node = r.candidate.node;
  e.port = r.candidate.port;
  e.kind = std::string(sources::BodyKindName(r.kind));
  e.up = r.up();
  e.http_status = r.fetch.http_status;
  e.reason = !r.fetch.ok ? (r.fetch.error.empty() ? "no response" : r.fetch.error) : r.body.reason;
  e.duration_seconds = r.fetch.duration_seconds;
  e.bytes = r.fetch.bytes;
  e.parse_errors = r.body.parse_errors;
  return e;
}

// A failed probe of a likely exporter (keyword match or pin) is an exporter that is down. A GPU
// workload pod probed only as a possible inference server is not: most serve no metrics, and
// listing them as down exporters would page people. It shows among the probes instead.
ExporterStatus DownExporter(const CacheEntry& e) {
  ExporterStatus s;
  s.namespace_ = e.candidate.namespace_;
  s.pod = e.candidate.pod;
  s.node = e.candidate.node;
  s.port = e.candidate.port;
  s.kind = "unknown";
  s.http_status = e.verdict.http_status;
  s.reason = e.verdict.reason;
  s.duration_seconds = e.duration_seconds;
  s.bytes = e.bytes;
  return s;
}

void AddError(std::vector<std::string>& errors, std::string e) {
  if (std::find(errors.begin(), errors.end(), e) == errors.end()) errors.push_back(std::move(e));
}

// The vetting's counts onto the exporters' rows: every reason (0 included) for an exporter that
// was read, summed over a query API's per-node readings; a summary in the reason when any.
void AttachRejections(const std::vector<sources::ExporterReadings>& readings,
                      std::vector<ExporterStatus>& exporters) {
  auto row = [&](const sources::ExporterReadings& e) -> ExporterStatus* {
    for (ExporterStatus& s : exporters)
      if (s.up && s.namespace_ == e.namespace_ && s.pod == e.pod &&
          (s.kind == "prometheus") == e.from_query_api)
        return &s;
    return nullptr;
  };
  for (ExporterStatus& s : exporters)
    if (s.up)
      for (std::string_view reason : trust::kRejectReasons) s.rejected[std::string(reason)] = 0;
  for (const sources::ExporterReadings& e : readings)
    if (ExporterStatus* s = row(e))
      for (const auto& [reason, n] : sources::StatsOf(e.readings).rejected)
        s->rejected[reason] += n;
  for (ExporterStatus& s : exporters) {
    uint64_t total = 0;
    std::string by;
    for (const auto& [reason, n] : s.rejected) {
      if (n == 0) continue;
      total += n;
      by += (by.empty() ? "" : ", ") + reason + " " + std::to_string(n);
    }
    if (total == 0) continue;
    s.reason +=
        (s.reason.empty() ? "" : "; ") + std::to_string(total) + " line(s) rejected (" + by + ")";
  }
}

}  // namespace

std::string NothingFoundMessage(size_t pods_listed, size_t candidates_probed, bool gpu_present,
                                const std::string& gpu_presence) {
  std::string m = "no GPU exporter found: " + std::to_string(pods_listed) + " pods listed, " +
                  std::to_string(candidates_probed) + " candidates probed";
  if (!gpu_present) m += " (not probing: " + gpu_presence + ")";
  m += ". To fix: pin an exporter with --target ns/pod-prefix:port (e.g. "
       "--target gpu-operator/nvidia-dcgm-exporter:9400), and check that you may read pods "
       "through the proxy: kubectl auth can-i get pods/proxy -A";
  return m;
}

Discovery::Discovery(std::string cluster, DiscoveryOptions options, Clock& clock)
    : cluster_(std::move(cluster)),
      options_(std::move(options)),
      clock_(clock),
      cache_(options_.ttls),
      query_api_(options_.query_api) {}

DiscoveryResult Discovery::RunCycle(scrape::Fetcher& fetcher, const kube::ClusterObjects& objects,
                                    const StopSignal* stop,
                                    const kube::ClusterObjects* whole_cluster) {
  DiscoveryResult out;
  const auto now = clock_.Now();
  const double now_unix = UnixSeconds(clock_.WallNow());

  // Decide. Pins are probed whatever the gate says: the user asked for them.
  const GpuPresence presence = DetectGpuPresence(objects);
  const PinnedCandidates pinned = ResolvePins(options_.pins, objects);
  std::vector<Candidate> current = pinned.candidates;
  if (presence.present) {
    CandidateScan scan = ScanCandidates(objects);
    out.report.skipped_no_port = scan.no_port;
    current = MergeCandidates(MergeCandidates(std::move(scan.exporters), std::move(scan.inference)),
                              std::move(current));
  }
  // Who may speak for what, decided before any probe (docs/design.md#trust).
  MarkTrust(current, objects, options_.trust_rules);

  // The read path: on a large cluster a trusted query API holding the GPU series replaces the
  // GPU exporters' proxy GETs (pinned exporter pods are still read; they win for their nodes).
  ReadPathFacts path{CountGpuNodes(whole_cluster ? *whole_cluster : objects),
                     options_.query_api.prefer_above_gpu_nodes,
                     {},
                     {}};
  QueryApiResult api;
  bool api_ran = false;
  if (PreferQueryApi(path.gpu_nodes, path.above_gpu_nodes) && presence.present) {
    api = query_api_.RunCycle(fetcher, objects, options_.pins.services, now, now_unix, stop,
                              /*preferred=*/true);
    api_ran = true;
    if (!api.chosen.empty() && !api.readings.empty()) path.preferred_api = api.chosen;
  }
  const size_t candidates = current.size();
  if (!path.preferred_api.empty())
    std::erase_if(current,
                  [](const Candidate& c) { return c.role == Role::kExporter && !c.pinned; });
  std::vector<Read> reads = PlanReads(current, now, out.report);
  if (!path.preferred_api.empty())
    std::erase_if(reads, [](const Read& r) {
      return !r.candidate.pinned &&
             (r.kind == sources::BodyKind::kDcgm || r.kind == sources::BodyKind::kProcess);
    });

  // Fetch: pins and exporters first, then inference servers (each group in key order), so that a
  // cycle's exporters are never queued behind inference probes.
  std::vector<size_t> order(reads.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_partition(order.begin(), order.end(), [&](size_t i) {
    return reads[i].candidate.pinned || reads[i].candidate.role == Role::kExporter;
  });
  scrape::RunBounded(
      order.size(), options_.scrape.concurrency,
      [&](size_t i) { Perform(reads[order[i]], fetcher, options_); }, stop);
  RecordReads(reads, now, now_unix, out);

  // The query-API fallback, decided cluster-wide: only when no dcgm/process exporter pod answered
  // this cycle, and (as for probes) only on a GPU cluster unless a service is pinned.
  const auto gpu_exporter_up = [](const Read& r) {
    return r.done && r.read && r.up() &&
           (r.kind == sources::BodyKind::kDcgm || r.kind == sources::BodyKind::kProcess);
  };
  const bool exporter_answered = std::any_of(reads.begin(), reads.end(), gpu_exporter_up);
  if (path.preferred_api.empty() && !exporter_answered &&
      (presence.present || !options_.pins.services.empty()) && !(api_ran && !api.chosen.empty())) {
    api = query_api_.RunCycle(fetcher, objects, options_.pins.services, now, now_unix, stop);
    if (!api.chosen.empty() && !api.readings.empty()) path.fallback_api = api.chosen;
  }
  for (std::string& e : api.errors) AddError(out.errors, std::move(e));
  if (!path.preferred_api.empty()) {
    // A pinned exporter pod that answered is fresher than the query API for its node.
    std::set<std::string> pinned_nodes;
    for (const Read& r : reads)
      if (r.candidate.pinned && gpu_exporter_up(r)) pinned_nodes.insert(r.candidate.node);
    std::erase_if(api.readings, [&](const sources::ExporterReadings& e) {
      return pinned_nodes.count(e.node) > 0;
    });
  }

  BuildReport(objects, presence, pinned, candidates, api, out);
  const ReadPathChoice choice = DescribeReadPath(path);
  out.report.read_path = std::string(ReadPathName(choice.path));
  out.report.read_path_reason = choice.reason;
  out.report.read_path_detail = choice.detail;
  // Readings: the pods' in key order, then the query API's (per node and kind).
  for (Read& r : reads) {
    if (!(r.done && r.read && r.up())) continue;
    sources::ExporterReadings e{r.candidate.namespace_, r.candidate.pod, r.candidate.node,
                                std::move(*r.body.readings)};
    e.pinned = r.candidate.pinned;
    out.readings.push_back(std::move(e));
  }
  for (sources::ExporterReadings& e : api.readings) out.readings.push_back(std::move(e));
  // What they may not say is dropped before the stages see it, checked against the whole
  // cluster (a shard's query-API readings name other shards' nodes and pods too).
  trust::VetReadings(out.readings, whole_cluster ? *whole_cluster : objects);
  AttachRejections(out.readings, out.report.exporters);
  return out;
}

namespace {

// Where an inference candidate's port came from, most telling first.
int PortRank(const std::string& source) {
  if (source == "annotation") return 0;
  if (source == "named metrics") return 1;
  if (source == "named http") return 2;
  if (source == "8000") return 3;
  return 4;
}

}  // namespace

// The due inference probes in the order the budget takes them: known inference servers whose
// verdict expired first (a server that answered is re-confirmed before anything else), then
// candidates never probed, then re-probes of earlier failures and non-servers, the longest
// expired first; within each, the most telling port source, then the key.
std::vector<const Candidate*> Discovery::ProbeOrder(
    const std::vector<const Candidate*>& due) const {
  struct Ranked {
    int rank;
    int port;
    std::chrono::steady_clock::time_point expired;
    std::string key;
    const Candidate* c;
  };
  std::vector<Ranked> ranked;
  ranked.reserve(due.size());
  for (const Candidate* c : due) {
    Ranked r{1, PortRank(c->port_source), {}, c->Key(), c};
    auto it = cache_.entries().find(r.key);
    if (it != cache_.entries().end() && it->second.candidate.uid == c->uid) {
      r.rank = IsAccepted(it->second.verdict.outcome) ? 0 : 2;
      r.expired = it->second.expires;
    }
    ranked.push_back(std::move(r));
  }
  std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    return std::tie(a.rank, a.port, a.expired, a.key) < std::tie(b.rank, b.port, b.expired, b.key);
  });
  std::vector<const Candidate*> out;
  out.reserve(ranked.size());
  for (const Ranked& r : ranked) out.push_back(r.c);
  return out;
}

// Due probes (the cache decides; inference probes within the budget) and every accepted target
// not probed now, sorted by key.
std::vector<Discovery::Read> Discovery::PlanReads(const std::vector<Candidate>& current,
                                                  std::chrono::steady_clock::time_point now,
                                                  DiscoveryReport& report) {
  cache_.Prune(current);
  std::vector<Candidate> due = cache_.Due(current, now);
  cache_.RediscoveryDone();
  std::vector<Read> reads;
  due_keys_.clear();
  auto probe = [&](const Candidate& c) {
    due_keys_.insert(c.Key());
    Read r;
    r.candidate = c;
    r.probe = true;
    reads.push_back(std::move(r));
  };
  std::vector<const Candidate*> inference_due;
  for (const Candidate& c : due) {
    if (c.role == Role::kInference && !c.pinned)
      inference_due.push_back(&c);
    else
      probe(c);
  }
  const size_t budget = options_.inference_probes_per_cycle;
  report.inference_probe_budget = budget;
  std::vector<const Candidate*> ordered = ProbeOrder(inference_due);
  for (size_t i = 0; i < ordered.size(); ++i) {
    if (i < budget) {
      probe(*ordered[i]);
      continue;
    }
    auto it = cache_.entries().find(ordered[i]->Key());
    if (it != cache_.entries().end() && it->second.candidate.uid == ordered[i]->uid)
      ++report.waiting_reprobe;
    else
      ++report.waiting_first_probe;
  }
  for (const auto& [key, entry] : cache_.entries()) {
    if (due_keys_.count(key) || !IsAccepted(entry.verdict.outcome)) continue;
    Read r;
    r.candidate = entry.candidate;
    r.kind = entry.verdict.kind;
    reads.push_back(std::move(r));
  }
  std::sort(reads.begin(), reads.end(),
            [](const Read& a, const Read& b) { return a.candidate.Key() < b.candidate.Key(); });
  return reads;
}

// Verdicts into the cache; a known target that failed asks for rediscovery next cycle.
void Discovery::RecordReads(std::vector<Read>& reads, std::chrono::steady_clock::time_point now,
                            double now_unix, DiscoveryResult& out) {
  for (Read& r : reads) {
    if (!r.done) continue;  // cancelled before it started
    if (r.fetch.http_status == 403) AddError(out.errors, r.fetch.error);
    if (r.probe) {
      cache_.Record(r.candidate, r.verdict, r.fetch, now, now_unix);
      ++out.report.probed_this_cycle;
    }
    if (!r.read) continue;
    if (r.up())
      cache_.Refresh(r.candidate.Key(), now);
    else
      cache_.RequestRediscovery();
    out.report.exporters.push_back(StatusOf(r));
  }
}

void Discovery::BuildReport(const kube::ClusterObjects& objects, const GpuPresence& presence,
                            const PinnedCandidates& pinned, size_t candidates,
                            const QueryApiResult& fallback, DiscoveryResult& out) {
  DiscoveryReport& r = out.report;
  r.cluster = cluster_;
  r.pods_listed = objects.pods.size();
  r.nodes_listed = objects.nodes.size();
  r.gpu_present = presence.present;
  r.gpu_presence = presence.reason;
  r.candidates = candidates + fallback.candidates;
  r.probed_this_cycle += fallback.probed_this_cycle;
  r.pins = pinned.statuses;
  for (PinStatus& p : r.pins) {
    if (p.kind != "service") continue;
    auto note = fallback.pin_notes.find(p.text);
    p.note = note != fallback.pin_notes.end()
                 ? note->second
                 : "not used: exporter pods answer directly (the query API is the fallback)";
  }
  for (Outcome o : kAllOutcomes) r.outcome_counts[std::string(OutcomeName(o))] = 0;
  // Not probe outcomes: pods never probed for want of a port, and candidates waiting for a first
  // probe within the budget.
  r.outcome_counts["no_port"] = r.skipped_no_port;
  r.outcome_counts["waiting"] = r.waiting_first_probe;
  bool any_accepted = !fallback.chosen.empty();
  for (const auto& [key, e] : cache_.entries()) {
    r.probes.push_back({e.candidate, e.verdict, e.probed_unix, due_keys_.count(key) > 0});
    ++r.outcome_counts[std::string(OutcomeName(e.verdict.outcome))];
    any_accepted = any_accepted || IsAccepted(e.verdict.outcome);
    const bool likely_exporter = e.candidate.role == Role::kExporter || e.candidate.pinned;
    if (e.verdict.outcome == Outcome::kError && likely_exporter)
      r.exporters.push_back(DownExporter(e));
  }
  for (const ProbeRecord& p : fallback.probes) {
    r.probes.push_back(p);
    ++r.outcome_counts[std::string(OutcomeName(p.verdict.outcome))];
  }
  for (const ExporterStatus& e : fallback.exporters) r.exporters.push_back(e);
  std::stable_sort(
      r.exporters.begin(), r.exporters.end(), [](const ExporterStatus& a, const ExporterStatus& b) {
        return std::tie(a.namespace_, a.pod, a.port) < std::tie(b.namespace_, b.pod, b.port);
      });
  r.rediscovery_next_cycle = cache_.rediscovery_requested();
  if (!any_accepted) {
    r.nothing_found = NothingFoundMessage(r.pods_listed, cache_.entries().size(), presence.present,
                                          presence.reason);
    if (fallback.searched)
      r.nothing_found += ". No Prometheus-compatible query API with GPU series either (" +
                         std::to_string(fallback.candidates) +
                         " candidate services, see docs/fallback.md): pin one with --target "
                         "ns/svc/name:port and check: kubectl auth can-i get services/proxy -A";
    if (const uint64_t n = r.outcome_counts["untrusted"]; n > 0)
      r.nothing_found += ". " + std::to_string(n) +
                         " candidate(s) serve GPU series but may not speak for GPUs (outcome "
                         "untrusted: not owned by a DaemonSet, not pinned, no trust rule; the "
                         "probes say how to trust them, docs/discovery.md)";
  }
  if (r.nothing_found != last_nothing_found_) {
    if (!r.nothing_found.empty()) log::Warn(r.nothing_found, {{"cluster", cluster_}});
    last_nothing_found_ = r.nothing_found;
  }
}

}  // namespace gpuattr::discovery
