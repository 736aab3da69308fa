#include "gpuattr/discovery/discovery.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "gpuattr/util/log.h"

namespace gpuattr::discovery {
namespace {

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

// The query API holds each series' scrape target to the exporters' rule (docs/design.md#trust).
QueryApiOptions WithExporterTrust(const DiscoveryOptions& options) {
  QueryApiOptions o = options.query_api;
  o.exporter_trust = {options.trust_rules, options.exporter_namespaces};
  o.pod_pins = options.pins.pods;
  return o;
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
      query_api_(WithExporterTrust(options_)) {}

std::optional<QueryApiRead> Discovery::Begin(const kube::ClusterObjects& objects,
                                             const kube::ClusterObjects* whole) {
  cycle_ = Cycle{};
  Cycle& c = cycle_;
  c.objects = &objects;
  c.now = clock_.Now();
  c.now_unix = UnixSeconds(clock_.WallNow());

  // Pins are probed whatever the gate says: the user asked for them.
  c.presence = DetectGpuPresence(objects);
  c.pinned = ResolvePins(options_.pins, objects);
  c.current = c.pinned.candidates;
  if (c.presence.present) {
    CandidateScan scan = ScanCandidates(objects);
    c.report.skipped_no_port = scan.no_port;
    c.current =
        MergeCandidates(MergeCandidates(std::move(scan.exporters), std::move(scan.inference)),
                        std::move(c.current));
  }
  // Who may speak for what, decided before any probe (docs/design.md#trust).
  MarkTrust(c.current, objects, {options_.trust_rules, options_.exporter_namespaces});
  c.candidates = c.current.size();

  // The read path: on a large cluster a trusted query API holding the GPU series replaces the
  // GPU exporters' proxy GETs (pinned exporter pods are still read; they win for their nodes).
  c.path = ReadPathFacts{
      CountGpuNodes(whole ? *whole : objects), options_.query_api.prefer_above_gpu_nodes, {}, {}};
  if (!PreferQueryApi(c.path.gpu_nodes, c.path.above_gpu_nodes) || !c.presence.present)
    return std::nullopt;
  c.api_ran = true;
  return query_api_.Plan(objects, options_.pins.services, c.now, /*preferred=*/true);
}

std::vector<PodRead> Discovery::PlanPodReads(const QueryApiReadOutcome* preferred) {
  Cycle& c = cycle_;
  if (preferred) {
    c.api = query_api_.Record(*preferred, c.now, c.now_unix);
    if (!c.api.chosen.empty() && c.api.readings > 0) c.path.preferred_api = c.api.chosen;
  }
  const bool replaced = !c.path.preferred_api.empty();
  if (replaced)
    std::erase_if(c.current,
                  [](const Candidate& k) { return k.role == Role::kExporter && !k.pinned; });
  std::vector<PodRead> reads = PlanReads(c.current, c.now, c.report);
  if (replaced)
    std::erase_if(reads, [](const PodRead& r) {
      return !r.candidate.pinned &&
             (r.kind == sources::BodyKind::kDcgm || r.kind == sources::BodyKind::kProcess);
    });
  // What the byte budget left unread last cycle goes first (docs/security.md#memory).
  std::stable_partition(reads.begin(), reads.end(),
                        [&](const PodRead& r) { return deferred_.count(r.candidate.Key()) > 0; });
  return reads;
}

// Verdicts into the cache; a known target that failed asks for rediscovery next cycle.
std::optional<QueryApiRead> Discovery::RecordPodReads(const std::vector<PodRead>& reads,
                                                      const std::vector<PodReadOutcome>& outcomes) {
  Cycle& c = cycle_;
  for (size_t i = 0; i < reads.size() && i < outcomes.size(); ++i) {
    const PodRead& r = reads[i];
    const PodReadOutcome& o = outcomes[i];
    if (!o.done) continue;  // cancelled before it started
    if (o.deferred) {
      deferred_.insert(r.candidate.Key());
      c.report.exporters.push_back(o.status);
      continue;
    }
    deferred_.erase(r.candidate.Key());
    if (o.fetch.http_status == 403) AddError(c.errors, o.fetch.error);
    if (r.probe) {
      cache_.Record(r.candidate, o.verdict, o.fetch, c.now, c.now_unix);
      ++c.report.probed_this_cycle;
    }
    if (!o.read) continue;
    if (o.up)
      cache_.Refresh(r.candidate.Key(), c.now);
    else
      cache_.RequestRediscovery();
    c.report.exporters.push_back(o.status);
    // A GPU exporter pod answered: no fallback; a pinned one is fresher for its node than a
    // preferred query API.
    if (o.up && (o.kind == sources::BodyKind::kDcgm || o.kind == sources::BodyKind::kProcess)) {
      c.exporter_answered = true;
      if (r.candidate.pinned && !c.path.preferred_api.empty())
        c.pinned_nodes.insert(r.candidate.node);
    }
  }
  // The query-API fallback, decided cluster-wide: only when no dcgm/process exporter pod answered
  // this cycle, and (as for probes) only on a GPU cluster unless a service is pinned.
  if (!c.path.preferred_api.empty() || c.exporter_answered ||
      !(c.presence.present || !options_.pins.services.empty()) ||
      (c.api_ran && !c.api.chosen.empty()))
    return std::nullopt;
  return query_api_.Plan(*c.objects, options_.pins.services, c.now);
}

DiscoveryFindings Discovery::Finish(const QueryApiReadOutcome* fallback) {
  Cycle& c = cycle_;
  if (fallback) {
    c.api = query_api_.Record(*fallback, c.now, c.now_unix);
    if (!c.api.chosen.empty() && c.api.readings > 0) c.path.fallback_api = c.api.chosen;
  }
  for (std::string& e : c.api.errors) AddError(c.errors, std::move(e));
  BuildReport(c.presence, c.pinned, c.candidates, c.api, c.report);
  const ReadPathChoice choice = DescribeReadPath(c.path);
  c.report.read_path = std::string(ReadPathName(choice.path));
  c.report.read_path_reason = choice.reason;
  c.report.read_path_detail = choice.detail;
  DiscoveryFindings out{std::move(c.report), std::move(c.errors), std::move(c.pinned_nodes)};
  cycle_ = Cycle{};
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
std::vector<PodRead> Discovery::PlanReads(const std::vector<Candidate>& current,
                                          std::chrono::steady_clock::time_point now,
                                          DiscoveryReport& report) {
  cache_.Prune(current);
  std::vector<Candidate> due = cache_.Due(current, now);
  cache_.RediscoveryDone();
  std::vector<PodRead> reads;
  due_keys_.clear();
  auto add = [&](const Candidate& c, bool probe, sources::BodyKind kind) {
    PodRead r;
    r.candidate = c;
    r.probe = probe;
    r.kind = kind;
    r.timeout = probe ? options_.probe_timeout : options_.scrape.timeout;
    r.max_body_bytes = options_.scrape.limits.body_bytes;
    reads.push_back(std::move(r));
  };
  auto probe = [&](const Candidate& c) {
    due_keys_.insert(c.Key());
    add(c, true, sources::BodyKind::kUnrecognised);
  };
  std::vector<const Candidate*> inference_due;
  for (const Candidate& c : due) {
    if (TrustedInNoRole(c)) {  // decided from the pod: never fetched (docs/design.md#trust)
      cache_.Record(c, UntrustedWithoutFetch(c), FetchFacts{}, now, /*now_unix=*/0);
      continue;
    }
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
    add(entry.candidate, false, entry.verdict.kind);
  }
  std::sort(reads.begin(), reads.end(), [](const PodRead& a, const PodRead& b) {
    return a.candidate.Key() < b.candidate.Key();
  });
  return reads;
}

void Discovery::BuildReport(const GpuPresence& presence, const PinnedCandidates& pinned,
                            size_t candidates, const QueryApiResult& fallback, DiscoveryReport& r) {
  r.cluster = cluster_;
  r.pods_listed = cycle_.objects->pods.size();
  r.nodes_listed = cycle_.objects->nodes.size();
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
                         " candidate(s) may not speak for GPUs (outcome untrusted: not pinned, "
                         "no trust rule, not controlled by a DaemonSet in an exporter namespace; "
                         "the probes say how to trust them, docs/security.md)";
  }
  if (r.nothing_found != last_nothing_found_) {
    if (!r.nothing_found.empty()) log::Warn(r.nothing_found, {{"cluster", cluster_}});
    last_nothing_found_ = r.nothing_found;
  }
}

}  // namespace gpuattr::discovery
