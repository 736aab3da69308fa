#include "gpuattr/publish/status_page.h"

#include <cmath>
#include <cstdio>
#include <ctime>

#include "gpuattr/allocation/types.h"
#include "gpuattr/build_info.h"
#include "gpuattr/discovery/report.h"
#include "gpuattr/publish/discovery_metrics.h"
#include "gpuattr/publish/health.h"

namespace gpuattr::publish {
namespace {

std::string FormatUnix(double t) {
  std::time_t secs = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string FormatSeconds(double s) {
  char buf[32];
  if (s < 10)
    std::snprintf(buf, sizeof buf, "%.2f s", s);
  else
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  return buf;
}

std::string When(const std::optional<double>& t, double now) {
  if (!t) return "never";
  return FormatUnix(*t) + " (" + FormatSeconds(std::max(0.0, now - *t)) + " ago)";
}

constexpr const char* kStyle = R"(<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:70em}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}
.up{color:#080;font-weight:bold}.down{color:#b00;font-weight:bold}.muted{color:#777}
</style>)";

}  // namespace

namespace {

// Pending GPU pods with the hint of why they wait (allocation, DESIGN section 5).
std::string RenderPendingSection(const Snapshot& s) {
  std::string h = "<h2>Pending GPU pods</h2>\n";
  std::string rows;
  for (const ClusterSnapshot& c : s.clusters) {
    if (!c.latest.output) continue;
    for (const allocation::PendingPod& p : c.latest.output->allocation.pending) {
      rows += "<tr><td>" + HtmlEscape(c.cluster) + "</td><td>" +
              HtmlEscape(p.pod.namespace_ + "/" + p.pod.name) + "</td><td>" +
              (p.age_seconds ? FormatSeconds(*p.age_seconds) : std::string("-")) + "</td><td>" +
              HtmlEscape(p.hint.code) + "</td><td>" + HtmlEscape(p.hint.text) + "</td></tr>\n";
    }
  }
  if (rows.empty()) return h + "<p class=\"muted\" id=\"pending\">No pending GPU pods.</p>\n";
  return h +
         "<table id=\"pending\"><tr><th>cluster</th><th>pod</th><th>pending for</th>"
         "<th>hint</th><th>why</th></tr>\n" +
         rows + "</table>\n";
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string RenderStatusPage(const Snapshot& s, double now) {
  std::string h;
  h += "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>gpuattr</title>";
  h += kStyle;
  h += "</head><body>\n<h1>gpuattr</h1>\n<p>Version ";
  h += HtmlEscape(build::kVersion);
  h += " (revision ";
  h += HtmlEscape(build::kRevision);
  h += "). <a href=\"/metrics\">/metrics</a> &middot; <a href=\"/healthz\">/healthz</a> &middot; "
       "<a href=\"/readyz\">/readyz</a></p>\n";
  if (!s.complete) h += "<p class=\"muted\">The first cycle has not finished yet.</p>\n";

  h += "<h2>Clusters</h2>\n";
  if (s.clusters.empty()) {
    h += "<p class=\"muted\">No clusters configured.</p>\n";
  } else {
    h += "<table><tr><th>cluster</th><th>state</th><th>last successful cycle</th>"
         "<th>last cycle</th><th>duration</th><th>cycles</th><th>errors</th></tr>\n";
    for (const ClusterSnapshot& c : s.clusters) {
      h += "<tr><td>" + HtmlEscape(c.cluster) + "</td>";
      if (c.cycles == 0)
        h += "<td class=\"muted\">pending</td>";
      else
        h += c.latest.up ? "<td class=\"up\">up</td>" : "<td class=\"down\">down</td>";
      h += "<td>" + HtmlEscape(When(c.last_success_unix_seconds, now)) + "</td>";
      h += "<td>" + HtmlEscape(When(c.last_attempt_unix_seconds, now)) + "</td>";
      h += "<td>" + (c.cycles ? FormatSeconds(c.cycle_duration_seconds) : std::string("-")) +
           "</td>";
      h += "<td>" + std::to_string(c.cycles) + "</td><td>";
      if (c.latest.errors.empty()) {
        h += "<span class=\"muted\">none</span>";
      } else {
        h += "<ul>";
        for (const auto& e : c.latest.errors) h += "<li>" + HtmlEscape(e) + "</li>";
        h += "</ul>";
      }
      for (const auto& n : c.latest.notes)
        h += "<p class=\"muted\">Note: " + HtmlEscape(n) + "</p>";
      h += "</td></tr>\n";
    }
    h += "</table>\n";
  }

  // What discovery found: exporters, every probe with its outcome and reason, pins.
  h += "<h2>Exporters and probes</h2>\n";
  bool any_report = false;
  for (const auto& c : s.clusters) {
    if (!c.latest.discovery) continue;
    h += RenderDiscoverySection(*c.latest.discovery, now);
    any_report = true;
  }
  if (!any_report)
    h += "<p class=\"muted\" id=\"exporters\">Discovery has not run yet (no cluster has "
         "answered).</p>\n";
  h += RenderPendingSection(s);
  h += RenderHealthSection(s);
  h += "<p class=\"muted\">Page generated " + HtmlEscape(FormatUnix(now)) + ".</p>\n";
  h += "</body></html>\n";
  return h;
}

}  // namespace gpuattr::publish
