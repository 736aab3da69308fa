// The status page's exporters and probes: per cluster a summary line, and the discovery section
// (what was listed and probed, the read path, exporters, probes, pins), all from the view's rows.
#include <cstdio>
#include <string>

#include "gpuattr/report/status_page.h"
#include "gpuattr/report/text_format.h"
#include "html.h"

namespace gpuattr::report {
namespace {

std::string Ago(double then, double now) {
  if (then <= 0) return "never";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f s ago", now - then > 0 ? now - then : 0.0);
  return buf;
}

std::string Td(const std::string& text) { return "<td>" + HtmlEscape(text) + "</td>"; }

// What discovery listed, probed and skipped, how it read the GPU series, and what to do.
std::string Summary(const discovery::DiscoveryReport& r) {
  std::string h = "<h3>Discovery: " + HtmlEscape(r.cluster) + "</h3>\n<p>" +
                  std::to_string(r.pods_listed) + " pods and " + std::to_string(r.nodes_listed) +
                  " nodes listed; " + std::to_string(r.candidates) + " candidates, " +
                  std::to_string(r.probed_this_cycle) + " probed this cycle. " +
                  (r.gpu_present ? "GPU presence: " : "Not probing: ") +
                  HtmlEscape(r.gpu_presence) + "</p>\n";
  if (!r.read_path_reason.empty())
    h += "<p>GPU series read from " +
         std::string(r.read_path == "query_api" ? "a query API" : "the exporters") + " (" +
         HtmlEscape(r.read_path_reason) + "): " + HtmlEscape(r.read_path_detail) +
         (r.shard.empty() ? "" : ". " + HtmlEscape(r.shard)) + "</p>\n";
  h += "<p>" + std::to_string(r.skipped_no_port) +
       " pods skipped: no declared port and no prometheus.io/port annotation (never probed). " +
       std::to_string(r.waiting_first_probe) + " inference candidates wait for a first probe, " +
       std::to_string(r.waiting_reprobe) +
       " for a re-probe (budget: " + std::to_string(r.inference_probe_budget) +
       " inference probes per cycle).</p>\n";
  if (!r.nothing_found.empty())
    h += "<p class=\"warn\"><b>" + HtmlEscape(r.nothing_found) + "</b></p>\n";
  if (r.rediscovery_next_cycle)
    h += "<p>A known exporter failed: discovery runs again next cycle.</p>\n";
  return h;
}

std::string Exporters(const StatusView& v, const DiscoveryRow& d) {
  std::string h =
      "<h4>Exporters</h4>\n<table><tr><th>namespace</th><th>pod</th><th>node</th><th>port</th>"
      "<th>kind</th><th>up</th><th>HTTP</th><th>duration</th><th>bytes</th><th>parse errors</th>"
      "<th>rejected lines</th><th>reason</th></tr>\n";
  for (size_t i = d.first_exporter; i < d.first_exporter + d.exporters; ++i) {
    const ExporterRow& row = v.exporters[i];
    const discovery::ExporterStatus& e = *row.status;
    char dur[32];
    std::snprintf(dur, sizeof dur, "%.3f s", e.duration_seconds);
    h += "<tr>" + Td(e.namespace_) + Td(e.pod) + Td(e.node) + Td(std::to_string(e.port)) +
         Td(e.kind) + Td(e.up ? "1" : "0") +
         Td(e.http_status ? std::to_string(e.http_status) : "-") + Td(dur) +
         Td(std::to_string(e.bytes)) + Td(std::to_string(e.parse_errors)) +
         Td(std::to_string(row.rejected_lines)) + Td(e.reason) + "</tr>\n";
  }
  return h + "</table>\n";
}

std::string Probes(const StatusView& v, const DiscoveryRow& d) {
  std::string h =
      "<h4>Probed candidates</h4>\n<table><tr><th>candidate</th><th>node</th><th>role</th>"
      "<th>port from</th><th>why</th><th>outcome</th><th>reason</th><th>probed</th></tr>\n";
  for (size_t i = d.first_probe; i < d.first_probe + d.probes; ++i) {
    const ProbeRow& row = v.probes[i];
    const discovery::Candidate& c = row.probe->candidate;
    h += "<tr>" + Td(row.candidate) + Td(c.node) + Td(std::string(discovery::RoleName(c.role))) +
         Td(c.port_source) + Td(c.why) + Td(row.outcome) + Td(row.probe->verdict.reason) +
         Td(Ago(row.probe->probed_unix, v.generated_unix)) + "</tr>\n";
  }
  return h + "</table>\n";
}

std::string Pins(const discovery::DiscoveryReport& r) {
  std::string h = "<h4>Pins</h4>\n";
  if (r.pins.empty()) return h + "<p>none (add one with --target ns/pod-prefix:port)</p>\n";
  h += "<table><tr><th>target</th><th>kind</th><th>status</th></tr>\n";
  for (const auto& p : r.pins) h += "<tr>" + Td(p.text) + Td(p.kind) + Td(p.note) + "</tr>\n";
  return h + "</table>\n";
}

// "N exporters, U up; P candidates probed (1 accepted, 2 error)." and the untrusted warning.
std::string ClusterLine(const DiscoveryRow& d) {
  std::string outcomes;
  for (const auto& [outcome, count] : d.report->outcome_counts)
    if (count) outcomes += (outcomes.empty() ? "" : ", ") + std::to_string(count) + " " + outcome;
  std::string h = "<p><b>" + HtmlEscape(d.cluster) +
                  "</b>: " + Plural(d.exporters, "exporter", "exporters") + ", " +
                  std::to_string(d.exporters_up) + " up; " +
                  HtmlEscape(Plural(d.probes, "candidate probed", "candidates probed")) +
                  (outcomes.empty() ? "" : " (" + HtmlEscape(outcomes) + ")") + ".</p>\n";
  // Untrusted candidates look like GPU exporters but may not speak for GPUs
  // (docs/design.md#trust): say so.
  if (d.untrusted > 0)
    h += "<p class=\"warn\">" + HtmlEscape(Plural(d.untrusted, "candidate", "candidates")) +
         " may not speak for GPUs: not read (untrusted). Each probe's reason below says how "
         "to trust it.</p>\n";
  return h;
}

}  // namespace

std::string RenderDiscoverySection(const StatusView& v, const DiscoveryRow& d) {
  return Summary(*d.report) + Exporters(v, d) + Probes(v, d) + Pins(*d.report);
}

std::string RenderDiscoverySection(const discovery::DiscoveryReport& report, double now_unix) {
  const StatusView v = BuildDiscoveryView(report, now_unix);
  return RenderDiscoverySection(v, v.discovery.front());
}

namespace page {

std::string ExportersSection(const StatusView& v) {
  if (v.discovery.empty())
    return Section("exporters", "Exporters and probes",
                   "<p class=\"muted\" id=\"exporters-none\">Discovery has not run yet (no cluster "
                   "has answered).</p>\n");
  std::string h;
  for (const DiscoveryRow& d : v.discovery) {
    const bool open = d.exporters_up < d.exporters || d.exporters == 0 || d.untrusted > 0;
    h += ClusterLine(d) + "<details" + std::string(open ? " open" : "") +
         "><summary>Exporters, every probe and its reason, pins</summary><div class=\"scroll\">" +
         RenderDiscoverySection(v, d) + "</div></details>\n";
  }
  return Section("exporters", "Exporters and probes", h);
}

}  // namespace page
}  // namespace gpuattr::report
