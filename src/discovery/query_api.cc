#include "gpuattr/discovery/query_api.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <memory>
#include <set>
#include <tuple>

#include "gpuattr/discovery/candidates.h"
#include "gpuattr/kube/dra_gpus.h"
#include "gpuattr/sources/aliases.h"
#include "gpuattr/util/strings.h"

namespace gpuattr::discovery {
namespace {

// Services whose names contain a query-API word but serve no query API (or only part of one).
constexpr std::array<std::string_view, 22> kNotQueryApis = {
    "alertmanager", "node-exporter",  "exporter", "operator",    "kube-state-metrics",
    "pushgateway",  "adapter",        "grafana",  "sidecar",     "thanos-discovery",
    "store",        "compact",        "receive",  "ruler",       "vminsert",
    "vmagent",      "vmalert",        "vmauth",   "distributor", "ingester",
    "webhook",      "config-reloader"};

bool Contains(std::string_view haystack, std::string_view needle) {
  return ContainsIgnoreCase(haystack, needle);
}

std::string ServiceKey(std::string_view ns, std::string_view service, std::string_view port) {
  return std::string(ns) + "/" + std::string(service) + ":" + std::string(port);
}

Candidate AsCandidate(const QueryApiCandidate& q) {
  Candidate c;
  c.namespace_ = q.namespace_;
  c.pod = q.service;
  c.port = q.port_number;
  c.port_source = q.port_source;
  c.role = Role::kExporter;
  c.pinned = q.pinned;
  c.why = "query API (" + std::string(QueryApiFlavorName(q.flavor)) + "): " + q.why;
  return c;
}

int FlavorRank(QueryApiFlavor f) { return static_cast<int>(f); }

bool LooksLikeExporterName(std::string_view name) {
  return Contains(name, "exporter") || Contains(name, "dcgm");
}

}  // namespace

std::string QueryApiSource(const QueryApiCandidate& c) { return "query API " + c.Key(); }

std::string_view QueryApiFlavorName(QueryApiFlavor flavor) {
  switch (flavor) {
    case QueryApiFlavor::kThanosQuery:
      return "thanos-query";
    case QueryApiFlavor::kPrometheus:
      return "prometheus";
    case QueryApiFlavor::kVictoriaSingle:
      return "vmsingle";
    case QueryApiFlavor::kVictoriaSelect:
      return "vmselect";
    case QueryApiFlavor::kMimir:
      return "mimir";
  }
  return "prometheus";
}

std::optional<QueryApiFlavor> QueryApiFlavorOf(std::string_view name) {
  for (std::string_view no : kNotQueryApis)
    if (Contains(name, no)) return std::nullopt;
  if (Contains(name, "thanos"))
    return Contains(name, "quer") ? std::optional(QueryApiFlavor::kThanosQuery) : std::nullopt;
  if (Contains(name, "mimir") || Contains(name, "cortex"))
    return Contains(name, "query-frontend") || Contains(name, "querier")
               ? std::optional(QueryApiFlavor::kMimir)
               : std::nullopt;
  if (Contains(name, "vmselect")) return QueryApiFlavor::kVictoriaSelect;
  if (Contains(name, "vmsingle") || Contains(name, "victoria-metrics"))
    return QueryApiFlavor::kVictoriaSingle;
  if (Contains(name, "prometheus")) return QueryApiFlavor::kPrometheus;
  return std::nullopt;
}

std::string_view QueryApiPathPrefix(QueryApiFlavor flavor) {
  switch (flavor) {
    case QueryApiFlavor::kVictoriaSelect:
      return "select/0/prometheus";
    case QueryApiFlavor::kMimir:
      return "prometheus";
    default:
      return "";
  }
}

std::string QueryApiCandidate::Key() const { return ServiceKey(namespace_, service, port); }

std::optional<std::pair<kube::ServicePort, std::string>> QueryApiPort(const kube::Service& service,
                                                                      QueryApiFlavor flavor) {
  const auto& ports = service.ports;
  for (std::string_view name : {"http-web", "web"})
    for (const auto& p : ports)
      if (p.name == name) return std::pair(p, "named " + std::string(name));
  std::vector<int32_t> usual;
  switch (flavor) {
    case QueryApiFlavor::kThanosQuery:
      usual = {10902, 9090};
      break;
    case QueryApiFlavor::kPrometheus:
      usual = {9090};
      break;
    case QueryApiFlavor::kVictoriaSingle:
      usual = {8428};
      break;
    case QueryApiFlavor::kVictoriaSelect:
      usual = {8481};
      break;
    case QueryApiFlavor::kMimir:
      usual = {8080};
      break;
  }
  for (int32_t n : usual)
    for (const auto& p : ports)
      if (p.port == n) return std::pair(p, std::to_string(n));
  for (const auto& p : ports)
    if (p.name == "http") return std::pair(p, std::string("named http"));
  if (ports.size() == 1) return std::pair(ports.front(), std::string("only port"));
  return std::nullopt;
}

std::vector<QueryApiCandidate> QueryApiCandidates(const kube::ClusterObjects& objects,
                                                  const std::vector<ServicePin>& pins) {
  std::vector<QueryApiCandidate> out;
  std::set<std::string> seen;  // namespace/service: a pinned service is not searched again
  for (const ServicePin& pin : pins) {
    QueryApiCandidate c;
    c.namespace_ = pin.namespace_;
    c.service = pin.service;
    c.port = pin.port;
    c.port_source = "pin";
    c.flavor = QueryApiFlavorOf(pin.service).value_or(QueryApiFlavor::kPrometheus);
    c.pinned = true;
    c.why = "pin " + pin.text;
    auto it = objects.services.find(pin.namespace_ + "/" + pin.service);
    if (it != objects.services.end()) c.cluster_ip = it->second.cluster_ip;
    if (it != objects.services.end())
      for (const auto& p : it->second.ports)
        if (p.name == pin.port || std::to_string(p.port) == pin.port) c.port_number = p.port;
    if (c.port_number == 0 && std::all_of(pin.port.begin(), pin.port.end(),
                                          [](unsigned char ch) { return std::isdigit(ch) != 0; }))
      c.port_number = std::stoi(pin.port);
    if (seen.insert(pin.namespace_ + "/" + pin.service).second) out.push_back(std::move(c));
  }
  std::vector<QueryApiCandidate> found;
  for (const auto& [key, svc] : objects.services) {
    if (seen.count(key)) continue;
    auto flavor = QueryApiFlavorOf(svc.name);
    if (!flavor) continue;
    auto port = QueryApiPort(svc, *flavor);
    if (!port) continue;
    QueryApiCandidate c;
    c.namespace_ = svc.namespace_;
    c.service = svc.name;
    c.port = std::to_string(port->first.port);
    c.port_number = port->first.port;
    c.cluster_ip = svc.cluster_ip;
    c.port_source = port->second;
    c.flavor = *flavor;
    c.why = "name matches " + std::string(QueryApiFlavorName(*flavor));
    found.push_back(std::move(c));
  }
  std::sort(found.begin(), found.end(), [](const QueryApiCandidate& a, const QueryApiCandidate& b) {
    return std::tuple(FlavorRank(a.flavor), a.namespace_, a.service) <
           std::tuple(FlavorRank(b.flavor), b.namespace_, b.service);
  });
  out.insert(out.end(), std::make_move_iterator(found.begin()),
             std::make_move_iterator(found.end()));
  return out;
}

std::string UrlEncodeQueryValue(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size() * 3);
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string QueryApiPath(const QueryApiCandidate& c, std::string_view promql) {
  std::string path =
      "/api/v1/namespaces/" + c.namespace_ + "/services/" + c.service + ":" + c.port + "/proxy/";
  std::string_view prefix = QueryApiPathPrefix(c.flavor);
  if (!prefix.empty()) path.append(prefix).push_back('/');
  path += "api/v1/query?query=";
  path += UrlEncodeQueryValue(promql);
  return path;
}

sources::PodLookup PodLookupFor(const kube::ClusterObjects& objects) {
  sources::PodLookup lookup;
  lookup.is_exporter = [&objects](std::string_view ns, std::string_view pod) {
    const kube::Pod* p = objects.FindPod(std::string(ns), std::string(pod));
    if (!p) return LooksLikeExporterName(pod);
    if (RequestsNvidiaResource(*p)) return false;  // a GPU workload, not its exporter
    return LooksLikeExporterName(pod) || ExporterKeywordMatch(*p).has_value();
  };
  lookup.node_of = [&objects](std::string_view ns, std::string_view pod) {
    const kube::Pod* p = objects.FindPod(std::string(ns), std::string(pod));
    return p ? p->node_name : std::string();
  };
  return lookup;
}

trust::QueryTargetContext TargetContext(const kube::ClusterObjects& objects,
                                        const trust::ExporterTrustConfig& exporter_trust,
                                        const std::vector<PodPin>& pod_pins, bool api_pinned) {
  trust::QueryTargetContext ctx;
  ctx.objects = &objects;
  ctx.config = exporter_trust;
  ctx.api_pinned = api_pinned;
  ctx.pinned = [pins = pod_pins](const kube::Pod& pod) {
    return std::any_of(pins.begin(), pins.end(), [&](const PodPin& pin) {
      return pin.namespace_ == pod.namespace_ && pod.name.starts_with(pin.pod_prefix);
    });
  };
  std::shared_ptr<const kube::DraGpuIndex> dra;  // built only when some claim exists
  if (!objects.resource_claims.empty())
    dra = std::make_shared<const kube::DraGpuIndex>(kube::IndexDraGpus(objects));
  ctx.holds_gpu = [dra](const kube::Pod& pod) {
    return RequestsNvidiaResource(pod) || (dra && dra->holders.count(pod.Id()) > 0);
  };
  return ctx;
}

ProbeVerdict JudgeQueryApiProbe(const QueryApiCandidate& candidate, const FetchFacts& fetch,
                                std::string_view body) {
  if (!fetch.ok) return FailedFetchVerdict(fetch);
  ProbeVerdict v;
  v.http_status = fetch.http_status;
  auto decoded = sources::DecodeQueryResponse(body, QueryApiSource(candidate));
  if (!decoded) {
    v.outcome = Outcome::kUnrecognised;
    v.reason = "unrecognised: " + decoded.error().message;
    return v;
  }
  std::vector<std::string> families;
  double series = 0;
  bool dcgm = false;
  for (const sources::QuerySeries& s : decoded->series) {
    auto name = std::find_if(s.labels.begin(), s.labels.end(),
                             [](const auto& l) { return l.first == "__name__"; });
    if (name == s.labels.end() || !(s.value > 0)) continue;
    families.push_back(name->second);
    series += s.value;
    dcgm = dcgm || sources::IsDcgmFamily(name->second);
  }
  if (families.empty()) {
    v.outcome = Outcome::kUnrecognised;
    v.reason = "unrecognised: the query API holds no dcgm-exporter or per-process GPU series";
    return v;
  }
  std::sort(families.begin(), families.end());
  v.outcome = candidate.pinned ? Outcome::kPinned : Outcome::kAccepted;
  v.kind = dcgm ? sources::BodyKind::kDcgm : sources::BodyKind::kProcess;
  v.reason = std::string(QueryApiFlavorName(candidate.flavor)) +
             " query API: " + std::to_string(static_cast<uint64_t>(series)) + " series in " +
             std::to_string(families.size()) + " families (" + families.front() +
             (families.size() > 1 ? ", ..." : "") + ")";
  return v;
}

QueryApiRead QueryApiFallback::Plan(const kube::ClusterObjects& objects,
                                    const std::vector<ServicePin>& pins, TimePoint now,
                                    bool preferred) {
  planned_ = Planned{};
  planned_.pins = pins;
  planned_.preferred = preferred;
  std::vector<QueryApiCandidate> candidates = QueryApiCandidates(objects, pins);

  // Forget services that are gone (or whose port changed).
  std::set<std::string> keys;
  for (const auto& c : candidates) keys.insert(c.Key());
  for (auto it = entries_.begin(); it != entries_.end();)
    it = keys.count(it->first) ? std::next(it) : entries_.erase(it);
  planned_.count = candidates.size();
  // Untrusted services are never asked (docs/design.md#trust): listed with how to trust them.
  std::erase_if(candidates, [&](const QueryApiCandidate& c) {
    if (TrustedQueryApi(c, options_)) return false;
    ProbeVerdict v;
    v.outcome = Outcome::kUntrusted;
    v.reason =
        "untrusted (not probed): " + trust::HowToTrustQueryApi(c.namespace_, c.service, c.port);
    planned_.untrusted.push_back({AsCandidate(c), std::move(v), 0, false});
    return true;
  });
  probed_now_.clear();

  QueryApiRead read;
  read.probe_timeout = options_.probe_timeout;
  read.query_timeout = options_.query_timeout;
  read.max_body_bytes = options_.max_body_bytes;
  read.limits = options_.limits;
  read.exporter_trust = options_.exporter_trust;
  read.pod_pins = options_.pod_pins;
  auto target = [](const QueryApiCandidate& c) {
    return QueryApiTarget{c, QueryApiPath(c, sources::ProbeQuery()),
                          QueryApiPath(c, sources::DataQuery())};
  };
  // An API chosen earlier stays chosen while its verdict is valid (its queries succeed); else the
  // candidates without a valid verdict are probed in order, at most max_probes, until one has the
  // GPU series.
  auto valid = [&](const std::string& key) {
    auto it = entries_.find(key);
    return it != entries_.end() && it->second.expires > now ? &it->second : nullptr;
  };
  for (const auto& c : candidates)
    if (const QueryApiEntry* e = valid(c.Key()); e && IsAccepted(e->verdict.outcome)) {
      read.chosen = target(c);
      break;
    }
  for (const auto& c : candidates) {
    if (read.chosen || read.probes.size() >= options_.max_probes) break;
    if (!valid(c.Key())) read.probes.push_back(target(c));  // younger verdicts: not probed again
  }
  planned_.candidates = std::move(candidates);
  return read;
}

namespace {

void Note403(const FetchFacts& f, QueryApiResult& out) {
  if (f.http_status == 403 &&
      std::find(out.errors.begin(), out.errors.end(), f.error) == out.errors.end())
    out.errors.push_back(f.error);
}

}  // namespace

QueryApiResult QueryApiFallback::Record(const QueryApiReadOutcome& outcome, TimePoint now,
                                        double now_unix) {
  QueryApiResult out;
  out.searched = true;
  out.candidates = planned_.count;
  for (const QueryApiProbeOutcome& p : outcome.probes) {
    ++out.probed_this_cycle;
    Note403(p.fetch, out);
    const std::string key = p.candidate.Key();
    entries_[key] = QueryApiEntry{
        p.candidate,  p.verdict, now + options_.ttl, now_unix, p.fetch.duration_seconds,
        p.fetch.bytes};
    probed_now_.insert(key);
  }
  if (outcome.queried) {
    const std::string key = outcome.queried->Key();
    out.chosen = key;
    Note403(outcome.query, out);
    if (outcome.answered)
      entries_[key].expires = now + options_.ttl;
    else
      entries_.erase(key);
    out.readings = outcome.readings;
    out.exporters.push_back(outcome.status);
  }
  Report(planned_.candidates, planned_.pins, planned_.preferred, out);
  for (const ProbeRecord& p : planned_.untrusted) out.probes.push_back(p);
  return out;
}

// What the status page shows: pins whose probe failed (query APIs that are down; unpinned failures
// are only probes), every cached verdict, and a note per pin.
void QueryApiFallback::Report(const std::vector<QueryApiCandidate>& candidates,
                              const std::vector<ServicePin>& pins, bool preferred,
                              QueryApiResult& out) const {
  for (const auto& c : candidates) {
    if (!c.pinned || c.Key() == out.chosen) continue;
    auto it = entries_.find(c.Key());
    if (it == entries_.end() || it->second.verdict.outcome != Outcome::kError) continue;
    ExporterStatus st;
    st.namespace_ = c.namespace_;
    st.pod = c.service;
    st.port = c.port_number;
    st.kind = "prometheus";
    st.http_status = it->second.verdict.http_status;
    st.reason = it->second.verdict.reason;
    st.duration_seconds = it->second.duration_seconds;
    st.bytes = it->second.bytes;
    out.exporters.push_back(std::move(st));
  }
  for (const auto& [key, e] : entries_)
    out.probes.push_back(
        {AsCandidate(e.candidate), e.verdict, e.probed_unix, probed_now_.count(key) > 0});
  for (const ServicePin& pin : pins) {
    const std::string key = ServiceKey(pin.namespace_, pin.service, pin.port);
    std::string note;
    if (key == out.chosen)
      note = preferred ? "queried: on this large cluster the GPU series come from this query API "
                         "instead of one proxy GET per exporter"
                       : "queried: no exporter pod answers, so GPU series come from this query API";
    else if (auto it = entries_.find(key); it != entries_.end())
      note =
          std::string(OutcomeName(it->second.verdict.outcome)) + ": " + it->second.verdict.reason;
    else
      note = "not probed yet (at most " + std::to_string(options_.max_probes) +
             " query-API probes per cycle)";
    out.pin_notes[pin.text] = note;
  }
}

}  // namespace gpuattr::discovery

namespace gpuattr::discovery {

bool TrustedQueryApi(const QueryApiCandidate& candidate, const QueryApiOptions& options) {
  return trust::QueryApiTrusted(candidate.namespace_, candidate.pinned, options.trusted_namespaces);
}

size_t CountGpuNodes(const kube::ClusterObjects& objects) {
  std::set<std::string_view> nodes;
  auto nvidia = [](const kube::ResourceList& list) {
    return std::any_of(list.begin(), list.end(),
                       [](const auto& kv) { return kv.first.starts_with("nvidia.com/"); });
  };
  for (const auto& [name, node] : objects.nodes)
    if (nvidia(node.capacity) || nvidia(node.allocatable)) nodes.insert(name);
  for (const auto& [name, slice] : objects.resource_slices)
    if (slice.driver == "gpu.nvidia.com" && !slice.node_name.empty() && !slice.devices.empty())
      nodes.insert(slice.node_name);
  return nodes.size();
}

bool PreferQueryApi(size_t gpu_nodes, size_t above_gpu_nodes) {
  return above_gpu_nodes > 0 && gpu_nodes > above_gpu_nodes;
}

std::string_view ReadPathName(ReadPath path) {
  return path == ReadPath::kQueryApi ? "query_api" : "exporters";
}

ReadPathChoice DescribeReadPath(const ReadPathFacts& f) {
  const std::string nodes =
      std::to_string(f.gpu_nodes) + " GPU node" + (f.gpu_nodes == 1 ? "" : "s");
  const std::string limit =
      std::to_string(f.above_gpu_nodes) + " (discovery.query_api_above_gpu_nodes)";
  ReadPathChoice c;
  if (!f.preferred_api.empty()) {
    c.path = ReadPath::kQueryApi;
    c.reason = "preferred";
    c.detail = nodes + ", more than " + limit +
               ": the GPU series come from the trusted query API " + f.preferred_api +
               ", one query per cycle instead of a proxy GET per exporter";
    return c;
  }
  if (!f.fallback_api.empty()) {
    c.path = ReadPath::kQueryApi;
    c.reason = "fallback";
    c.detail = "no exporter pod answered: the GPU series come from the query API " + f.fallback_api;
    return c;
  }
  if (f.above_gpu_nodes == 0) {
    c.reason = "disabled";
    c.detail = nodes + "; discovery.query_api_above_gpu_nodes is 0: one proxy GET per exporter";
  } else if (!PreferQueryApi(f.gpu_nodes, f.above_gpu_nodes)) {
    c.reason = "below_threshold";
    c.detail = nodes + ", at most " + limit + ": one proxy GET per exporter";
  } else {
    c.reason = "no_trusted_query_api";
    c.detail = nodes + ", more than " + limit +
               ", but no trusted query API answered with the GPU series: one proxy GET per "
               "exporter (pin one with --target ns/svc/name:port)";
  }
  return c;
}

}  // namespace gpuattr::discovery
