// `gpuattr report --output markdown` (docs/accounting.md#the-report): one table of the groups,
// idle and the total, then the check line. Names are code spans.
#include <sstream>

#include "gpuattr/report/cost_report.h"
#include "gpuattr/report/text_format.h"
#include "gpuattr/util/utc_day.h"

namespace gpuattr::report {
namespace {

constexpr int kHourPlaces = 3;
constexpr int kCostPlaces = 2;

// A name as a code span that cannot break the table: no backticks, no bars, one line.
std::string Code(std::string_view name) {
  std::string out = "`";
  for (char c : PrintableText(name)) {
    if (c == '`') continue;
    if (c == '|')
      out += "\\|";
    else
      out += c;
  }
  return out + "`";
}

std::string Hours(double v) { return PlainDecimal(v, kHourPlaces); }

void Row(std::ostringstream& out, const std::string& name, const std::string& namespaces,
         const CostLine& line, const CostLine* waste, bool team) {
  out << "| " << name << " |";
  if (team) out << " " << namespaces << " |";
  for (double h : line.hours) out << " " << Hours(h) << " |";
  out << " " << (waste ? Hours(waste->waste_hours()) : "") << " |";
  for (double c : line.cost)
    out << " " << (line.priced ? PlainDecimal(c, kCostPlaces) : "-") << " |";
  const std::string waste_cost = waste == nullptr ? ""
                                 : waste->priced  ? PlainDecimal(waste->waste_cost(), kCostPlaces)
                                                  : "-";
  out << " " << waste_cost << " |\n";
}

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + Code(n);
  return out;
}

}  // namespace

std::string RenderCostMarkdown(const CostReport& r) {
  const bool team = r.group_by == CostGroupBy::kTeam;
  std::ostringstream out;
  out << "# GPU-hours and cost, " << UtcDayText(r.from_day) << " to " << UtcDayText(r.to_day)
      << " (UTC)\n\n";
  out << "Cluster " << Code(r.cluster) << ", by "
      << (team ? "team (namespace label " + Code(r.team_label) + ")" : std::string("namespace"))
      << "; " << Plural(static_cast<size_t>(r.days_with_data), "day", "days")
      << " with data. GPU-hours on three bases; waste = allocation - usage. ";
  if (r.currency.empty())
    out << "No card was priced: no cost.\n\n";
  else
    out << "Cost in " << r.currency << ", of priced cards only (- where none was priced).\n\n";
  out << "| " << (team ? "team | namespaces" : "namespace")
      << " | allocation GPU-h | memory GPU-h | usage GPU-h | waste GPU-h | allocation cost | "
         "memory cost | usage cost | waste cost |\n";
  out << "|---|" << (team ? "---|" : "") << "---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const CostLine& g : r.groups)
    Row(out, g.name == kNoTeam && team ? std::string(kNoTeam) : Code(g.name), Joined(g.namespaces),
        g, &g, team);
  Row(out, "idle", "", r.idle, nullptr, team);
  Row(out, "**total**", "", r.total, &r.pods, team);  // waste: the groups' (idle has none)
  out << "\n";
  out << (r.balanced ? "Check: " : "Check FAILED: ") << (team ? "teams" : "namespaces")
      << " + idle = " << Hours(r.total.hours[0]) << " / " << Hours(r.total.hours[1]) << " / "
      << Hours(r.total.hours[2]) << " GPU-hours (allocation / memory / usage) "
      << (r.balanced ? "=" : "!=") << " the cards' " << Hours(r.cards.hours[0])
      << " GPU-hours, within 1e-9 relative on every basis.\n";
  return out.str();
}

}  // namespace gpuattr::report
