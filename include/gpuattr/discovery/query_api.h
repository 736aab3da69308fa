// The Prometheus-compatible query-API fallback (docs/design.md#query-apis and
// docs/design.md#discovery, docs/fallback.md).
//
// When no dcgm/process exporter pod of the cluster answered in a cycle, gpuattr looks for a query
// API among the Services (Prometheus, Thanos query, VictoriaMetrics vmsingle/vmselect, Mimir
// query-frontend), pinned services first, with at most `max_probes` `count by (__name__)` probes
// per cycle and every verdict cached for 60 s. The first service whose probe finds the needed
// families is chosen; each cycle then makes one instant query through the service proxy and turns
// the answer into per-node exporter readings (sources/promapi.h).
//
// Candidate selection and paths are pure functions; QueryApiFallback holds the cache and decides
// what to read (Plan), and learns from what was read (Record); scrape/read.h makes the GETs. Not
// thread-safe: one cycle at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/discovery/pins.h"
#include "gpuattr/discovery/probe.h"
#include "gpuattr/discovery/report.h"
#include "gpuattr/kube/objects.h"
#include "gpuattr/sources/limits.h"
#include "gpuattr/sources/promapi.h"
#include "gpuattr/trust/query_target.h"
#include "gpuattr/trust/rules.h"
#include "gpuattr/util/clock.h"

namespace gpuattr::discovery {

enum class QueryApiFlavor : uint8_t {
  kThanosQuery,
  kPrometheus,
  kVictoriaSingle,
  kVictoriaSelect,
  kMimir
};
std::string_view QueryApiFlavorName(QueryApiFlavor flavor);  // "thanos-query", "prometheus", ...

// What a service name says it is; nullopt when it is no query API (alertmanager, node-exporter,
// operator, vminsert, ...). Case-insensitive.
std::optional<QueryApiFlavor> QueryApiFlavorOf(std::string_view service_name);
// Where the flavor serves /api/v1/query below the service root: "" for Prometheus, Thanos and
// vmsingle, "select/0/prometheus" for vmselect (tenant 0), "prometheus" for Mimir.
std::string_view QueryApiPathPrefix(QueryApiFlavor flavor);

struct QueryApiCandidate {
  std::string namespace_;
  std::string service;
  std::string port;         // as put in the URL: a number, or a pin's port name
  int32_t port_number = 0;  // 0 when a pin names a port the service does not list
  // The Service's spec.clusterIP, where a direct read goes in the cluster ("" unknown, "None"
  // headless: such a service is read through the service proxy only).
  std::string cluster_ip;
  std::string port_source;  // "named http-web", "9090", "named http", "only port", "pin"
  QueryApiFlavor flavor = QueryApiFlavor::kPrometheus;
  bool pinned = false;
  std::string why;  // "name matches thanos-query", "pin monitoring/svc/x:9090"

  std::string Key() const;  // "namespace/service:port"
};

// The port to query on a candidate service: named http-web or web, else the flavor's usual port
// (9090; 10902 and 9090 for Thanos; 8428 vmsingle; 8481 vmselect; 8080 Mimir), else named http,
// else the only port. nullopt: none fits.
std::optional<std::pair<kube::ServicePort, std::string>> QueryApiPort(const kube::Service& service,
                                                                      QueryApiFlavor flavor);

// Pinned services first (in the order given), then services whose name marks a query API, by
// flavor (Thanos query, Prometheus, vmsingle, vmselect, Mimir), namespace and name.
std::vector<QueryApiCandidate> QueryApiCandidates(const kube::ClusterObjects& objects,
                                                  const std::vector<ServicePin>& pins);

// "query API namespace/service:port": how messages about its answers name it.
std::string QueryApiSource(const QueryApiCandidate& candidate);

// application/x-www-form-urlencoded value encoding (RFC 3986 unreserved kept, the rest %XX).
std::string UrlEncodeQueryValue(std::string_view value);
// "/api/v1/namespaces/NS/services/NAME:PORT/proxy/[PREFIX/]api/v1/query?query=ENCODED"
std::string QueryApiPath(const QueryApiCandidate& candidate, std::string_view promql);

// Label repair's view of the cluster: a pod is the exporter itself when it looks like a GPU
// exporter (keyword match) and requests no nvidia.com/ resource; an unknown pod when its name
// contains "exporter" or "dcgm".
sources::PodLookup PodLookupFor(const kube::ClusterObjects& objects);

struct QueryApiOptions {
  // Above this many GPU nodes, a trusted query API with the GPU series is read instead of one
  // proxy GET per exporter (config discovery.query_api_above_gpu_nodes; 0: never preferred, the
  // query API is then only the fallback when no exporter answers).
  size_t prefer_above_gpu_nodes = 200;
  // Services in these namespaces are trusted query APIs (pins always are); see TrustedQueryApi.
  // Untrusted ones are never queried (docs/design.md#trust).
  std::vector<std::string> trusted_namespaces = trust::DefaultQueryApiNamespaces();
  size_t max_probes = 6;  // per cycle
  std::chrono::milliseconds ttl{std::chrono::seconds(60)};
  std::chrono::milliseconds probe_timeout{5000};
  std::chrono::milliseconds query_timeout{15000};
  // One answer covers every node, hence a cap of its own (scrape.limits.query_api_body_bytes);
  // the per-node limits apply to each node's share of it.
  size_t max_body_bytes = 64u << 20;
  sources::BodyLimits limits;
  // Each series' scrape target must pass the exporters' rule: pinned (these pod pins), a trust
  // rule, or a DaemonSet in an exporter namespace (trust/query_target.h). Set by Discovery.
  trust::ExporterTrustConfig exporter_trust;
  std::vector<PodPin> pod_pins;
};

struct QueryApiEntry {
  QueryApiCandidate candidate;
  ProbeVerdict verdict;
  std::chrono::steady_clock::time_point expires;
  double probed_unix = 0;
  double duration_seconds = 0;
  uint64_t bytes = 0;
};

// One query API as the reader sees it: where its probe (count by __name__ of the GPU families)
// and its data query go.
struct QueryApiTarget {
  QueryApiCandidate candidate;
  std::string probe_path;  // QueryApiPath(candidate, sources::ProbeQuery())
  std::string query_path;  // QueryApiPath(candidate, sources::DataQuery())
};

// What the fallback decided to read in one cycle: query `chosen` (an API chosen in an earlier
// cycle whose verdict is still valid), or probe `probes` in order until one has the GPU series
// (JudgeQueryApiProbe), then query that one.
struct QueryApiRead {
  std::optional<QueryApiTarget> chosen;
  std::vector<QueryApiTarget> probes;  // without a valid verdict, at most max_probes
  std::chrono::milliseconds probe_timeout{5000};
  std::chrono::milliseconds query_timeout{15000};
  size_t max_body_bytes = 64u << 20;  // one answer covers every node
  sources::BodyLimits limits;         // per node of the answer
  // Who may be a series' scrape target (QueryApiOptions::exporter_trust, pod_pins).
  trust::ExporterTrustConfig exporter_trust;
  std::vector<PodPin> pod_pins;
};

// What JudgeQueryTarget needs of the cluster for the chosen API's series: the exporter rule, the
// pod pins, and who holds a GPU (resources or DRA).
trust::QueryTargetContext TargetContext(const kube::ClusterObjects& objects,
                                        const trust::ExporterTrustConfig& exporter_trust,
                                        const std::vector<PodPin>& pod_pins, bool api_pinned);

struct QueryApiProbeOutcome {
  QueryApiCandidate candidate;
  FetchFacts fetch;
  ProbeVerdict verdict;
};

// What a QueryApiRead found, as the fallback needs it back (the readings stay with the reader).
struct QueryApiReadOutcome {
  std::vector<QueryApiProbeOutcome> probes;  // in order: the last one chose when one did
  std::optional<QueryApiCandidate> queried;  // none: nothing chosen, or a shutdown came first
  FetchFacts query;                          // the query's fetch
  bool answered = false;                     // the query's answer was read
  size_t readings = 0;                       // per-node readings the answer gave
  ExporterStatus status;                     // the queried API's row (kind "prometheus")
};

// What the fallback did in one cycle.
struct QueryApiResult {
  bool searched = false;  // the fallback ran (no exporter pod answered)
  size_t candidates = 0;  // services that are candidates (pins included)
  size_t probed_this_cycle = 0;
  std::vector<ProbeRecord> probes;               // every cached verdict, for the status page
  std::vector<ExporterStatus> exporters;         // the chosen API (kind "prometheus"), failed pins
  size_t readings = 0;                           // per node and kind, from the chosen API
  std::vector<std::string> errors;               // 403s on services/proxy
  std::map<std::string, std::string> pin_notes;  // by pin text
  std::string chosen;                            // key of the API queried this cycle, if any
};

class QueryApiFallback {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  explicit QueryApiFallback(QueryApiOptions options = {}) : options_(options) {}

  // The fallback's share of a cycle, in two steps. Plan decides what to read: the API chosen
  // earlier, else the candidates to probe. Only trusted query APIs (TrustedQueryApi) are probed
  // and read; the others are listed with the outcome "untrusted" and how to trust them, without
  // a request. `preferred`: the API is read instead of the exporters on a large cluster (the
  // pins' notes say so).
  QueryApiRead Plan(const kube::ClusterObjects& objects, const std::vector<ServicePin>& pins,
                    TimePoint now, bool preferred = false);
  // What the planned read found: verdicts into the cache; a failed query forgets the choice, so
  // the next cycle searches again.
  QueryApiResult Record(const QueryApiReadOutcome& outcome, TimePoint now, double now_unix);

  const std::map<std::string, QueryApiEntry>& entries() const { return entries_; }
  const QueryApiOptions& options() const { return options_; }

 private:
  // What Plan decided, for Record.
  struct Planned {
    std::vector<QueryApiCandidate> candidates;  // the trusted ones
    std::vector<ProbeRecord> untrusted;
    std::vector<ServicePin> pins;
    size_t count = 0;  // every candidate, untrusted ones included
    bool preferred = false;
  };

  void Report(const std::vector<QueryApiCandidate>& candidates, const std::vector<ServicePin>& pins,
              bool preferred, QueryApiResult& out) const;

  QueryApiOptions options_;
  std::map<std::string, QueryApiEntry> entries_;  // by QueryApiCandidate::Key()
  Planned planned_;
  std::set<std::string> probed_now_;  // keys probed in the running cycle
};

// Pure: the probe's verdict from its answer (`body`, when fetch.ok: count by __name__ of the
// needed families).
ProbeVerdict JudgeQueryApiProbe(const QueryApiCandidate& candidate, const FetchFacts& fetch,
                                std::string_view body);

// Pure: whether a query API may speak for the cluster's GPUs (as the fallback, or instead of the
// exporters of a large cluster): it is pinned, or its Service is in one of
// options.trusted_namespaces (docs/design.md#trust).
bool TrustedQueryApi(const QueryApiCandidate& candidate, const QueryApiOptions& options);

// ---- Which path a cluster's GPU series are read by (docs/design.md#query-api-at-scale,
// docs/deploy.md).

// GPU nodes: nodes that advertise an nvidia.com/ resource (capacity or allocatable, even at 0),
// and nodes with a ResourceSlice of the gpu.nvidia.com driver. Pure.
size_t CountGpuNodes(const kube::ClusterObjects& objects);

// Pure: above `above_gpu_nodes` (0: never) GPU nodes, a cycle looks for a trusted query API first.
bool PreferQueryApi(size_t gpu_nodes, size_t above_gpu_nodes);

enum class ReadPath : uint8_t { kExporters, kQueryApi };
std::string_view ReadPathName(ReadPath path);  // "exporters", "query_api"

// What decided a cycle's path.
struct ReadPathFacts {
  size_t gpu_nodes = 0;        // in the whole cluster (every shard counts the same)
  size_t above_gpu_nodes = 0;  // QueryApiOptions::prefer_above_gpu_nodes
  std::string preferred_api;   // the trusted query API that answered when preferred ("" none)
  std::string fallback_api;    // the query API read because no exporter answered ("" none)
};

struct ReadPathChoice {
  ReadPath path = ReadPath::kExporters;
  // For the gpuattr_discovery_read_path metric: preferred (a trusted query API, above the
  // threshold), fallback (no exporter answered), below_threshold, disabled (threshold 0),
  // no_trusted_query_api (above the threshold, but none answered with the GPU series).
  std::string reason;
  std::string detail;  // the same for people (status page)
};

// Pure.
ReadPathChoice DescribeReadPath(const ReadPathFacts& facts);

}  // namespace gpuattr::discovery
