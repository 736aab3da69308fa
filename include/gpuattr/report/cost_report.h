// `gpuattr report` (docs/accounting.md#the-report): GPU-hours and their cost over a range of UTC
// days, per namespace or team, from the daily totals in the state file alone. Pure: the ledger's
// accounting state in, one CostReport out, rendered as Markdown, CSV or JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/accounting/accounting.h"
#include "gpuattr/accounting/teams.h"
#include "gpuattr/ledger/state.h"

namespace gpuattr::report {

enum class CostGroupBy { kNamespace, kTeam };
std::optional<CostGroupBy> ParseCostGroupBy(std::string_view text);  // namespace | team
std::string_view CostGroupByName(CostGroupBy g);

// The group of namespaces without the team label (--group-by team).
inline constexpr std::string_view kNoTeam = accounting::kNoTeam;
// Σ groups + idle must equal the cards' hours within this, relative, on every basis.
inline constexpr double kCheckTolerance = 1e-9;

// One line of the report: GPU-hours (and cost of the priced ones) per basis.
struct CostLine {
  std::string name;                     // the namespace, the team, "idle" or "total"
  std::vector<std::string> namespaces;  // the namespaces in it (sorted; groups only)
  accounting::PerBasis hours{};
  accounting::PerBasis cost{};
  bool priced = false;  // some of its hours were on a priced card: cost applies
  // allocation − usage (signed). Groups and total (Σ groups); idle has none.
  double waste_hours() const;
  double waste_cost() const;
};

struct CostReport {
  std::string cluster;
  int64_t from_day = 0, to_day = 0;  // UTC days, inclusive
  CostGroupBy group_by = CostGroupBy::kNamespace;
  std::string team_label;        // --group-by team: the label read
  std::string currency;          // of the costs ("" when nothing was priced)
  int days_with_data = 0;        // days of the range the state file has totals for
  std::vector<CostLine> groups;  // by name; "(no team)" last
  CostLine idle;
  CostLine pods;   // Σ groups: its waste is the total's (over everything, allocation = usage)
  CostLine total;  // Σ groups + idle
  CostLine cards;  // the cards' own hours (the same on every basis) and cost
  bool balanced = true;  // total = cards on every basis, hours and cost, within kCheckTolerance
};

CostReport BuildCostReport(const ledger::AccountingState& state, std::string cluster,
                           int64_t from_day, int64_t to_day, CostGroupBy group_by);

// `v` with `places` decimals, trailing zeros dropped ("12.5", "0", "-0.25"): never an exponent.
std::string PlainDecimal(double v, int places);

// One file per output: cost_markdown.cc, cost_csv.cc, cost_json.cc.
std::string RenderCostMarkdown(const CostReport& report);
// RFC 4180: one header row, CRLF line ends, fields quoted when they hold a comma, a quote or a
// line break (quotes doubled); ISO dates; plain decimals.
std::string RenderCostCsv(const CostReport& report);
std::string RenderCostJson(const CostReport& report);

}  // namespace gpuattr::report
