#include "gpuattr/scrape/read.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>

#include "gpuattr/discovery/probe.h"
#include "gpuattr/sources/body.h"
#include "gpuattr/sources/promapi.h"
#include "gpuattr/trust/query_target.h"

namespace gpuattr::scrape {
namespace {

constexpr char kJsonAccept[] = "application/json";

discovery::FetchFacts FactsOf(const Fetch& f) {
  return {f.ok, f.http_status, f.error, f.duration_seconds, f.bytes};
}

FetchOptions JsonFetch(std::chrono::milliseconds timeout, size_t cap) {
  FetchOptions o;
  o.timeout = timeout;
  o.max_body_bytes = cap;
  o.accept = kJsonAccept;
  return o;
}

discovery::ExporterStatus StatusOf(const discovery::PodRead& r, const discovery::PodReadOutcome& o,
                                   const sources::BodyRead& body) {
  discovery::ExporterStatus e;
  e.namespace_ = r.candidate.namespace_;
  e.pod = r.candidate.pod;
  e.node = r.candidate.node;
  e.port = r.candidate.port;
  e.kind = std::string(sources::BodyKindName(o.kind));
  e.up = o.up;
  e.http_status = o.fetch.http_status;
  e.reason = !o.fetch.ok ? (o.fetch.error.empty() ? "no response" : o.fetch.error) : body.reason;
  e.duration_seconds = o.fetch.duration_seconds;
  e.bytes = o.fetch.bytes;
  e.parse_errors = body.parse_errors;
  return e;
}

// The pod's /metrics: through its proxy path, or directly at its IP (from the pod object).
FetchTarget PodTarget(const discovery::Candidate& c) {
  FetchTarget t;
  t.proxy_path = ProxyMetricsPath(c.namespace_, c.pod, c.port);
  t.scheme = c.scheme;
  t.host = c.ip;
  t.port = c.port;
  t.what = "pod " + c.namespace_ + "/" + c.pod;
  t.no_host_reason = t.what + " has no IP yet (status.podIP is empty): not read directly";
  return t;
}

// A query API's path: through the service proxy, or directly at the Service's ClusterIP.
FetchTarget ServiceTarget(const discovery::QueryApiCandidate& c, const std::string& path) {
  FetchTarget t;
  t.proxy_path = path;
  t.port = c.port_number;
  t.what = "service " + c.namespace_ + "/" + c.service;
  if (c.cluster_ip == "None")
    t.no_host_reason = t.what +
                       " is headless (clusterIP None): no address to read it directly; pin a "
                       "Service with a ClusterIP, or set scrape.path: proxy";
  else if (c.cluster_ip.empty() || c.port_number == 0)
    t.no_host_reason = t.what + " has no ClusterIP and port to read it directly";
  else
    t.host = c.cluster_ip;
  return t;
}

// One pod read, on a worker thread: fetch, judge a probe, read the body of a target.
void ReadPod(const discovery::PodRead& r, Fetcher& fetcher, const sources::BodyLimits& limits,
             discovery::PodReadOutcome& out, std::optional<sources::Readings>& readings) {
  const discovery::Candidate& c = r.candidate;
  FetchOptions options;
  options.timeout = r.timeout;
  options.max_body_bytes = r.max_body_bytes;
  Fetch f = fetcher.Get(PodTarget(c), options);
  if (!f.ok && f.over_cap)  // the reason names the limit (docs/design.md#limits)
    f.error = sources::LimitBreach{"body_bytes", limits.body_bytes, 0, ""}.Describe();
  out.fetch = FactsOf(f);
  out.kind = r.kind;
  if (r.probe) {
    out.verdict = discovery::JudgeProbe(c, out.fetch, f.body);
    out.kind = out.verdict.kind;
    out.read = discovery::IsAccepted(out.verdict.outcome);
  } else {
    out.read = true;
  }
  sources::BodyRead body;
  if (out.read && f.ok) body = sources::ReadBody(f.body, out.kind, limits);
  f.body.clear();
  f.body.shrink_to_fit();
  out.up = f.ok && body.readings.has_value();
  if (out.read) out.status = StatusOf(r, out, body);
  readings = std::move(body.readings);
  out.done = true;
}

// A read the cycle's byte budget leaves for the next cycle: a status row that says why.
void Defer(const discovery::PodRead& r, size_t read_bytes, const sources::BodyLimits& limits,
           discovery::PodReadOutcome& out) {
  out.done = true;
  out.deferred = true;
  out.kind = r.kind;
  sources::BodyRead none;
  out.status = StatusOf(r, out, none);
  out.status.reason = "not read this cycle: " + std::to_string(read_bytes) +
                      " bytes of bodies were read, the limit is " +
                      std::to_string(limits.total_bytes) +
                      " (scrape.limits.total_bytes); read first next cycle";
}

// The one query of the chosen API: fetch, then read the answer (pure) into per-node readings.
void Query(const discovery::QueryApiTarget& target, const discovery::QueryApiRead& read,
           Fetcher& fetcher, const kube::ClusterObjects& objects, QueryApiReading& out) {
  const discovery::QueryApiCandidate& chosen = target.candidate;
  discovery::QueryApiReadOutcome& o = out.outcome;
  o.queried = chosen;
  discovery::ExporterStatus& st = o.status;
  st.namespace_ = chosen.namespace_;
  st.pod = chosen.service;
  st.port = chosen.port_number;
  st.kind = "prometheus";
  Fetch f = fetcher.Get(ServiceTarget(chosen, target.query_path),
                        JsonFetch(read.query_timeout, read.max_body_bytes));
  st.http_status = f.http_status;
  st.duration_seconds = f.duration_seconds;
  st.bytes = f.bytes;
  // Each series stands only when its scrape target may speak for GPUs (trust/query_target.h).
  const trust::QueryTargetContext targets =
      discovery::TargetContext(objects, read.exporter_trust, read.pod_pins, chosen.pinned);
  sources::PodLookup lookup = discovery::PodLookupFor(objects);
  lookup.judge = [&targets](sources::RepairedSeries& s) {
    return trust::JudgeQueryTarget(s, targets);
  };
  Result<sources::QueryAnswer> answer =
      f.ok
          ? sources::ReadQueryAnswer(f.body, discovery::QueryApiSource(chosen), lookup, read.limits)
          : Result<sources::QueryAnswer>(
                MakeError(ErrorCode::kUnavailable, f.error.empty() ? "no response" : f.error));
  f.body.clear();
  f.body.shrink_to_fit();
  o.query = FactsOf(f);
  if (!answer) {
    st.reason = answer.error().message;
    return;
  }
  auto add = [&](const std::string& node, sources::Readings readings) {
    sources::ExporterReadings e{chosen.namespace_, chosen.service, node, std::move(readings)};
    e.pinned = chosen.pinned;
    e.from_query_api = true;  // its nodes and pods are vetted (trust/vet.h)
    out.readings.push_back(std::move(e));
  };
  for (sources::PromNodeReadings& n : answer->nodes) {
    if (n.dcgm) add(n.node, std::move(*n.dcgm));
    if (n.process) add(n.node, std::move(*n.process));
  }
  o.answered = true;
  o.readings = out.readings.size();
  st.up = true;
  st.rejected = std::move(answer->rejected);  // by the scrape target; vetting adds its own
  st.parse_errors = answer->invalid_series + answer->unnamed_series;
  if (answer->invalid_series > 0)
    st.reason = std::to_string(st.parse_errors) + " unusable series, " + answer->first_invalid;
  else if (answer->unnamed_series > 0)
    st.reason = std::to_string(answer->unnamed_series) + " series without __name__";
  for (const std::string& r : answer->rejected_nodes)
    st.reason += (st.reason.empty() ? "" : "; ") + r;
}

}  // namespace

PodReadings ReadPods(const std::vector<discovery::PodRead>& reads, Fetcher& fetcher,
                     size_t concurrency, const sources::BodyLimits& limits,
                     const StopSignal* stop) {
  PodReadings out;
  out.outcomes.resize(reads.size());
  std::vector<std::optional<sources::Readings>> got(reads.size());
  std::vector<size_t> order(reads.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_partition(order.begin(), order.end(), [&](size_t i) {
    return reads[i].candidate.pinned || reads[i].candidate.role == discovery::Role::kExporter;
  });
  // Bytes read this cycle: a read that would start past limits.total_bytes waits for the next
  // cycle. Reads in flight may each still add a body: the bound is total_bytes + concurrency x
  // body_bytes (docs/security.md#memory).
  std::atomic<size_t> read_bytes{0};
  RunBounded(
      order.size(), concurrency,
      [&](size_t i) {
        const size_t at = order[i];
        if (const size_t so_far = read_bytes.load(); so_far >= limits.total_bytes)
          return Defer(reads[at], so_far, limits, out.outcomes[at]);
        ReadPod(reads[at], fetcher, limits, out.outcomes[at], got[at]);
        read_bytes += out.outcomes[at].fetch.bytes;
      },
      stop);
  for (size_t i = 0; i < reads.size(); ++i) {
    const discovery::PodReadOutcome& o = out.outcomes[i];
    if (!(o.done && o.read && o.up)) continue;
    const discovery::Candidate& c = reads[i].candidate;
    sources::ExporterReadings e{c.namespace_, c.pod, c.node, std::move(*got[i])};
    e.pinned = c.pinned;
    e.rank = static_cast<uint8_t>(c.rank);
    out.readings.push_back(std::move(e));
  }
  return out;
}

QueryApiReading ReadQueryApi(const discovery::QueryApiRead& read, Fetcher& fetcher,
                             const kube::ClusterObjects& objects, const StopSignal* stop) {
  QueryApiReading out;
  const discovery::QueryApiTarget* chosen = read.chosen ? &*read.chosen : nullptr;
  for (size_t i = 0; !chosen && i < read.probes.size(); ++i) {
    if (stop && stop->stopped()) break;
    const discovery::QueryApiTarget& t = read.probes[i];
    const Fetch f = fetcher.Get(ServiceTarget(t.candidate, t.probe_path),
                                JsonFetch(read.probe_timeout, read.max_body_bytes));
    discovery::QueryApiProbeOutcome p{t.candidate, FactsOf(f), {}};
    p.verdict = discovery::JudgeQueryApiProbe(t.candidate, p.fetch, f.body);
    if (discovery::IsAccepted(p.verdict.outcome)) chosen = &t;
    out.outcome.probes.push_back(std::move(p));
  }
  if (chosen && !(stop && stop->stopped())) Query(*chosen, read, fetcher, objects, out);
  return out;
}

}  // namespace gpuattr::scrape
