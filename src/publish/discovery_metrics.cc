#include "gpuattr/publish/discovery_metrics.h"

#include <cstdio>

#include "gpuattr/publish/status_page.h"

namespace gpuattr::publish {
namespace {

using prometheus::MetricType;

constexpr FamilySpec kExporterUp{
    "gpuattr_exporter_up", MetricType::Gauge,
    "1 when the latest scrape of this exporter (pod proxy, or a query API for "
    "kind=\"prometheus\") succeeded, 0 when it failed (kind=\"unknown\" until classified)."};
constexpr FamilySpec kScrapeDuration{"gpuattr_exporter_scrape_duration_seconds", MetricType::Gauge,
                                     "Duration of the latest scrape of this exporter, in seconds."};
constexpr FamilySpec kScrapeBytes{"gpuattr_exporter_scrape_bytes", MetricType::Gauge,
                                  "Body size of the latest scrape of this exporter, in bytes."};
constexpr FamilySpec kParseErrors{"gpuattr_exporter_parse_errors", MetricType::Gauge,
                                  "Malformed lines in the latest scrape of this exporter."};
constexpr FamilySpec kRejectedLines{
    "gpuattr_exporter_rejected_lines", MetricType::Gauge,
    "Lines of the latest scrape of this exporter that gpuattr dropped, by reason: unknown_pod, "
    "pod_on_other_node (a per-pod label naming no pod of the exporter's node), duplicate_device "
    "(a device, by UUID or by GPU index on the node, another exporter of the kind reports), "
    "bad_value (out of range), "
    "unknown_node (a query API's series for no node of the cluster)."};
constexpr FamilySpec kCandidates{
    "gpuattr_discovery_candidates", MetricType::Gauge,
    "Discovery candidates by outcome: the probe outcomes (accepted, unrecognised, error, pinned, "
    "untrusted: a GPU body from a pod that may not speak for one), no_port (never probed: no "
    "declared port nor prometheus.io/port annotation) and waiting "
    "(not probed yet: the per-cycle inference probe budget)."};

constexpr FamilySpec kReadPath{
    "gpuattr_discovery_read_path", MetricType::Gauge,
    "1 for how the latest cycle read the GPU series: path=\"exporters\" (one pod-proxy GET per "
    "exporter) or path=\"query_api\" (a Prometheus-compatible query API), and why (reason: "
    "below_threshold, disabled, preferred, no_trusted_query_api, fallback)."};

constexpr FamilySpec kSpecs[] = {kExporterUp,    kScrapeDuration, kScrapeBytes, kParseErrors,
                                 kRejectedLines, kCandidates,     kReadPath};

std::string Ago(double then, double now) {
  if (then <= 0) return "never";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f s ago", now - then > 0 ? now - then : 0.0);
  return buf;
}

std::string Td(const std::string& text) { return "<td>" + HtmlEscape(text) + "</td>"; }

uint64_t Total(const std::map<std::string, uint64_t>& by_reason) {
  uint64_t n = 0;
  for (const auto& [reason, count] : by_reason) n += count;
  return n;
}

}  // namespace

std::span<const FamilySpec> DiscoveryFamilySpecs() { return kSpecs; }

void AddDiscoveryFamilies(const discovery::DiscoveryReport& report, FamilyWriter& writer) {
  for (const discovery::ExporterStatus& e : report.exporters) {
    Labels l{{"cluster", report.cluster},
             {"namespace", e.namespace_},
             {"pod", e.pod},
             {"node", e.node},
             {"kind", e.kind}};
    writer.Add(kExporterUp, l, e.up ? 1 : 0);
    writer.Add(kScrapeDuration, l, e.duration_seconds);
    writer.Add(kScrapeBytes, l, static_cast<double>(e.bytes));
    writer.Add(kParseErrors, l, static_cast<double>(e.parse_errors));
    for (const auto& [reason, n] : e.rejected) {
      Labels r = l;
      r.emplace("reason", reason);
      writer.Add(kRejectedLines, r, static_cast<double>(n));
    }
  }
  for (const auto& [outcome, n] : report.outcome_counts)
    writer.Add(kCandidates, {{"cluster", report.cluster}, {"outcome", outcome}},
               static_cast<double>(n));
  if (!report.read_path_reason.empty())
    writer.Add(kReadPath,
               {{"cluster", report.cluster},
                {"path", report.read_path},
                {"reason", report.read_path_reason}},
               1);
}

std::string RenderDiscoverySection(const discovery::DiscoveryReport& report, double now_unix) {
  std::string h = "<h3>Discovery: " + HtmlEscape(report.cluster) + "</h3>\n<p>" +
                  std::to_string(report.pods_listed) + " pods and " +
                  std::to_string(report.nodes_listed) + " nodes listed; " +
                  std::to_string(report.candidates) + " candidates, " +
                  std::to_string(report.probed_this_cycle) + " probed this cycle. " +
                  (report.gpu_present ? "GPU presence: " : "Not probing: ") +
                  HtmlEscape(report.gpu_presence) + "</p>\n";
  if (!report.read_path_reason.empty())
    h += "<p>GPU series read from " +
         std::string(report.read_path == "query_api" ? "a query API" : "the exporters") + " (" +
         HtmlEscape(report.read_path_reason) + "): " + HtmlEscape(report.read_path_detail) +
         (report.shard.empty() ? "" : ". " + HtmlEscape(report.shard)) + "</p>\n";
  h += "<p>" + std::to_string(report.skipped_no_port) +
       " pods skipped: no declared port and no prometheus.io/port annotation (never probed). " +
       std::to_string(report.waiting_first_probe) +
       " inference candidates wait for a first probe, " + std::to_string(report.waiting_reprobe) +
       " for a re-probe (budget: " + std::to_string(report.inference_probe_budget) +
       " inference probes per cycle).</p>\n";
  if (!report.nothing_found.empty())
    h += "<p class=\"warn\"><b>" + HtmlEscape(report.nothing_found) + "</b></p>\n";
  if (report.rediscovery_next_cycle)
    h += "<p>A known exporter failed: discovery runs again next cycle.</p>\n";

  h += "<h4>Exporters</h4>\n<table><tr><th>namespace</th><th>pod</th><th>node</th><th>port</th>"
       "<th>kind</th><th>up</th><th>HTTP</th><th>duration</th><th>bytes</th><th>parse errors</th>"
       "<th>rejected lines</th><th>reason</th></tr>\n";
  for (const auto& e : report.exporters) {
    char dur[32];
    std::snprintf(dur, sizeof dur, "%.3f s", e.duration_seconds);
    h += "<tr>" + Td(e.namespace_) + Td(e.pod) + Td(e.node) + Td(std::to_string(e.port)) +
         Td(e.kind) + Td(e.up ? "1" : "0") +
         Td(e.http_status ? std::to_string(e.http_status) : "-") + Td(dur) +
         Td(std::to_string(e.bytes)) + Td(std::to_string(e.parse_errors)) +
         Td(std::to_string(Total(e.rejected))) + Td(e.reason) + "</tr>\n";
  }
  h += "</table>\n";

  h += "<h4>Probed candidates</h4>\n<table><tr><th>candidate</th><th>node</th><th>role</th>"
       "<th>port from</th><th>why</th><th>outcome</th><th>reason</th><th>probed</th></tr>\n";
  for (const auto& p : report.probes) {
    h += "<tr>" + Td(p.candidate.Key()) + Td(p.candidate.node) +
         Td(std::string(discovery::RoleName(p.candidate.role))) + Td(p.candidate.port_source) +
         Td(p.candidate.why) + Td(std::string(discovery::OutcomeName(p.verdict.outcome))) +
         Td(p.verdict.reason) + Td(Ago(p.probed_unix, now_unix)) + "</tr>\n";
  }
  h += "</table>\n";

  h += "<h4>Pins</h4>\n";
  if (report.pins.empty()) {
    h += "<p>none (add one with --target ns/pod-prefix:port)</p>\n";
  } else {
    h += "<table><tr><th>target</th><th>kind</th><th>status</th></tr>\n";
    for (const auto& p : report.pins)
      h += "<tr>" + Td(p.text) + Td(p.kind) + Td(p.note) + "</tr>\n";
    h += "</table>\n";
  }
  return h;
}

const FamilyGroup kDiscoveryGroup{"discovery", kSpecs,
                                  [](const Snapshot& snapshot, FamilyWriter& writer) {
                                    for (const ClusterSnapshot& c : snapshot.clusters)
                                      if (c.latest.discovery)
                                        AddDiscoveryFamilies(*c.latest.discovery, writer);
                                  }};

}  // namespace gpuattr::publish
