// `gpuattr --once --output markdown` and /snapshot.md: an incident report to paste into a ticket.
// What is broken or blocked comes first (GPU health, waiting pods, exporters down), then what can
// be reclaimed (idle holders), then whose GPUs they are. Names are code spans; free text (hint
// messages, XID meanings, errors) is escaped so that it cannot break the tables.
#include <cstdio>
#include <map>

#include "gpuattr/build_info.h"
#include "gpuattr/report/outputs.h"
#include "gpuattr/report/text_format.h"

namespace gpuattr::report {
namespace {

// Free text: Markdown punctuation backslash-escaped, HTML brackets as entities, one line.
std::string Md(std::string_view text) {
  const std::string s = PrintableText(text);
  std::string out;
  for (char c : s) {
    switch (c) {
      case '\\':
      case '|':
      case '*':
      case '_':
      case '`':
      case '[':
      case ']':
      case '#':
        out += '\\';
        out += c;
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '\n':
      case '\r':
        out += ' ';
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A name as a code span (Kubernetes names hold neither backticks nor pipes; be safe anyway).
std::string Code(std::string_view text) {
  const std::string s = PrintableText(text);
  std::string out = "`";
  for (char c : s) {
    if (c == '`')
      out += '\'';
    else if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out + "`";
}

std::string Row(const std::vector<std::string>& cells) {
  std::string r = "|";
  for (const auto& c : cells) r += " " + (c.empty() ? std::string(" ") : c) + " |";
  return r + "\n";
}

std::string Header(std::vector<std::string> cols, const std::vector<bool>& right) {
  std::string h = Row(cols), sep = "|";
  for (size_t i = 0; i < cols.size(); ++i) sep += (i < right.size() && right[i]) ? "---:|" : "---|";
  return h + sep + "\n";
}

std::string Pod(const StatusView& v, const std::string& cluster, const kube::PodId& id) {
  return Code(v.multi_cluster ? cluster + "/" + id.Text() : id.Text());
}

std::string Where(const StatusView& v, const std::string& cluster, const std::string& name) {
  return v.multi_cluster ? cluster + "/" + name : name;
}

std::string HealthProblems(const StatusView& v) {
  if (v.health.empty()) return "No GPU or node reports a warning or a critical problem.\n";
  std::string md = Header({"GPU", "state", "why"}, {});
  for (const HealthRow& r : v.health) {
    std::string what, why;
    if (r.gpu.empty()) {
      what = "node " + Code(Where(v, r.cluster, r.node));
      for (const auto& s : r.reasons) why += (why.empty() ? "" : "; ") + Md(s);
    } else {
      what = Code(Where(v, r.cluster, r.node + "/" + r.gpu)) +
             (r.model.empty() ? "" : " " + Md(r.model)) +
             (r.slices ? ", " + std::to_string(r.slices) + " MIG slices" : "");
      for (const health::Issue& i : r.issues)
        why += (why.empty() ? "" : "; ") + std::string(health::SeverityName(i.severity)) + ": " +
               Md(i.text);
    }
    md += Row({what, "**" + std::string(health::StateName(r.state)) + "**", why});
  }
  return md;
}

std::string WaitingPods(const StatusView& v) {
  if (v.pending.empty()) return "No pending GPU pods.\n";
  std::string md = Header({"pod", "pending for", "requests", "hint", "why"}, {false, true});
  for (const PendingRow& r : v.pending) {
    const allocation::PendingPod& p = *r.pending;
    md += Row({Pod(v, r.cluster, p.pod), Known(p.age_seconds, DurationText),
               Md(ResourcesText(p.requested)), Code(p.hint.code), Md(p.hint.text)});
  }
  return md;
}

// Empty when every exporter is up.
std::string ExportersDown(const StatusView& v) {
  std::string down;
  for (const ExporterRow& r : v.exporters) {
    const discovery::ExporterStatus& e = *r.status;
    if (!e.up)
      down += Row({Code(Where(v, r.cluster, e.namespace_ + "/" + e.pod)), Code(e.node), Md(e.kind),
                   Md(e.reason)});
  }
  if (down.empty()) return "";
  return "\n## Exporters down\n\n" + Header({"exporter", "node", "kind", "reason"}, {}) + down;
}

std::string IdleHolders(const StatusView& v) {
  if (v.idle.empty()) return "No pod holds GPU memory while idle.\n";
  std::string md = Header({"pod", "node", "memory held", "idle for", "GPU-eq", "utilisation"},
                          {false, false, true, true, true, true});
  for (const PodRow& r : v.idle) {
    const attribution::Pod& p = *r.pod;
    md += Row({Pod(v, r.cluster, p.id), Code(p.node), Known(p.memory_used_bytes, BytesText),
               Known(r.idle_seconds, DurationText), GpuEqText(p.gpu_equivalents),
               Known(p.utilization, PercentText)});
  }
  return md;
}

std::string WhoseGpus(const StatusView& v) {
  if (v.namespaces.empty()) return "No namespace uses or requests a GPU.\n";
  std::string md = Header({"namespace", "GPU-eq", "devices in use", "requested", "utilisation",
                           "memory used", "held idle", "power", "energy 24 h", "pending"},
                          {false, true, true, true, true, true, true, true, true, true});
  for (const NamespaceRow& n : v.namespaces)
    md += Row(
        {Code(Where(v, n.cluster, n.name)), GpuEqText(n.gpu_equivalents),
         std::to_string(n.devices_in_use),
         std::to_string(n.requested_devices) +
             (n.requested_replicas ? " + " + std::to_string(n.requested_replicas) + " shared" : ""),
         Known(n.utilization, PercentText), Known(n.memory_used_bytes, BytesText),
         Known(n.memory_idle_bytes, BytesText), Known(n.power_watts, WattsText),
         Known(n.energy_24h_joules, EnergyText), std::to_string(n.pending_pods)});
  return md;
}

// One line per basis (the cards' own hours: one line, the same on every basis).
void CostLines(const StatusView& v, const CostRow& r, const std::string& name, bool one_row,
               std::string& md) {
  for (accounting::Basis basis : v.costs.bases) {
    const size_t b = static_cast<size_t>(basis);
    std::vector<std::string> cells{name,
                                   one_row ? "card" : std::string(accounting::BasisName(basis))};
    for (const ledger::WindowHours& w : r.windows) {
      cells.push_back(GpuHoursText(w.hours[b]));
      cells.push_back(w.cost ? MoneyText((*w.cost)[b], v.costs.currency) : kUnknownText);
    }
    md += Row(cells);
    if (one_row) break;
  }
}

std::string CostHeader(const char* first) {
  std::vector<std::string> cols{first, "basis"};
  std::vector<bool> right{false, false};
  for (int days : ledger::kCostWindowDays) {
    cols.push_back(WindowText(days) + " GPU-h");
    cols.push_back(WindowText(days) + " cost");
    right.insert(right.end(), {true, true});
  }
  return Header(cols, right);
}

std::string WhatItCosts(const StatusView& v) {
  const CostsView& c = v.costs;
  if (c.cards.empty()) return "No cycle has been accounted yet.\n";
  std::string md;
  if (!c.teams.empty()) {
    md += "By team (label " + Code(c.team_label) + "):\n\n" + CostHeader("team");
    for (const CostRow& r : c.teams) CostLines(v, r, Code(Where(v, r.cluster, r.name)), false, md);
    md += "\n";
  }
  md += CostHeader("namespace");
  for (size_t i = 0; i < c.namespaces.size() && i < kRowsShown; ++i)
    CostLines(v, c.namespaces[i], Code(Where(v, c.namespaces[i].cluster, c.namespaces[i].name)),
              false, md);
  for (const CostRow& r : c.idle)
    CostLines(v, r, v.multi_cluster ? "idle (" + Code(r.cluster) + ")" : "idle", false, md);
  for (const CostRow& r : c.cards)
    CostLines(v, r, v.multi_cluster ? "**all cards** (" + Code(r.cluster) + ")" : "**all cards**",
              true, md);
  if (c.namespaces.size() > kRowsShown)
    md += "\n" + std::to_string(c.namespaces.size() - kRowsShown) +
          " more namespaces in /snapshot.json.\n";
  md += "\nUTC days, today (" + DayText(c.today) +
        ") included. A cost only for hours on priced cards" +
        (c.currency.empty() ? std::string() : ", in " + Md(c.currency)) + ".\n";
  if (!c.unpriced_cards.empty()) {
    std::map<std::string, size_t> by_model;
    for (const UnpricedCardRow& u : c.unpriced_cards)
      ++by_model[(v.multi_cluster ? u.cluster + ": " : "") +
                 (u.card->model.empty() ? "(model unknown)" : u.card->model)];
    md += "Unpriced (no price rule matched): " + Plural(c.unpriced_cards.size(), "card", "cards") +
          ":";
    bool first = true;
    for (const auto& [model, n] : by_model) {
      md += std::string(first ? " " : ", ") + Md(model) + " ×" + std::to_string(n);
      first = false;
    }
    md += ".\n";
  }
  return md;
}

std::string Rightsizing(const StatusView& v) {
  if (v.rightsizing.empty()) return "No workload observed yet.\n";
  std::string md = Header({"workload", "pods", "current → recommended", "reason", "peak memory",
                           "p95 utilisation", "observed", "reclaimable GPU-eq", "reclaimable / h"},
                          {false, true, false, false, true, true, true, true, true});
  for (size_t i = 0; i < v.rightsizing.size() && i < kRowsShown; ++i) {
    const RightsizingRow& r = v.rightsizing[i];
    const rightsizing::WorkloadView& w = *r.workload;
    const rightsizing::Recommendation& rec = w.recommendation;
    md += Row(
        {Code(Where(v, r.cluster, w.id.Text())), std::to_string(w.pods),
         Code(rec.current) + (rec.recommended == rec.current ? "" : " → " + Code(rec.recommended)),
         Code(rightsizing::ReasonName(rec.reason)), Known(w.memory_peak_bytes, BytesText),
         Known(w.utilization_p95, PercentText), DurationText(w.observed_seconds),
         GpuEqText(w.reclaimable_gpu_equivalents),
         Known(w.reclaimable_cost_per_hour, [&](double c) { return MoneyText(c, r.currency); })});
  }
  if (v.rightsizing.size() > kRowsShown)
    md += "\n" + std::to_string(v.rightsizing.size() - kRowsShown) + " more in /snapshot.json.\n";
  const RightsizingTotals& t = v.rightsizing_totals;
  md += "\nReclaimable: " + GpuEqText(t.reclaimable_gpu_equivalents) + " GPU-eq over " +
        Plural(t.workloads, "workload", "workloads") +
        (t.reclaimable_cost_per_hour
             ? ", " + MoneyText(*t.reclaimable_cost_per_hour, t.currency) + " per hour"
             : std::string()) +
        ".\n";
  return md;
}

}  // namespace

std::string RenderMarkdown(const StatusView& v) {
  std::string names;
  for (const ClusterRow& c : v.clusters) names += (names.empty() ? "" : ", ") + c.cluster;
  std::string md = "# GPU snapshot" + (names.empty() ? std::string() : ": " + Md(names)) + " (" +
                   UtcText(v.generated_unix) + ")\n\n";
  md += Md(SummaryText(v)) + "\n\n";
  for (const ClusterRow& c : v.clusters) {
    md += "- Cluster " + Code(c.cluster) + ": **" + c.state + "**";
    if (c.data_age_seconds) md += ", data " + DurationText(*c.data_age_seconds) + " old";
    for (const auto& e : c.errors) md += "; error: " + Md(e);
    md += "\n";
  }
  if (!v.complete) md += "\nThe first cycle has not finished yet.\n";
  md += "\n## Health problems\n\n" + HealthProblems(v);
  md += "\n## Waiting pods\n\n" + WaitingPods(v);
  md += ExportersDown(v);
  md += "\n## Idle holders\n\n" + IdleHolders(v);
  md += "\n## Rightsizing\n\n" + Rightsizing(v);
  md += "\n## Whose GPUs\n\n" + WhoseGpus(v);
  md += "\n## What it costs\n\n" + WhatItCosts(v);
  md += "\n<sub>gpuattr " + Md(build::kVersion) + " (revision " + Md(build::kRevision) +
        "); GPU-eq: a whole GPU counts 1, a MIG slice its share of the card.</sub>\n";
  return md;
}

}  // namespace gpuattr::report
