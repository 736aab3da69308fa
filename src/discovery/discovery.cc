#include "gpuattr/discovery/discovery.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "gpuattr/util/log.h"

namespace gpuattr::discovery {
namespace {

double UnixSeconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

ScrapeTarget TargetOf(const Candidate& c, sources::BodyKind kind) {
  return ScrapeTarget{c.namespace_, c.pod, c.node, c.port, kind};
}

// One GET of the cycle: a probe of a due candidate, or a scrape of a known target.
struct Job {
  Candidate candidate;
  bool probe = false;
  sources::BodyKind kind = sources::BodyKind::kUnrecognised;  // scrapes: the cached kind
  // Filled by the worker; the body itself is dropped once read.
  Fetch fetch;
  ProbeVerdict verdict;
  bool has_scrape = false;
  ScrapeResult scrape;
  bool done = false;
};

void RunJob(Job& job, kube::ApiClient& client, const DiscoveryOptions& options) {
  const Candidate& c = job.candidate;
  FetchOptions fo{job.probe ? options.probe_timeout : options.scrape.timeout,
                  options.scrape.max_body_bytes};
  job.fetch = FetchPath(client, ProxyMetricsPath(c.namespace_, c.pod, c.port), fo);
  if (job.probe) {
    job.verdict = JudgeProbe(c, job.fetch);
    if (IsAccepted(job.verdict.outcome)) {
      job.scrape = ReadScrape(TargetOf(c, job.verdict.kind), job.fetch);
      job.has_scrape = true;
    }
  } else {
    job.scrape = ReadScrape(TargetOf(c, job.kind), job.fetch);
    job.has_scrape = true;
  }
  job.fetch.body.clear();
  job.fetch.body.shrink_to_fit();
  job.done = true;
}

ExporterStatus StatusOf(const ScrapeResult& s) {
  ExporterStatus e;
  e.namespace_ = s.target.namespace_;
  e.pod = s.target.pod;
  e.node = s.target.node;
  e.port = s.target.port;
  e.kind = std::string(sources::BodyKindName(s.kind));
  e.up = s.ok;
  e.http_status = s.http_status;
  e.reason = s.reason;
  e.duration_seconds = s.duration_seconds;
  e.bytes = s.bytes;
  e.parse_errors = s.parse_errors;
  return e;
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

DiscoveryCycle Discovery::RunCycle(kube::ApiClient& client,
                                   std::shared_ptr<const kube::ClusterObjects> objects,
                                   const StopSignal* stop) {
  DiscoveryCycle out;
  out.input.cluster = cluster_;
  out.input.objects = objects ? objects : std::make_shared<const kube::ClusterObjects>();
  const kube::ClusterObjects& objs = *out.input.objects;
  const auto now = clock_.Now();
  const double now_unix = UnixSeconds(clock_.WallNow());

  // Candidates. Pins are probed whatever the gate says: the user asked for them.
  GpuPresence presence = DetectGpuPresence(objs);
  PinnedCandidates pinned = ResolvePins(options_.pins, objs);
  std::vector<Candidate> current = pinned.candidates;
  if (presence.present)
    current = MergeCandidates(MergeCandidates(ExporterCandidates(objs), InferenceCandidates(objs)),
                              std::move(current));

  cache_.Prune(current);
  std::vector<Candidate> due = cache_.Due(current, now);
  cache_.RediscoveryDone();

  std::vector<Job> jobs;
  std::set<std::string> due_keys;
  for (const Candidate& c : due) {
    due_keys.insert(c.Key());
    Job j;
    j.candidate = c;
    j.probe = true;
    jobs.push_back(std::move(j));
  }
  for (const auto& [key, entry] : cache_.entries()) {
    if (due_keys.count(key) || !IsAccepted(entry.verdict.outcome)) continue;
    Job j;
    j.candidate = entry.candidate;
    j.kind = entry.verdict.kind;
    jobs.push_back(std::move(j));
  }
  std::sort(jobs.begin(), jobs.end(),
            [](const Job& a, const Job& b) { return a.candidate.Key() < b.candidate.Key(); });

  RunBounded(
      jobs.size(), options_.scrape.concurrency,
      [&](size_t i) { RunJob(jobs[i], client, options_); }, stop);

  // Record verdicts, gather scrapes (single-threaded from here on).
  std::set<std::string> errors_seen;
  for (Job& j : jobs) {
    if (!j.done) continue;  // cancelled before it started
    if (j.fetch.http_status == 403 && errors_seen.insert(j.fetch.error).second)
      out.errors.push_back(j.fetch.error);
    if (j.probe) {
      cache_.Record(j.candidate, j.verdict, j.fetch, now, now_unix);
      ++out.report.probed_this_cycle;
    }
    if (!j.has_scrape) continue;
    if (j.scrape.ok)
      cache_.Refresh(j.candidate.Key(), now);
    else
      cache_.RequestRediscovery();  // a known target failed: look again next cycle
    out.scrapes.push_back(std::move(j.scrape));
  }

  // The query-API fallback, decided cluster-wide: only when no dcgm/process exporter pod answered
  // this cycle, and (as for probes) only on a GPU cluster unless a service is pinned.
  const bool exporter_answered =
      std::any_of(out.scrapes.begin(), out.scrapes.end(), [](const ScrapeResult& s) {
        return s.ok &&
               (s.kind == sources::BodyKind::kDcgm || s.kind == sources::BodyKind::kProcess);
      });
  QueryApiCycle fallback;
  if (!exporter_answered && (presence.present || !options_.pins.services.empty()))
    fallback = query_api_.RunCycle(client, objs, options_.pins.services, now, now_unix, stop);
  for (auto& e : fallback.errors)
    if (errors_seen.insert(e).second) out.errors.push_back(std::move(e));

  // Report.
  DiscoveryReport& r = out.report;
  r.cluster = cluster_;
  r.pods_listed = objs.pods.size();
  r.nodes_listed = objs.nodes.size();
  r.gpu_present = presence.present;
  r.gpu_presence = presence.reason;
  r.candidates = current.size();
  r.pins = pinned.statuses;
  for (PinStatus& p : r.pins) {
    if (p.kind != "service") continue;
    auto note = fallback.pin_notes.find(p.text);
    p.note = note != fallback.pin_notes.end()
                 ? note->second
                 : "not used: exporter pods answer directly (the query API is the fallback)";
  }
  for (Outcome o : {Outcome::kAccepted, Outcome::kUnrecognised, Outcome::kError, Outcome::kPinned})
    r.outcome_counts[std::string(OutcomeName(o))] = 0;
  bool any_accepted = false;
  for (const auto& [key, e] : cache_.entries()) {
    r.probes.push_back({e.candidate, e.verdict, e.probed_unix, due_keys.count(key) > 0});
    ++r.outcome_counts[std::string(OutcomeName(e.verdict.outcome))];
    any_accepted = any_accepted || IsAccepted(e.verdict.outcome);
    // A failed probe of a likely exporter (keyword match or pin) is an exporter that is down. A
    // GPU workload pod probed only as a possible inference server is not: most serve no metrics,
    // and listing them as down exporters would page people. It shows among the probes instead.
    const bool likely_exporter = e.candidate.role == Role::kExporter || e.candidate.pinned;
    if (e.verdict.outcome == Outcome::kError && likely_exporter) {
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
      r.exporters.push_back(std::move(s));
    }
  }
  for (const ProbeRecord& p : fallback.probes) {
    r.probes.push_back(p);
    ++r.outcome_counts[std::string(OutcomeName(p.verdict.outcome))];
  }
  r.probed_this_cycle += fallback.probed_this_cycle;
  r.candidates += fallback.candidates;
  any_accepted = any_accepted || !fallback.chosen.empty();
  for (const ScrapeResult& s : out.scrapes) r.exporters.push_back(StatusOf(s));
  for (ExporterStatus& e : fallback.exporters) r.exporters.push_back(std::move(e));
  std::sort(r.exporters.begin(), r.exporters.end(),
            [](const ExporterStatus& a, const ExporterStatus& b) {
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
  }
  if (r.nothing_found != last_nothing_found_) {
    if (!r.nothing_found.empty()) log::Warn(r.nothing_found, {{"cluster", cluster_}});
    last_nothing_found_ = r.nothing_found;
  }

  // The attribution input: successful scrapes only, readings moved out of the scrape results.
  for (ScrapeResult& s : out.scrapes) {
    if (!s.ok) continue;
    const ScrapeTarget& t = s.target;
    if (auto* d = std::get_if<sources::DcgmReadings>(&s.readings)) {
      out.input.exporters.push_back({t.namespace_, t.pod, t.node, s.kind, std::move(*d)});
    } else if (auto* p = std::get_if<sources::ProcessReadings>(&s.readings)) {
      out.input.exporters.push_back({t.namespace_, t.pod, t.node, s.kind, std::move(*p)});
    } else if (auto* inf = std::get_if<sources::InferenceReadings>(&s.readings)) {
      out.input.inference.push_back({t.namespace_, t.pod, t.node, s.kind, std::move(*inf)});
    }
    s.readings = std::monostate{};
  }
  for (ExporterData& d : fallback.data) out.input.exporters.push_back(std::move(d));
  return out;
}

}  // namespace gpuattr::discovery
