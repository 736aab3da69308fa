// The status page's "What it costs" (docs/accounting.md#on-the-status-page): GPU-hours and cost
// per namespace, per team and for idle over today, the last 7 and the last 30 UTC days, one row
// per basis, and the cards no price rule matched (why a cost is missing).
#include <map>
#include <string>
#include <vector>

#include "gpuattr/report/text_format.h"
#include "html.h"

namespace gpuattr::report::page {
namespace {

// Columns: [cluster,] name, [team,] then hours and cost per window.
std::vector<Column> CostColumns(const StatusView& v, const std::string& first, bool team) {
  std::vector<Column> cols{{first}};
  if (team) cols.push_back({"team"});
  for (int days : ledger::kCostWindowDays) {
    cols.push_back({WindowText(days) + " GPU-h", true});
    cols.push_back({WindowText(days) + " cost", true});
  }
  return WithCluster(v, std::move(cols));
}

// The first basis shown, with the other bases small below it (one row per group keeps the
// section short); the cards' own hours are the same on every basis: the first alone.
Cell BasesCell(const StatusView& v, const accounting::PerBasis& values, bool money, bool card,
               const std::string& key) {
  const std::vector<accounting::Basis>& bases = v.costs.bases;
  if (bases.empty()) return Html("");
  auto text = [&](double x) { return money ? MoneyText(x, v.costs.currency) : GpuHoursText(x); };
  const double first = At(values, bases.front());
  std::string html = HtmlEscape(text(first));
  if (!card && bases.size() > 1) {
    std::string sub;
    for (size_t i = 1; i < bases.size(); ++i)
      sub += (sub.empty() ? "" : " · ") + std::string(accounting::BasisName(bases[i])) + " " +
             (money ? MoneyText(At(values, bases[i]), "") : GpuHoursText(At(values, bases[i])));
    html += "<span class=\"sub\">" + HtmlEscape(sub) + "</span>";
  }
  return {html, first, key, true};
}

void CostRows(const StatusView& v, const CostRow& r, Cell first, bool team, bool card, Table& t) {
  std::vector<Cell> cells{std::move(first)};
  if (team) cells.push_back(Text(r.team.value_or("")));
  for (const ledger::WindowHours& w : r.windows) {
    cells.push_back(BasesCell(v, w.hours, false, card, "gpu_hours"));
    cells.push_back(w.cost ? BasesCell(v, *w.cost, true, card, "cost")
                           : Cell{"-", std::nullopt, "cost", true});
  }
  t.Row(WithCluster(v, r.cluster, std::move(cells)), NsKey(v, r.cluster, r.name));
}

std::string Tiles(const StatusView& v) {
  std::string h = "<div class=\"tiles\">";
  for (size_t w = 0; w < ledger::kCostWindowDays.size(); ++w) {
    double hours = 0, idle = 0;
    std::optional<double> cost;
    const size_t b = v.costs.bases.empty() ? 0 : static_cast<size_t>(v.costs.bases.front());
    for (const CostRow& c : v.costs.cards) {
      hours += c.windows[w].hours[b];
      if (c.windows[w].cost) cost = cost.value_or(0) + (*c.windows[w].cost)[b];
    }
    for (const CostRow& c : v.costs.idle) idle += c.windows[w].hours[b];
    h += Tile(
        cost ? MoneyText(*cost, v.costs.currency) : GpuHoursText(hours) + " GPU-h",
        WindowText(ledger::kCostWindowDays[w]) + ": " + GpuHoursText(hours) + " GPU-hours, " +
            GpuHoursText(idle) + " idle" +
            (v.costs.bases.empty()
                 ? std::string()
                 : " (" + std::string(accounting::BasisName(v.costs.bases.front())) + ")") +
            (cost && !v.costs.unpriced_cards.empty() ? "; cost of the priced cards only" : ""));
  }
  return h + "</div>\n";
}

// The unpriced cards by model: how many, and on which nodes.
std::string Unpriced(const StatusView& v) {
  const CostsView& c = v.costs;
  if (c.unpriced_cards.empty()) return "";
  std::string h;
  if (c.priced_cards == 0) {
    h += "<p class=\"note\">No card is priced: GPU-hours are counted, no cost is invented. Give "
         "prices in <code>accounting.prices</code> (docs/accounting.md#prices).</p>\n";
  } else {
    h += "<p class=\"note\">" + HtmlEscape(Plural(c.unpriced_cards.size(), "card", "cards")) +
         " no price rule matched: their hours have no cost.</p>\n";
  }
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> by_model;
  for (const UnpricedCardRow& u : c.unpriced_cards)
    by_model[{u.cluster, u.card->model}].push_back(u.card->node + "/" + u.card->gpu);
  Table t("unpriced-table",
          WithCluster(v, {{"model"}, {"cards", true}, {"GPUs", false, false, true}}), false);
  for (const auto& [key, cards] : by_model) {
    std::string list;
    for (size_t i = 0; i < cards.size() && i < kRowsShown; ++i) list += (i ? ", " : "") + cards[i];
    if (cards.size() > kRowsShown)
      list += ", … " + std::to_string(cards.size() - kRowsShown) + " more";
    t.Row(WithCluster(v, key.first,
                      {Text(key.second.empty() ? "(model unknown)" : key.second),
                       Count(static_cast<double>(cards.size()), "cards"), Text(list)}));
  }
  return h + "<details><summary>Unpriced cards</summary>" + t.Html() + "</details>\n";
}

}  // namespace

std::string CostsSection(const StatusView& v) {
  const CostsView& c = v.costs;
  if (c.cards.empty())
    return Section("costs", "What it costs", Muted("No cycle has been accounted yet."));
  std::string h = Tiles(v);
  const bool teams = !c.teams.empty();
  if (teams) {
    h += "<h3>By team <span class=\"muted\">(label " + HtmlEscape(c.team_label) + ")</span></h3>";
    Table t("costs-team-table", CostColumns(v, "team", false), false);
    for (const CostRow& r : c.teams) CostRows(v, r, Text(r.name), false, false, t);
    h += t.Html();
    h += "<h3>By namespace</h3>";
  }
  Table t("costs-table", CostColumns(v, "namespace", teams), false);
  for (size_t i = 0; i < c.namespaces.size() && i < kRowsShown; ++i)
    CostRows(v, c.namespaces[i], Text(c.namespaces[i].name), teams, false, t);
  for (const CostRow& r : c.idle)
    CostRows(v, r, Html("<span class=\"muted\">idle</span>"), teams, false, t);
  for (const CostRow& r : c.cards) CostRows(v, r, Html("<b>all cards</b>"), teams, true, t);
  h += t.Html();
  if (c.namespaces.size() > kRowsShown)
    h += "<p class=\"note\">" + std::to_string(c.namespaces.size() - kRowsShown) +
         " more namespaces in <a href=\"/snapshot.json\">/snapshot.json</a>.</p>\n";
  h += "<p class=\"note\">UTC days, today (" + HtmlEscape(DayText(c.today)) +
       ") included, from the ledger's daily totals. ";
  if (!c.bases.empty())
    h += "Each cell: " + HtmlEscape(accounting::BasisName(c.bases.front())) +
         (c.bases.size() > 1 ? ", the other bases below it" : std::string()) + ". ";
  h += "allocation: what the scheduler handed out; memory: occupancy; usage: compute used. Idle: "
       "what no pod held. A cost is shown only for hours on priced cards";
  h += c.currency.empty() ? "." : ", in " + HtmlEscape(c.currency) + ".";
  h += " The bill over any range: <code>gpuattr report</code>.</p>\n";
  h += Unpriced(v);
  return Section("costs", "What it costs", h);
}

}  // namespace gpuattr::report::page
