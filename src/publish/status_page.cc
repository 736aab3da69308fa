// The status page: the StatusView (view.h) as one self-contained HTML page — no external asset,
// every value escaped, readable from a 390 px phone to a wide screen (tables turn into cards on
// narrow screens), reloading itself every interval, sortable columns with a few lines of script.
#include "gpuattr/publish/status_page.h"

#include <cstdio>
#include <map>

#include "gpuattr/allocation/resources.h"
#include "gpuattr/build_info.h"
#include "gpuattr/publish/discovery_metrics.h"
#include "gpuattr/publish/text_format.h"

namespace gpuattr::publish {
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

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// One cell: already-escaped HTML, and for numbers the raw value (sorting, tests) and the field
// name it shows (data-k, the exposition's meaning).
struct Cell {
  std::string html;
  std::optional<double> value;
  std::string key;
  bool numeric = false;
};

Cell Text(const std::string& text) { return {HtmlEscape(text), std::nullopt, "", false}; }
Cell Html(std::string html) { return {std::move(html), std::nullopt, "", false}; }

template <typename F>
Cell Number(const std::optional<double>& v, F format, std::string key) {
  if (!v) return {"-", std::nullopt, std::move(key), true};
  return {HtmlEscape(format(*v)), *v, std::move(key), true};
}

Cell Count(double v, std::string key) { return {Num(v), v, std::move(key), true}; }

Cell Util(const std::optional<double>& v, std::string key = "utilization_ratio") {
  if (!v) return {"-", std::nullopt, std::move(key), true};
  char w[16];
  std::snprintf(w, sizeof w, "%.0f", std::clamp(*v, 0.0, 1.0) * 100);
  return {"<span class=\"bar\"><i style=\"width:" + std::string(w) + "%\"></i></span>" +
              HtmlEscape(PercentText(*v)),
          *v, std::move(key), true};
}

Cell Badge(const std::string& state) {
  return Html("<span class=\"b " + HtmlEscape(state) + "\">" + HtmlEscape(state) + "</span>");
}

Cell PodCell(const kube::PodId& id) {
  return Html("<span class=\"ns\">" + HtmlEscape(id.namespace_) + "/</span>" + HtmlEscape(id.name));
}

struct Column {
  std::string name;
  bool numeric = false;
  bool sortable = true;
  bool wide = false;  // free text: a whole line of its card on narrow screens
};

// A table that becomes a list of cards on narrow screens (every cell carries its column name).
class Table {
 public:
  Table(std::string id, std::vector<Column> columns, bool sortable = true)
      : id_(std::move(id)), columns_(std::move(columns)), sortable_(sortable) {}

  void Row(const std::vector<Cell>& cells, const std::string& key = "",
           const std::string& cls = "") {
    rows_ += "<tr";
    if (!cls.empty()) rows_ += " class=\"" + cls + "\"";
    if (!key.empty()) rows_ += " data-key=\"" + HtmlEscape(key) + "\"";
    rows_ += ">";
    for (size_t i = 0; i < cells.size() && i < columns_.size(); ++i) {
      const Cell& c = cells[i];
      rows_ += "<td data-label=\"" + HtmlEscape(columns_[i].name) + "\"";
      if (c.numeric)
        rows_ += " class=\"n\"";
      else if (columns_[i].wide)
        rows_ += " class=\"wide\"";
      if (!c.key.empty()) rows_ += " data-k=\"" + c.key + "\"";
      if (c.value) rows_ += " data-v=\"" + Num(*c.value) + "\"";
      rows_ += c.html.empty() ? "></td>" : "><span>" + c.html + "</span></td>";
    }
    rows_ += "</tr>\n";
    ++count_;
  }
  size_t size() const { return count_; }

  std::string Html() const {
    std::string h = "<table class=\"c\"";
    if (!id_.empty()) h += " id=\"" + id_ + "\"";
    h += "><thead><tr>";
    for (const Column& c : columns_) {
      std::string cls = std::string(c.numeric ? "n" : "") +
                        (sortable_ && c.sortable ? (c.numeric ? " s" : "s") : "");
      h += "<th" + (cls.empty() ? std::string() : " class=\"" + cls + "\"") + ">" +
           HtmlEscape(c.name) + "</th>";
    }
    return h + "</tr></thead><tbody>\n" + rows_ + "</tbody></table>\n";
  }

 private:
  std::string id_;
  std::vector<Column> columns_;
  bool sortable_;
  std::string rows_;
  size_t count_ = 0;
};

std::string Section(const std::string& id, const std::string& title, const std::string& body) {
  return "<section id=\"" + id + "\"><h2>" + HtmlEscape(title) + "</h2>\n" + body + "</section>\n";
}

std::string Muted(const std::string& text) {
  return "<p class=\"muted\">" + HtmlEscape(text) + "</p>\n";
}

std::string Tile(const std::string& value, const std::string& label, const char* cls = "") {
  return std::string("<div class=\"tile ") + cls + "\"><b>" + HtmlEscape(value) + "</b><span>" +
         HtmlEscape(label) + "</span></div>";
}

// --- sections -----------------------------------------------------------------------------------

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

std::string NsKey(const StatusView& v, const std::string& cluster, const std::string& rest) {
  return v.multi_cluster ? cluster + "/" + rest : rest;
}

std::vector<Column> WithCluster(const StatusView& v, std::vector<Column> cols) {
  if (v.multi_cluster) cols.insert(cols.begin(), Column{"cluster"});
  return cols;
}

std::vector<Cell> WithCluster(const StatusView& v, const std::string& cluster,
                              std::vector<Cell> cells) {
  if (v.multi_cluster) cells.insert(cells.begin(), Text(cluster));
  return cells;
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
    t.Row(
        WithCluster(v, p.cluster,
                    {PodCell(p.pod), Text(p.node),
                     Number(p.memory_used_bytes, BytesText, "memory_used_bytes"),
                     Number(p.idle_seconds, DurationText, "idle_seconds"),
                     Number(p.gpu_equivalents, GpuEqText, "gpu_equivalents"), Util(p.utilization)}),
        NsKey(v, p.cluster, p.pod.Text()));
  return Section("idle", "Idle holders",
                 t.Html() +
                     "<p class=\"note\">Idle: utilisation below the idle threshold while "
                     "holding GPU memory (config <code>idle</code>).</p>\n");
}

std::string TopTable(const StatusView& v, const std::string& id, const std::vector<PodRow>& rows) {
  Table t(id, WithCluster(v, {{"pod"},
                              {"node"},
                              {"power", true},
                              {"memory", true},
                              {"utilisation", true},
                              {"GPU-eq", true}}));
  for (const PodRow& p : rows)
    t.Row(
        WithCluster(v, p.cluster,
                    {PodCell(p.pod), Text(p.node), Number(p.power_watts, WattsText, "power_watts"),
                     Number(p.memory_used_bytes, BytesText, "memory_used_bytes"),
                     Util(p.utilization), Number(p.gpu_equivalents, GpuEqText, "gpu_equivalents")}),
        NsKey(v, p.cluster, p.pod.Text()));
  return t.Html();
}

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

std::string PodsText(const std::vector<std::string>& pods, const std::vector<std::string>& cand) {
  if (!pods.empty()) {
    std::string s;
    for (const auto& p : pods) s += (s.empty() ? "" : ", ") + p;
    return s;
  }
  if (!cand.empty()) {
    std::string s = "maybe ";
    for (size_t i = 0; i < cand.size(); ++i) s += (i ? ", " : "") + cand[i];
    return s;
  }
  return "";
}

std::string DevicesSection(const StatusView& v) {
  if (v.nodes.empty()) return Section("devices", "Devices by node", Muted("No GPU node seen."));
  std::string h;
  for (const NodeRow& n : v.nodes) {
    h += "<h3 data-node=\"" + HtmlEscape(NsKey(v, n.cluster, n.node)) + "\">" +
         HtmlEscape(v.multi_cluster ? n.cluster + " / " + n.node : n.node) + " <span class=\"b " +
         std::string(health::StateName(n.health)) + "\">" +
         std::string(health::StateName(n.health)) + "</span></h3>\n<p class=\"note\">";
    h += HtmlEscape(Known(n.power_watts, WattsText)) + " GPU power, " +
         HtmlEscape(Known(n.unattributed_power_watts, WattsText)) + " not attributed to a pod";
    if (n.capacity)
      h += " &middot; devices: " + std::to_string(*n.capacity) + " capacity, " +
           (n.allocatable ? std::to_string(*n.allocatable) : std::string("-")) + " allocatable, " +
           std::to_string(n.requested) + " requested";
    h += "</p>\n";
    if (n.cards.empty()) {
      h += Muted("No exporter reports this node's GPUs.");
      continue;
    }
    Table t("",
            {{"GPU"},
             {"model or profile"},
             {"utilisation", true},
             {"memory", true},
             {"power", true},
             {"temp", true},
             {"health"},
             {"pods", false, false, true}},
            false);
    for (const CardRow& c : n.cards) {
      const std::string key = NsKey(v, n.cluster, n.node + "/" + c.gpu);
      std::string mem =
          Known(c.memory_used_bytes, BytesText) + " / " + Known(c.memory_total_bytes, BytesText);
      Cell memory{HtmlEscape(mem), c.memory_used_bytes, "memory_used_bytes", true};
      std::vector<Cell> cells = {
          Text("GPU " + c.gpu),
          Text(c.model),
          Util(c.utilization),
          memory,
          Number(c.power_watts, WattsText, "card_power_watts"),
          Number(c.temperature_celsius, CelsiusText, "temperature_celsius"),
          Badge(std::string(health::StateName(c.health))),
          Text(c.mig ? Plural(c.slices, "MIG slice", "MIG slices")
                     : (c.devices.empty() ? ""
                                          : PodsText(c.devices[0].pods, c.devices[0].candidates)))};
      t.Row(cells, key, "card-row");
      if (!c.mig) continue;
      for (const DeviceRow& d : c.devices) {
        if (!d.gpu_instance) continue;  // the card-level line: shown as the card
        std::string dm =
            Known(d.memory_used_bytes, BytesText) + " / " + Known(d.memory_total_bytes, BytesText);
        t.Row({Text("└ " + c.gpu + ":" + d.gpu_instance.value_or("")), Text(d.mig_profile),
               Util(d.utilization),
               Cell{HtmlEscape(dm), d.memory_used_bytes, "memory_used_bytes", true},
               Number(d.power_watts, WattsText, "device_power_watts"), Text(""), Text(""),
               Text(PodsText(d.pods, d.candidates))},
              key + ":" + d.gpu_instance.value_or(""), "slice");
      }
    }
    h += t.Html();
  }
  return Section("devices", "Devices by node", h);
}

std::string HealthSection(const StatusView& v) {
  if (v.health.empty())
    return Section("health", "GPU health",
                   Muted("No GPU or node reports a warning or a critical problem."));
  Table t("health-table", WithCluster(v, {{"GPU"}, {"state"}, {"why", false, true, true}}));
  for (const HealthRow& r : v.health) {
    std::string what, why;
    if (r.gpu.empty()) {
      what = "node " + r.node;
      for (const auto& s : r.reasons) why += (why.empty() ? "" : "<br>") + HtmlEscape(s);
    } else {
      what = r.node + "/" + r.gpu + (r.model.empty() ? "" : " (" + r.model + ")") +
             (r.slices ? ", " + Plural(r.slices, "MIG slice", "MIG slices") : "");
      for (const health::Issue& i : r.issues)
        why += (why.empty() ? "" : "<br>") + std::string(health::SeverityName(i.severity)) + ": " +
               HtmlEscape(i.text);
    }
    t.Row(WithCluster(v, r.cluster,
                      {Text(what), Badge(std::string(health::StateName(r.state))), Html(why)}),
          NsKey(v, r.cluster, r.gpu.empty() ? r.node : r.node + "/" + r.gpu));
  }
  return Section("health", "GPU health",
                 t.Html() +
                     "<p class=\"note\">One line per physical GPU: MIG slices share their "
                     "card's health.</p>\n");
}

std::string PendingSection(const StatusView& v) {
  if (v.pending.empty())
    return Section("pending", "Pending GPU pods", Muted("No pending GPU pods."));
  Table t(
      "pending-table",
      WithCluster(
          v, {{"pod"}, {"pending for", true}, {"requests"}, {"hint"}, {"why", false, true, true}}));
  for (const PendingRow& p : v.pending)
    t.Row(WithCluster(v, p.cluster,
                      {Text(p.pod.Text()), Number(p.age_seconds, DurationText, "pending_seconds"),
                       Text(ResourcesText(p.requested)), Text(p.hint.code), Text(p.hint.text)}),
          NsKey(v, p.cluster, p.pod.Text()));
  return Section("pending", "Pending GPU pods", t.Html());
}

std::string ExportersSection(const StatusView& v) {
  std::string h;
  if (v.discovery.empty()) {
    h += "<p class=\"muted\" id=\"exporters-none\">Discovery has not run yet (no cluster has "
         "answered).</p>\n";
    return Section("exporters", "Exporters and probes", h);
  }
  std::map<std::string, std::pair<size_t, size_t>> up;  // cluster → (up, total)
  for (const ExporterRow& e : v.exporters) {
    auto& [u, n] = up[e.cluster];
    u += e.up;
    ++n;
  }
  for (const StatusView::Discovery& d : v.discovery) {
    const discovery::DiscoveryReport* report = d.report.get();
    auto [u, n] = up[d.cluster];
    std::string outcomes;
    for (const auto& [outcome, count] : report->outcome_counts)
      if (count) outcomes += (outcomes.empty() ? "" : ", ") + std::to_string(count) + " " + outcome;
    h += "<p><b>" + HtmlEscape(d.cluster) + "</b>: " + Plural(n, "exporter", "exporters") + ", " +
         std::to_string(u) + " up; " +
         HtmlEscape(Plural(report->probes.size(), "candidate probed", "candidates probed")) +
         (outcomes.empty() ? "" : " (" + HtmlEscape(outcomes) + ")") + ".</p>\n";
    // Untrusted candidates serve GPU series gpuattr does not read (docs/design.md#trust): say so.
    auto untrusted = report->outcome_counts.find("untrusted");
    const size_t n_untrusted = untrusted == report->outcome_counts.end() ? 0 : untrusted->second;
    if (n_untrusted > 0)
      h += "<p class=\"warn\">" +
           HtmlEscape(Plural(n_untrusted, "candidate serves", "candidates serve")) +
           " GPU series from a pod that may not speak for GPUs: not read (untrusted). Each "
           "probe's reason below says how to trust it.</p>\n";
    h += "<details" + std::string(u < n || n == 0 || n_untrusted > 0 ? " open" : "") +
         "><summary>Exporters, every probe and its reason, pins</summary><div class=\"scroll\">" +
         RenderDiscoverySection(*report, v.generated_unix) + "</div></details>\n";
  }
  return Section("exporters", "Exporters and probes", h);
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
  h += "</span><span class=\"meta\"><a href=\"/metrics\">/metrics</a> &middot; <a "
       "href=\"/snapshot.json\">/snapshot.json</a> &middot; <a "
       "href=\"/snapshot.md\">/snapshot.md</a> "
       "&middot; <a href=\"/healthz\">/healthz</a> &middot; <a href=\"/readyz\">/readyz</a> "
       "&middot; "
       "version ";
  h += HtmlEscape(build::kVersion);
  h += " (revision " + HtmlEscape(build::kRevision) + ")</span></header>\n<main>\n";
  h += ClustersSection(v);
  h += WhoseSection(v);
  h += IdleSection(v);
  h += TopSection(v);
  h += DevicesSection(v);
  h += HealthSection(v);
  h += PendingSection(v);
  h += ExportersSection(v);
  h += "<p class=\"note\">Page generated " + HtmlEscape(UtcText(v.generated_unix)) + ".</p>\n";
  h += "</main>\n";
  h += kScript;
  h += "</body></html>\n";
  return h;
}

std::string RenderStatusPage(const Snapshot& s, double now, const ViewOptions& options) {
  return RenderStatusPage(BuildStatusView(s, now, options));
}

}  // namespace gpuattr::publish
