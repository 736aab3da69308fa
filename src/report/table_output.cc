// `gpuattr --once --output table`: the status page's sections as aligned text for a terminal.
// Columns are padded to their widest cell; when a width is given and a table is wider, its
// free-text columns (pods, reasons, messages) are cut with "…" until it fits.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

#include "gpuattr/report/outputs.h"
#include "gpuattr/report/text_format.h"

namespace gpuattr::report {
namespace {

enum class Tone { kNone, kGood, kBad, kWarn, kDim };

Tone ToneOf(std::string_view state) {
  if (state == "up" || state == "ok") return Tone::kGood;
  if (state == "down" || state == "critical" || state == "error") return Tone::kBad;
  if (state == "warning" || state == "untrusted" || state == "unrecognised") return Tone::kWarn;
  if (state == "unknown" || state == "pending") return Tone::kDim;
  return Tone::kNone;
}

const char* Ansi(Tone t) {
  switch (t) {
    case Tone::kGood:
      return "\x1b[32m";
    case Tone::kBad:
      return "\x1b[31;1m";
    case Tone::kWarn:
      return "\x1b[33m";
    case Tone::kDim:
      return "\x1b[2m";
    case Tone::kNone:
      break;
  }
  return "";
}

// Display columns of UTF-8 text (one per code point: the texts here have no wide characters).
size_t Width(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The first `cols` display columns of `s`, ending in "…" when cut.
std::string Cut(const std::string& s, size_t cols) {
  if (Width(s) <= cols) return s;
  if (cols == 0) return "";
  std::string out;
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) != 0x80) {
      if (n == cols - 1) break;
      ++n;
    }
    out += s[i];
  }
  return out + "…";
}

struct Col {
  std::string name;
  bool right = false;     // numbers
  bool flex = false;      // may be cut to fit the width
  bool optional = false;  // may be left out when cutting is not enough
};

struct TextCell {
  std::string text;
  Tone tone = Tone::kNone;
};

class TextTable {
 public:
  explicit TextTable(std::vector<Col> cols) : cols_(std::move(cols)) {}
  void Row(std::vector<TextCell> cells) {
    cells.resize(cols_.size());
    for (TextCell& c : cells) c.text = PrintableText(c.text);  // no terminal sequence gets out
    rows_.push_back(std::move(cells));
  }
  bool empty() const { return rows_.empty(); }

  std::string Render(const TableOptions& o) const {
    constexpr size_t kGap = 2, kMinFlex = 8, kComfortable = 24;
    const size_t n = cols_.size();
    std::vector<size_t> w(n);
    std::vector<bool> shown(n, true);
    for (size_t i = 0; i < n; ++i) {
      w[i] = Width(cols_[i].name);
      for (const auto& r : rows_) w[i] = std::max(w[i], Width(r[i].text));
    }
    auto total = [&] {
      size_t t = 0, k = 0;
      for (size_t i = 0; i < n; ++i)
        if (shown[i]) t += w[i], ++k;
      return t + kGap * (k ? k - 1 : 0);
    };
    if (o.width > 0) {
      // Shave the widest free-text column until the table fits, first down to a comfortable
      // width, then leave out optional columns (rightmost first), then down to the minimum.
      auto shave = [&](size_t floor) {
        while (total() > o.width) {
          size_t best = n;
          for (size_t i = 0; i < n; ++i)
            if (shown[i] && cols_[i].flex && w[i] > floor && (best == n || w[i] > w[best]))
              best = i;
          if (best == n) return;
          w[best] -= std::min(w[best] - floor, total() - o.width);
        }
      };
      shave(kComfortable);
      for (size_t i = n; i-- > 0 && total() > o.width;)
        if (cols_[i].optional) shown[i] = false;
      shave(kMinFlex);
    }
    std::string out;
    auto line = [&](const std::vector<TextCell>& cells, bool header) {
      std::string l;
      size_t last = 0;
      for (size_t i = 0; i < n; ++i)
        if (shown[i]) last = i;
      for (size_t i = 0; i < n; ++i) {
        if (!shown[i]) continue;
        std::string text = Cut(cells[i].text, w[i]);
        const size_t pad = w[i] - Width(text);
        std::string body = text;
        if (o.color && header) body = "\x1b[1m" + text + "\x1b[0m";
        if (o.color && !header && cells[i].tone != Tone::kNone && !text.empty())
          body = std::string(Ansi(cells[i].tone)) + text + "\x1b[0m";
        if (cols_[i].right)
          l += std::string(pad, ' ') + body;
        else
          l += body + (i == last ? "" : std::string(pad, ' '));
        if (i != last) l += std::string(kGap, ' ');
      }
      while (!l.empty() && l.back() == ' ') l.pop_back();
      out += l + "\n";
    };
    std::vector<TextCell> head;
    for (const Col& c : cols_) head.push_back({ToUpper(c.name)});
    line(head, true);
    for (const auto& r : rows_) line(r, false);
    return out;
  }

 private:
  static std::string ToUpper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
  }
  std::vector<Col> cols_;
  std::vector<std::vector<TextCell>> rows_;
};

std::string Title(const std::string& title, const TableOptions& o) {
  return "\n" +
         (o.color ? "\x1b[1;4m" + title + "\x1b[0m"
                  : title + "\n" + std::string(Width(title), '-')) +
         "\n";
}

// Words of `text` in lines of at most `width` columns (0: one line).
std::string Wrap(const std::string& text, size_t width) {
  if (width == 0 || Width(text) <= width) return text;
  std::string out, line;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && Width(line) + 1 + Width(word) > width) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  return out + line;
}

// Notes may carry names from the cluster: no terminal sequence gets out of them either.
std::string Note(const std::string& text) { return "  " + PrintableText(text) + "\n"; }

// A note in lines that fit `width` (0: one line), each indented.
std::string WrappedNote(const std::string& text, size_t width) {
  const std::string lines = Wrap(text, width > 2 ? width - 2 : 0);
  std::string out;
  size_t start = 0;
  while (start <= lines.size()) {
    size_t end = lines.find('\n', start);
    if (end == std::string::npos) end = lines.size();
    out += Note(lines.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::vector<Col> WithCluster(const StatusView& v, std::vector<Col> cols) {
  if (v.multi_cluster) cols.insert(cols.begin(), Col{"cluster"});
  return cols;
}
std::vector<TextCell> WithCluster(const StatusView& v, const std::string& cluster,
                                  std::vector<TextCell> cells) {
  if (v.multi_cluster) cells.insert(cells.begin(), TextCell{cluster});
  return cells;
}

TextCell T(std::string s) { return {std::move(s)}; }
template <typename F>
TextCell K(const std::optional<double>& v, F f) {
  return {Known(v, f)};
}
TextCell State(std::string s) {
  Tone t = ToneOf(s);
  return {std::move(s), t};
}
TextCell Count(size_t n) { return {std::to_string(n)}; }

// The pods attributed the device, else "maybe " and its candidate pods.
std::string JoinPods(const DeviceRow& d) {
  std::string s;
  for (const auto& p : d.pods) s += (s.empty() ? "" : ", ") + p;
  const std::vector<kube::PodId>& cand = d.device->candidate_pods;
  if (s.empty() && !cand.empty()) {
    s = "maybe ";
    for (size_t i = 0; i < cand.size(); ++i) s += (i ? ", " : "") + cand[i].Text();
  }
  return s;
}

std::string Memory(const std::optional<double>& used, const std::optional<double>& total) {
  if (!used && !total) return kUnknownText;
  return Known(used, BytesText) + " / " + Known(total, BytesText);
}

}  // namespace

std::string SummaryText(const StatusView& v) {
  const Totals& t = v.totals;
  std::string s = GpuEqText(t.gpu_equivalents_in_use) + " GPU-equivalents in use by " +
                  Plural(t.gpu_pods, "pod", "pods") + ", of " + Plural(t.cards, "GPU", "GPUs") +
                  " on " + Plural(t.nodes, "node", "nodes") + "; ";
  if (t.power_watts) {
    s += WattsText(*t.power_watts) + " GPU power";
    if (t.attributed_power_watts)
      s += " (" + WattsText(*t.attributed_power_watts) + " attributed to pods)";
  } else {
    s += "GPU power unknown";
  }
  s += ". ";
  if (t.idle_pods == 0)
    s += "No idle pod holds GPU memory; ";
  else
    s += Plural(t.idle_pods, "idle pod holds ", "idle pods hold ") +
         Known(t.idle_memory_bytes, BytesText) + " of GPU memory; ";
  s += Plural(t.pending_pods, "pending GPU pod", "pending GPU pods") +
       ". GPUs: " + std::to_string(t.cards_critical) + " critical, " +
       std::to_string(t.cards_warning) + " warning, " + std::to_string(t.cards_ok) + " ok, " +
       std::to_string(t.cards_unknown) + " unknown.";
  return s;
}

namespace {

std::string ClustersTable(const StatusView& v, const TableOptions& o) {
  TextTable tt({{"cluster", false, true},
                {"state"},
                {"data age", true},
                {"cycle", true, false, true},
                {"errors", false, true}});
  for (const ClusterRow& c : v.clusters) {
    std::string errors;
    for (const auto& e : c.errors) errors += (errors.empty() ? "" : "; ") + e;
    for (const auto& n : c.notes) errors += (errors.empty() ? "note: " : "; note: ") + n;
    tt.Row({T(c.cluster), State(c.state), K(c.data_age_seconds, DurationText),
            K(c.cycle_duration_seconds,
              [](double s) {
                char b[32];
                std::snprintf(b, sizeof b, "%.2f s", s);
                return std::string(b);
              }),
            T(errors.empty() ? "none" : errors)});
  }
  return tt.empty() ? Note("No clusters configured.") : tt.Render(o);
}

std::string WhoseTable(const StatusView& v, const TableOptions& o) {
  TextTable tt(WithCluster(v, {{"namespace", false, true},
                               {"gpu-eq", true},
                               {"in use", true, false, true},
                               {"requested", true},
                               {"util", true},
                               {"memory", true},
                               {"held idle", true},
                               {"power", true},
                               {"energy 24h", true, false, true},
                               {"pods", true, false, true},
                               {"idle", true, false, true},
                               {"pending", true, false, true}}));
  for (const NamespaceRow& n : v.namespaces)
    tt.Row(WithCluster(
        v, n.cluster,
        {T(n.name), T(GpuEqText(n.gpu_equivalents)), Count(n.devices_in_use),
         T(std::to_string(n.requested_devices) +
           (n.requested_replicas ? " +" + std::to_string(n.requested_replicas) + " shared" : "")),
         K(n.utilization, PercentText), K(n.memory_used_bytes, BytesText),
         K(n.memory_idle_bytes, BytesText), K(n.power_watts, WattsText),
         K(n.energy_24h_joules, EnergyText), Count(n.gpu_pods), Count(n.idle_pods),
         Count(n.pending_pods)}));
  return tt.empty() ? Note("No namespace uses or requests a GPU.") : tt.Render(o);
}

std::string IdleTable(const StatusView& v, const TableOptions& o) {
  TextTable tt(WithCluster(v, {{"pod", false, true},
                               {"node", false, true},
                               {"memory held", true},
                               {"idle for", true},
                               {"gpu-eq", true},
                               {"util", true, false, true}}));
  for (const PodRow& r : v.idle) {
    const attribution::Pod& p = *r.pod;
    tt.Row(WithCluster(v, r.cluster,
                       {T(p.id.Text()), T(p.node), K(p.memory_used_bytes, BytesText),
                        K(r.idle_seconds, DurationText), T(GpuEqText(p.gpu_equivalents)),
                        K(p.utilization, PercentText)}));
  }
  return tt.empty() ? Note("No pod holds GPU memory while idle.") : tt.Render(o);
}

std::string TopTable(const StatusView& v, const std::vector<PodRow>& rows, const TableOptions& o) {
  TextTable tt(WithCluster(v, {{"pod", false, true},
                               {"node", false, true},
                               {"power", true},
                               {"memory", true},
                               {"util", true},
                               {"gpu-eq", true}}));
  for (const PodRow& r : rows) {
    const attribution::Pod& p = *r.pod;
    tt.Row(WithCluster(
        v, r.cluster,
        {T(p.id.Text()), T(p.node), K(p.power_watts, WattsText), K(p.memory_used_bytes, BytesText),
         K(p.utilization, PercentText), T(GpuEqText(p.gpu_equivalents))}));
  }
  return tt.empty() ? Note("No pod is attributed a GPU yet.") : tt.Render(o);
}

// A node's line, then each card, then a MIG card's slices.
void AddNodeRows(const StatusView& v, const NodeRow& n, TextTable& tt) {
  std::string info = Known(n.unattributed_power_watts, WattsText) + " not attributed";
  if (n.capacity)
    info += "; devices " + std::to_string(*n.capacity) + " capacity, " +
            (n.allocatable ? std::to_string(*n.allocatable) : std::string("-")) + " allocatable, " +
            std::to_string(n.requested) + " requested";
  tt.Row({T(v.multi_cluster ? n.cluster + "/" + n.node : n.node), T(""), T(""), T(""),
          K(n.power_watts, WattsText), T(""), State(std::string(health::StateName(n.health))),
          T(info)});
  for (const CardRow& c : n.cards) {
    const attribution::Card& card = *c.card;
    tt.Row({T("  GPU " + card.gpu), T(card.model), K(c.utilization, PercentText),
            T(Memory(c.memory_used_bytes, c.memory_total_bytes)), K(card.power_watts, WattsText),
            K(c.temperature_celsius, CelsiusText), State(std::string(health::StateName(c.health))),
            T(c.mig ? std::to_string(c.slices) + " MIG slices"
                    : (c.devices.empty() ? "" : JoinPods(c.devices[0])))});
    if (!c.mig) continue;
    for (const DeviceRow& row : c.devices) {
      const attribution::Device& d = *row.device;
      if (d.id.gpu_instance)  // else the card-level line, shown as the card
        tt.Row({T("    └ " + card.gpu + ":" + d.id.gpu_instance.value_or("")), T(d.mig_profile),
                K(d.utilization, PercentText), T(Memory(d.memory_used_bytes, d.memory_total_bytes)),
                K(d.power_watts, WattsText), T(""), T(""), T(JoinPods(row))});
    }
  }
}

std::string DevicesTable(const StatusView& v, const TableOptions& o) {
  TextTable tt({{"node / gpu", false, true},
                {"model / profile", false, true},
                {"util", true},
                {"memory", true},
                {"power", true},
                {"temp", true, false, true},
                {"health"},
                {"pods", false, true}});
  for (const NodeRow& n : v.nodes) AddNodeRows(v, n, tt);
  return tt.empty() ? Note("No GPU node seen.") : tt.Render(o);
}

std::string HealthTable(const StatusView& v, const TableOptions& o) {
  TextTable tt(WithCluster(v, {{"gpu", false, true}, {"state"}, {"why", false, true}}));
  for (const HealthRow& r : v.health) {
    std::string what, why;
    if (r.gpu.empty()) {
      what = "node " + r.node;
      for (const auto& s : r.reasons) why += (why.empty() ? "" : "; ") + s;
    } else {
      what = r.node + "/" + r.gpu + (r.model.empty() ? "" : " (" + r.model + ")") +
             (r.slices ? ", " + std::to_string(r.slices) + " MIG slices" : "");
      for (const health::Issue& i : r.issues)
        why += (why.empty() ? "" : "; ") + std::string(health::SeverityName(i.severity)) + ": " +
               i.text;
    }
    tt.Row(WithCluster(v, r.cluster,
                       {T(what), State(std::string(health::StateName(r.state))), T(why)}));
  }
  return tt.empty() ? Note("No GPU or node reports a warning or a critical problem.")
                    : tt.Render(o);
}

std::string PendingTable(const StatusView& v, const TableOptions& o) {
  TextTable tt(WithCluster(v, {{"pod", false, true},
                               {"pending for", true},
                               {"requests", false, true},
                               {"hint"},
                               {"why", false, true}}));
  for (const PendingRow& r : v.pending) {
    const allocation::PendingPod& p = *r.pending;
    tt.Row(WithCluster(v, r.cluster,
                       {T(p.pod.Text()), K(p.age_seconds, DurationText),
                        T(ResourcesText(p.requested)), T(p.hint.code), T(p.hint.text)}));
  }
  return tt.empty() ? Note("No pending GPU pods.") : tt.Render(o);
}

std::string ExportersTable(const StatusView& v, const TableOptions& o) {
  TextTable tt(WithCluster(v, {{"exporter", false, true},
                               {"node", false, true},
                               {"kind"},
                               {"up"},
                               {"scrape", true, false, true},
                               {"bytes", true, false, true},
                               {"reason", false, true}}));
  for (const ExporterRow& r : v.exporters) {
    const discovery::ExporterStatus& e = *r.status;
    char d[32];
    std::snprintf(d, sizeof d, "%.3f s", e.duration_seconds);
    tt.Row(
        WithCluster(v, r.cluster,
                    {T(e.namespace_ + "/" + e.pod), T(e.node), T(e.kind),
                     State(e.up ? "up" : "down"), T(d), T(std::to_string(e.bytes)), T(e.reason)}));
  }
  return tt.empty()
             ? Note(v.discovery.empty() ? "Discovery has not run yet." : "No exporter found.")
             : tt.Render(o);
}

std::string ProbesTable(const StatusView& v, const TableOptions& o) {
  TextTable tt(WithCluster(
      v,
      {{"candidate", false, true}, {"node", false, true}, {"outcome"}, {"reason", false, true}}));
  for (const ProbeRow& p : v.probes)
    tt.Row(WithCluster(v, p.cluster,
                       {T(p.candidate), T(p.probe->candidate.node), State(p.outcome),
                        T(p.probe->verdict.reason)}));
  return tt.empty() ? Note("Nothing probed.") : tt.Render(o);
}

// A window's short name in a column header: "today", "7d", "30d".
std::string ShortWindow(int days) { return days == 1 ? "today" : std::to_string(days) + "d"; }

// One line per basis (the cards' own hours: one line, the same on every basis).
void AddCostRows(const StatusView& v, const CostRow& r, const std::string& name, bool one_row,
                 TextTable& tt) {
  for (accounting::Basis basis : v.costs.bases) {
    const size_t b = static_cast<size_t>(basis);
    std::vector<TextCell> cells{T(name),
                                T(one_row ? "card" : std::string(accounting::BasisName(basis)))};
    for (const ledger::WindowHours& w : r.windows) {
      cells.push_back(T(GpuHoursText(w.hours[b])));
      cells.push_back(T(w.cost ? MoneyText((*w.cost)[b], v.costs.currency) : kUnknownText));
    }
    tt.Row(WithCluster(v, r.cluster, std::move(cells)));
    if (one_row) break;
  }
}

std::string CostsTable(const StatusView& v, const TableOptions& o) {
  const CostsView& c = v.costs;
  if (c.cards.empty()) return Note("No cycle has been accounted yet.");
  auto columns = [&](const char* first) {
    std::vector<Col> cols{{first, false, true}, {"basis"}};
    // On a narrow terminal the shorter windows go first (optional columns, rightmost first).
    for (int days : ledger::kCostWindowDays) {
      const bool optional = days != ledger::kCostWindowDays.back();
      cols.push_back({ShortWindow(days) + " gpu-h", true, false, optional});
      cols.push_back({ShortWindow(days) + " cost", true, false, optional});
    }
    return WithCluster(v, std::move(cols));
  };
  std::string out;
  if (!c.teams.empty()) {
    TextTable teams(columns("team"));
    for (const CostRow& r : c.teams) AddCostRows(v, r, r.name, false, teams);
    out += teams.Render(o) + "\n";
  }
  TextTable tt(columns("namespace"));
  for (size_t i = 0; i < c.namespaces.size() && i < kRowsShown; ++i)
    AddCostRows(v, c.namespaces[i], c.namespaces[i].name, false, tt);
  for (const CostRow& r : c.idle) AddCostRows(v, r, "(idle)", false, tt);
  for (const CostRow& r : c.cards) AddCostRows(v, r, "(all cards)", true, tt);
  out += tt.Render(o);
  if (c.namespaces.size() > kRowsShown)
    out += Note(std::to_string(c.namespaces.size() - kRowsShown) +
                " more namespaces in /snapshot.json");
  out += WrappedNote("UTC days, today (" + DayText(c.today) +
                         ") included; cost only for hours on priced cards" +
                         (c.currency.empty() ? std::string() : " (" + c.currency + ")") + ".",
                     o.width);
  if (!c.unpriced_cards.empty()) {
    std::map<std::string, size_t> by_model;
    for (const UnpricedCardRow& u : c.unpriced_cards)
      ++by_model[(v.multi_cluster ? u.cluster + ": " : "") +
                 (u.card->model.empty() ? "(model unknown)" : u.card->model)];
    std::string models;
    for (const auto& [model, n] : by_model)
      models += (models.empty() ? "" : ", ") + model + " ×" + std::to_string(n);
    out += WrappedNote("Unpriced (no price rule matched): " +
                           Plural(c.unpriced_cards.size(), "card", "cards") + ": " + models,
                       o.width);
  }
  return out;
}

std::string RightsizingTable(const StatusView& v, const TableOptions& o) {
  if (v.rightsizing.empty()) return Note("No workload observed yet.");
  TextTable tt(WithCluster(v, {{"workload", false, true},
                               {"pods", true, false, true},
                               {"current -> recommended"},
                               {"reason"},
                               {"peak mem", true, false, true},
                               {"p95 util", true, false, true},
                               {"observed", true, false, true},
                               {"reclaim gpu-eq", true},
                               {"reclaim/h", true}}));
  for (size_t i = 0; i < v.rightsizing.size() && i < kRowsShown; ++i) {
    const RightsizingRow& r = v.rightsizing[i];
    const rightsizing::WorkloadView& w = *r.workload;
    const rightsizing::Recommendation& rec = w.recommendation;
    tt.Row(WithCluster(
        v, r.cluster,
        {T(w.id.Text()), Count(w.pods),
         T(rec.current + (rec.recommended == rec.current ? "" : " -> " + rec.recommended)),
         T(std::string(rightsizing::ReasonName(rec.reason))), K(w.memory_peak_bytes, BytesText),
         K(w.utilization_p95, PercentText), T(DurationText(w.observed_seconds)),
         T(GpuEqText(w.reclaimable_gpu_equivalents)),
         K(w.reclaimable_cost_per_hour, [&](double c) { return MoneyText(c, r.currency); })}));
  }
  std::string out = tt.Render(o);
  if (v.rightsizing.size() > kRowsShown)
    out += Note(std::to_string(v.rightsizing.size() - kRowsShown) + " more in /snapshot.json");
  const RightsizingTotals& t = v.rightsizing_totals;
  out += WrappedNote(
      "Reclaimable: " + GpuEqText(t.reclaimable_gpu_equivalents) + " GPU-eq over " +
          Plural(t.workloads, "workload", "workloads") +
          (t.reclaimable_cost_per_hour
               ? ", " + MoneyText(*t.reclaimable_cost_per_hour, t.currency) + " per hour"
               : std::string()) +
          ".",
      o.width);
  return out;
}

}  // namespace

std::string RenderTable(const StatusView& v, const TableOptions& o) {
  std::string out = "gpuattr " + UtcText(v.generated_unix) + "\n";
  out += Wrap(SummaryText(v), o.width) + "\n";
  if (!v.complete) out += "The first cycle has not finished yet.\n";
  out += Title("Clusters", o) + ClustersTable(v, o);
  out += Title("Whose GPUs", o) + WhoseTable(v, o);
  out += Title("What it costs", o) + CostsTable(v, o);
  out += Title("Idle holders", o) + IdleTable(v, o);
  out += Title("Rightsizing", o) + RightsizingTable(v, o);
  out += Title("Top pods by power", o) + TopTable(v, v.top_by_power, o);
  out += Title("Top pods by memory", o) + TopTable(v, v.top_by_memory, o);
  out += Title("Devices by node", o) + DevicesTable(v, o);
  out += Title("GPU health", o) + HealthTable(v, o);
  out += Title("Pending GPU pods", o) + PendingTable(v, o);
  out += Title("Exporters", o) + ExportersTable(v, o);
  out += Title("Probes", o) + ProbesTable(v, o);
  return out;
}

}  // namespace gpuattr::report
