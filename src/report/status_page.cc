// The status page: the StatusView (view.h) as one self-contained HTML page — no external asset,
// every value escaped, readable from a 390 px phone to a wide screen (tables turn into cards on
// narrow screens), reloading itself every interval, sortable columns with a few lines of script.
// The page's shell and its first sections (the answer: clusters, whose GPUs, idle holders, top
// pods); devices, health and pending pods are in status_devices.cc, exporters and probes in
// status_discovery.cc, the building blocks in html.cc.
#include "gpuattr/report/status_page.h"

#include <algorithm>
#include <cstdio>

#include "gpuattr/build_info.h"
#include "gpuattr/report/text_format.h"
#include "html.h"

namespace gpuattr::report {
namespace {

constexpr const char* kStyle = R"(<style>
:root{--fg:#1d232b;--muted:#667085;--line:#e3e7ed;--bg:#f6f7f9;--card:#fff;--accent:#2f6fde;
--ok:#16794c;--okbg:#e3f4ea;--warn:#8a5a00;--warnbg:#fff1d6;--crit:#b42318;--critbg:#fde4e1}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
header{background:#16202e;color:#fff;padding:10px 20px;display:flex;flex-wrap:wrap;gap:4px 16px;align-items:baseline}
header h1{font-size:18px;margin:0}header a{color:#b9d0ff}header .meta{color:#c3cad5;font-size:13px}
main{max-width:1360px;margin:0 auto;padding:12px 20px 32px}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 16px;margin:14px 0}
h2{font-size:16px;margin:0 0 8px}h3{font-size:14px;margin:14px 0 6px}h4{font-size:13px;margin:12px 0 4px}
p{margin:6px 0}.muted,.u{color:var(--muted)}.note{color:var(--muted);font-size:13px}
.sub{display:block;color:var(--muted);font-size:11px;font-weight:400}
.tiles{display:grid;grid-template-columns:repeat(auto-fit,minmax(180px,1fr));gap:10px;margin:4px 0 12px}
.tile{border:1px solid var(--line);border-radius:8px;padding:8px 12px}
.tile b{display:block;font-size:20px;line-height:1.3}.tile span{color:var(--muted);font-size:13px}
.tile.bad{border-color:#f3b5ad;background:var(--critbg)}.tile.warn{border-color:#f0d49a;background:var(--warnbg)}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{font-size:12px;color:var(--muted);font-weight:600;white-space:nowrap;background:#fafbfc}
td.n,th.n{text-align:right;white-space:nowrap}
th.s{cursor:pointer}th.s:hover{color:var(--accent)}th.s[data-dir]::after{content:" \25BE"}th.s[data-dir=asc]::after{content:" \25B4"}
tr.card-row td{background:#f9fafb;font-weight:600}tr.slice td:first-child{padding-left:22px}
tr.slice td{font-size:13px}
.ns{color:var(--muted)}
.b{display:inline-block;padding:0 6px;border-radius:9px;font-size:12px;font-weight:600;white-space:nowrap}
.up,.ok{color:var(--ok);background:var(--okbg)}.down,.critical{color:var(--crit);background:var(--critbg)}
.warning{color:var(--warn);background:var(--warnbg)}.unknown,.pending{color:var(--muted);background:#eef0f3}
.bar{display:inline-block;width:44px;height:7px;background:#e8ebf0;border-radius:4px;margin-right:6px;vertical-align:middle;overflow:hidden}
.bar i{display:block;height:100%;background:var(--accent)}
.two{display:grid;grid-template-columns:1fr 1fr;gap:18px}
.scroll{overflow-x:auto}
details summary{cursor:pointer;color:var(--accent)}
ul{margin:0;padding-left:18px}
@media (max-width:900px){.two{grid-template-columns:1fr}}
@media (max-width:640px){
main{padding:8px}section{padding:10px;border-radius:6px}header{padding:8px 12px}
table.c thead{display:none}
table.c,table.c tbody,table.c tr,table.c td{display:block;width:100%}
.tiles{grid-template-columns:1fr 1fr;gap:8px}.tile{padding:6px 10px}.tile b{font-size:17px}
table.c tr{display:grid;grid-template-columns:1fr 1fr;column-gap:14px;border:1px solid var(--line);border-radius:6px;margin:0 0 8px;padding:4px 8px}
table.c td{border:0;padding:1px 0;display:flex;justify-content:space-between;gap:8px;text-align:right;min-width:0}
table.c td::before{content:attr(data-label);color:var(--muted);font-size:12px;text-align:left;flex:none}
table.c td:first-child{grid-column:1/-1;font-weight:600;text-align:left}table.c td:first-child::before{content:none}
table.c td.n{white-space:normal}table.c td.wide{grid-column:1/-1}table.c td:empty{display:none}
tr.slice{margin-left:14px!important}tr.slice td:first-child{padding-left:10px}
#costs table.c tr{grid-template-columns:1fr}.sub{white-space:nowrap}
}
</style>)";

// Sortable columns: click a header with class "s" (numbers by data-v, else text; unknown last).
// The choice survives the page's reload through sessionStorage.
constexpr const char* kScript = R"(<script>
(function(){function key(td){if(!td)return null;var v=td.getAttribute('data-v');return v===null?td.textContent.trim().toLowerCase():parseFloat(v)}
function sort(t,i,dir){var b=t.tBodies[0],rows=[].slice.call(b.rows);rows.sort(function(x,y){var a=key(x.cells[i]),c=key(y.cells[i]);
if(a===c)return 0;if(a===null||a==='-')return 1;if(c===null||c==='-')return -1;var r=a<c?-1:1;return dir==='asc'?r:-r});
rows.forEach(function(r){b.appendChild(r)});[].forEach.call(t.tHead.rows[0].cells,function(h,j){if(j===i)h.setAttribute('data-dir',dir);else h.removeAttribute('data-dir')})}
[].forEach.call(document.querySelectorAll('table[id]'),function(t){if(!t.tHead)return;[].forEach.call(t.tHead.rows[0].cells,function(h,i){if(!h.classList.contains('s'))return;
h.addEventListener('click',function(){var d=h.getAttribute('data-dir')==='desc'?'asc':'desc';sort(t,i,d);try{sessionStorage.setItem('sort:'+t.id,i+':'+d)}catch(e){}})});
try{var s=sessionStorage.getItem('sort:'+t.id);if(s){var p=s.split(':');sort(t,+p[0],p[1])}}catch(e){}});})();
</script>)";

}  // namespace

namespace page {

std::string ClustersSection(const StatusView& v) {
  const Totals& t = v.totals;
  std::string h;
  if (!v.complete) h += Muted("The first cycle has not finished yet.");
  h += "<div class=\"tiles\">";
  h += Tile(GpuEqText(t.gpu_equivalents_in_use) + " GPU-eq",
            "in use by " + Plural(t.gpu_pods, "pod", "pods") + ", of " +
                Plural(t.cards, "GPU", "GPUs") + " on " + Plural(t.nodes, "node", "nodes"));
  h += Tile(Known(t.power_watts, WattsText),
            "GPU power; " + Known(t.attributed_power_watts, WattsText) + " attributed to pods");
  h += Tile(Plural(t.idle_pods, "idle pod", "idle pods"),
            "holding " + Known(t.idle_memory_bytes, BytesText) + " of GPU memory",
            t.idle_pods ? "warn" : "");
  h += Tile(Plural(t.pending_pods, "pending pod", "pending pods"), "waiting for GPUs",
            t.pending_pods ? "warn" : "");
  h += Tile(t.cards_critical ? Plural(t.cards_critical, "critical GPU", "critical GPUs")
                             : (t.cards_warning ? Plural(t.cards_warning, "GPU warns", "GPUs warn")
                                                : "no problem"),
            std::to_string(t.cards_ok) + " ok, " + std::to_string(t.cards_warning) + " warning, " +
                std::to_string(t.cards_critical) + " critical, " + std::to_string(t.cards_unknown) +
                " unknown",
            t.cards_critical ? "bad" : (t.cards_warning ? "warn" : ""));
  h += "</div>\n";
  if (v.clusters.empty())
    return Section("clusters", "Clusters", h + Muted("No clusters configured."));
  Table table("cluster-table",
              {{"cluster"},
               {"state"},
               {"data age", true},
               {"last cycle"},
               {"duration", true},
               {"cycles", true},
               {"errors", false, false, true}},
              false);
  for (const ClusterRow& c : v.clusters) {
    std::string errors;
    if (c.errors.empty()) {
      errors = "<span class=\"muted\">none</span>";
    } else {
      errors = "<ul>";
      for (const auto& e : c.errors) errors += "<li>" + HtmlEscape(e) + "</li>";
      errors += "</ul>";
    }
    for (const auto& n : c.notes) errors += "<p class=\"note\">Note: " + HtmlEscape(n) + "</p>";
    table.Row({Text(c.cluster), Badge(c.state),
               Number(c.data_age_seconds, DurationText, "data_age_seconds"),
               Text(c.last_attempt_unix
                        ? UtcText(*c.last_attempt_unix) +
                              (c.last_success_unix == c.last_attempt_unix ? "" : " (failed)")
                        : "never"),
               Number(
                   c.cycle_duration_seconds,
                   [](double s) {
                     char b[32];
                     std::snprintf(b, sizeof b, "%.2f s", s);
                     return std::string(b);
                   },
                   "cycle_duration_seconds"),
               Count(static_cast<double>(c.cycles), "cycles"), Html(errors)},
              c.cluster);
  }
  return Section("clusters", "Clusters", h + table.Html());
}

std::string WhoseSection(const StatusView& v) {
  if (v.namespaces.empty())
    return Section("whose", "Whose GPUs", Muted("No namespace uses or requests a GPU."));
  Table t("whose-table", WithCluster(v, {{"namespace"},
                                         {"GPU-eq", true},
                                         {"devices in use", true},
                                         {"requested", true},
                                         {"utilisation", true},
                                         {"memory used", true},
                                         {"held idle", true},
                                         {"power", true},
                                         {"energy 24 h", true},
                                         {"pods", true},
                                         {"idle pods", true},
                                         {"pending", true}}));
  bool short_window = false;
  for (const NamespaceRow& n : v.namespaces) {
    std::string req = HtmlEscape(std::to_string(n.requested_devices));
    if (n.requested_replicas)
      req += " <span class=\"muted\">+ " + std::to_string(n.requested_replicas) + " shared</span>";
    std::string detail = ResourcesText(n.requested);
    Cell requested{"<span title=\"" + HtmlEscape(detail) + "\">" + req + "</span>",
                   static_cast<double>(n.requested_devices), "requested_devices", true};
    Cell energy = Number(n.energy_24h_joules, EnergyText, "energy_24h_joules");
    if (n.energy_24h_joules && n.energy_window_seconds < 86400) short_window = true;
    t.Row(WithCluster(
              v, n.cluster,
              {Text(n.name), Number(n.gpu_equivalents, GpuEqText, "gpu_equivalents"),
               Count(static_cast<double>(n.devices_in_use), "devices_in_use"), requested,
               Util(n.utilization), Number(n.memory_used_bytes, BytesText, "memory_used_bytes"),
               Number(n.memory_idle_bytes, BytesText, "memory_idle_bytes"),
               Number(n.power_watts, WattsText, "power_watts"), energy,
               Count(static_cast<double>(n.gpu_pods), "gpu_pods"),
               Count(static_cast<double>(n.idle_pods), "idle_pods"),
               Count(static_cast<double>(n.pending_pods), "pending_pods")}),
          NsKey(v, n.cluster, n.name));
  }
  std::string h = t.Html();
  h += "<p class=\"note\">GPU-eq: a whole GPU counts 1, a MIG slice its share of the card. "
       "Requested: devices the namespace's pods hold (hover for the resources; time-slicing "
       "replicas are not devices).";
  if (short_window) {
    double window = 86400;
    for (const NamespaceRow& n : v.namespaces)
      if (n.energy_24h_joules) window = std::min(window, n.energy_window_seconds);
    h += " Energy 24 h counts the last " + HtmlEscape(DurationText(window)) +
         ": gpuattr has watched for less than a day.";
  }
  h += "</p>\n";
  return Section("whose", "Whose GPUs", h);
}

std::string IdleSection(const StatusView& v) {
  if (v.idle.empty())
    return Section("idle", "Idle holders", Muted("No pod holds GPU memory while idle."));
  Table t("idle-table", WithCluster(v, {{"pod"},
                                        {"node"},
                                        {"memory held", true},
                                        {"idle for", true},
                                        {"GPU-eq", true},
                                        {"utilisation", true}}));
  for (const PodRow& p : v.idle)
    t.Row(WithCluster(v, p.cluster,
                      {PodCell(p.pod->id), Text(p.pod->node),
                       Number(p.pod->memory_used_bytes, BytesText, "memory_used_bytes"),
                       Number(p.idle_seconds, DurationText, "idle_seconds"),
                       Number(p.pod->gpu_equivalents, GpuEqText, "gpu_equivalents"),
                       Util(p.pod->utilization)}),
          NsKey(v, p.cluster, p.pod->id.Text()));
  return Section("idle", "Idle holders",
                 t.Html() +
                     "<p class=\"note\">Idle: utilisation below the idle threshold while "
                     "holding GPU memory (config <code>idle</code>).</p>\n");
}

namespace {

std::string TopTable(const StatusView& v, const std::string& id, const std::vector<PodRow>& rows) {
  Table t(id, WithCluster(v, {{"pod"},
                              {"node"},
                              {"power", true},
                              {"memory", true},
                              {"utilisation", true},
                              {"GPU-eq", true}}));
  for (const PodRow& p : rows)
    t.Row(WithCluster(v, p.cluster,
                      {PodCell(p.pod->id), Text(p.pod->node),
                       Number(p.pod->power_watts, WattsText, "power_watts"),
                       Number(p.pod->memory_used_bytes, BytesText, "memory_used_bytes"),
                       Util(p.pod->utilization),
                       Number(p.pod->gpu_equivalents, GpuEqText, "gpu_equivalents")}),
          NsKey(v, p.cluster, p.pod->id.Text()));
  return t.Html();
}

}  // namespace

std::string TopSection(const StatusView& v) {
  if (v.top_by_power.empty() && v.top_by_memory.empty())
    return Section("top", "Top pods", Muted("No pod is attributed a GPU yet."));
  std::string h = "<div class=\"two\"><div><h3>By power</h3>";
  h += v.top_by_power.empty() ? Muted("No pod has a known power.")
                              : TopTable(v, "top-power", v.top_by_power);
  h += "</div><div><h3>By memory</h3>";
  h += v.top_by_memory.empty() ? Muted("No pod has known memory.")
                               : TopTable(v, "top-memory", v.top_by_memory);
  h += "</div></div>\n";
  return Section("top", "Top pods", h);
}

}  // namespace page

std::string RenderStatusPage(const StatusView& v) {
  std::string title = "gpuattr";
  if (v.clusters.size() == 1) title += " · " + v.clusters[0].cluster;
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  if (v.refresh_seconds > 0) {
    char r[32];
    std::snprintf(r, sizeof r, "%.0f", std::max(1.0, v.refresh_seconds));
    h += "<meta http-equiv=\"refresh\" content=\"" + std::string(r) + "\">";
  }
  h += "<title>" + HtmlEscape(title) + "</title>";
  h += kStyle;
  h += "</head><body>\n<header><h1>gpuattr</h1><span class=\"meta\">whose GPUs are these, and is "
       "anyone using them? &middot; ";
  h += HtmlEscape(UtcText(v.generated_unix));
  if (v.refresh_seconds > 0)
    h += " &middot; reloads every " + HtmlEscape(DurationText(v.refresh_seconds));
  h += "</span><span class=\"meta\"><a href=\"" + HtmlEscape(v.metrics_path) + "\">" +
       HtmlEscape(v.metrics_path) +
       "</a> &middot; <a "
       "href=\"/snapshot.json\">/snapshot.json</a> &middot; <a "
       "href=\"/snapshot.md\">/snapshot.md</a> "
       "&middot; <a href=\"/healthz\">/healthz</a> &middot; <a href=\"/readyz\">/readyz</a> "
       "&middot; "
       "version ";
  h += HtmlEscape(build::kVersion);
  h += " (revision " + HtmlEscape(build::kRevision) + ")</span></header>\n<main>\n";
  h += page::ClustersSection(v);
  h += page::WhoseSection(v);
  h += page::CostsSection(v);
  h += page::IdleSection(v);
  h += page::RightsizingSection(v);
  h += page::TopSection(v);
  h += page::DevicesSection(v);
  h += page::HealthSection(v);
  h += page::PendingSection(v);
  h += page::ExportersSection(v);
  h += "<p class=\"note\">Page generated " + HtmlEscape(UtcText(v.generated_unix)) + ".</p>\n";
  h += "</main>\n";
  h += kScript;
  h += "</body></html>\n";
  return h;
}

std::string RenderStatusPage(const model::Snapshot& s, double now, const ViewOptions& options) {
  return RenderStatusPage(BuildStatusView(s, now, options));
}

}  // namespace gpuattr::report
