// `gpuattr report --output csv` (docs/accounting.md#the-report), as finance tools import it:
// RFC 4180 (CRLF line ends, a field quoted only when it holds a comma, a quote or a line break,
// quotes doubled), one header row, ISO dates, plain decimals, an empty field where there is no
// value (no cost of an unpriced group, no waste of idle).
#include "gpuattr/report/cost_report.h"
#include "gpuattr/util/utc_day.h"

namespace gpuattr::report {
namespace {

constexpr int kPlaces = 6;

std::string Field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

struct Csv {
  const CostReport& r;
  std::string out;

  // `waste`: the line whose allocation − usage goes in the waste columns (none for idle).
  void Line(std::string_view kind, const CostLine& line, const CostLine* waste) {
    std::string namespaces;
    for (const std::string& n : line.namespaces) namespaces += (namespaces.empty() ? "" : " ") + n;
    out += UtcDayText(r.from_day) + "," + UtcDayText(r.to_day) + "," + Field(r.cluster) + "," +
           std::string(kind) + "," + Field(line.name) + "," + Field(namespaces);
    for (double h : line.hours) out += "," + PlainDecimal(h, kPlaces);
    out += "," + (waste ? PlainDecimal(waste->waste_hours(), kPlaces) : std::string());
    out += "," + (line.priced ? Field(r.currency) : std::string());
    for (double c : line.cost)
      out += "," + (line.priced ? PlainDecimal(c, kPlaces) : std::string());
    out += "," + (waste && waste->priced ? PlainDecimal(waste->waste_cost(), kPlaces) : "");
    out += "\r\n";
  }
};

}  // namespace

std::string RenderCostCsv(const CostReport& r) {
  Csv csv{r, {}};
  csv.out =
      "from,to,cluster,kind,group,namespaces,allocation_gpu_hours,memory_gpu_hours,"
      "usage_gpu_hours,waste_gpu_hours,currency,allocation_cost,memory_cost,usage_cost,"
      "waste_cost\r\n";
  for (const CostLine& g : r.groups) csv.Line(CostGroupByName(r.group_by), g, &g);
  csv.Line("idle", r.idle, nullptr);
  // The total's waste is the groups' (over everything, allocation = usage = the cards' hours).
  csv.Line("total", r.total, &r.pods);
  csv.Line("cards", r.cards, nullptr);
  return csv.out;
}

}  // namespace gpuattr::report
