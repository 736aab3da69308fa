// The status page's "Rightsizing" (docs/rightsizing.md#on-the-status-page): the workloads with the
// most reclaimable GPU-equivalents first, each with current → recommended and why.
#include <string>

#include "gpuattr/report/text_format.h"
#include "html.h"

namespace gpuattr::report::page {

std::string RightsizingSection(const StatusView& v) {
  const RightsizingTotals& t = v.rightsizing_totals;
  if (v.rightsizing.empty())
    return Section("rightsizing", "Rightsizing",
                   Muted("No workload observed yet: rightsizing needs GPU pods with data."));
  std::string h = "<div class=\"tiles\">";
  h += Tile(GpuEqText(t.reclaimable_gpu_equivalents) + " GPU-eq",
            "reclaimable over " + Plural(t.workloads, "workload", "workloads"),
            t.reclaimable_gpu_equivalents > 0 ? "warn" : "");
  h += Tile(t.reclaimable_cost_per_hour ? MoneyText(*t.reclaimable_cost_per_hour, t.currency) + "/h"
                                        : std::string(kUnknownText),
            t.reclaimable_cost_per_hour ? "reclaimable cost per hour (priced cards)"
                                        : "reclaimable cost: no card is priced");
  h += "</div>\n";
  Table table("rightsizing-table", WithCluster(v, {{"workload"},
                                                   {"kind"},
                                                   {"pods", true},
                                                   {"current → recommended"},
                                                   {"reason"},
                                                   {"peak memory", true},
                                                   {"p95 utilisation", true},
                                                   {"observed", true},
                                                   {"reclaimable GPU-eq", true},
                                                   {"reclaimable / h", true}}));
  for (size_t i = 0; i < v.rightsizing.size() && i < kRowsShown; ++i) {
    const RightsizingRow& r = v.rightsizing[i];
    const rightsizing::WorkloadView& w = *r.workload;
    const rightsizing::Recommendation& rec = w.recommendation;
    std::string change = HtmlEscape(rec.current);
    if (rec.recommended != rec.current) change += " → <b>" + HtmlEscape(rec.recommended) + "</b>";
    table.Row(
        WithCluster(
            v, r.cluster,
            {Html("<span class=\"ns\">" + HtmlEscape(w.id.namespace_) + "/</span>" +
                  HtmlEscape(w.id.name)),
             Text(w.id.kind), Count(static_cast<double>(w.pods), "pods"), Html(change),
             Text(std::string(rightsizing::ReasonName(rec.reason))),
             Number(w.memory_peak_bytes, BytesText, "memory_peak_bytes"),
             Util(w.utilization_p95, "utilization_p95_ratio"),
             Number(std::optional<double>(w.observed_seconds), DurationText, "observed_seconds"),
             Number(std::optional<double>(w.reclaimable_gpu_equivalents), GpuEqText,
                    "reclaimable_gpu_equivalents"),
             Number(
                 w.reclaimable_cost_per_hour, [&](double c) { return MoneyText(c, r.currency); },
                 "reclaimable_cost_per_hour")}),
        NsKey(v, r.cluster, w.id.Text()));
  }
  h += table.Html();
  if (v.rightsizing.size() > kRowsShown)
    h += "<p class=\"note\">" + std::to_string(v.rightsizing.size() - kRowsShown) +
         " more in <a href=\"/snapshot.json\">/snapshot.json</a>.</p>\n";
  h += "<p class=\"note\">Recommendations only: gpuattr changes nothing. Reclaimable: the share "
       "held beyond the recommended one; its cost at the price of each pod's card. Reasons: "
       "docs/rightsizing.md#reading-a-recommendation.</p>\n";
  return Section("rightsizing", "Rightsizing", h);
}

}  // namespace gpuattr::report::page
