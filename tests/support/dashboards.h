// The bundled Grafana dashboards (grafana/dashboards/*.json) and Prometheus alert rules
// (config/prometheus/*.yml) as tests see them: every query, the gpuattr_* families it names, and
// Grafana's template variables replaced the way Grafana replaces them.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/util/status.h"

namespace gpuattr::testing {

std::vector<std::filesystem::path> DashboardFiles();  // sorted
std::vector<std::filesystem::path> AlertRuleFiles();  // config/prometheus/*.yml but prometheus.yml

// Parses a dashboard; the error names the file and the parser's message.
Result<nlohmann::json> LoadDashboard(const std::filesystem::path& path);

// Every panel of a dashboard, rows' nested panels included.
std::vector<const nlohmann::json*> AllPanels(const nlohmann::json& dashboard);

struct PanelQuery {
  std::string dashboard;  // file name, e.g. "namespaces.json"
  int panel_id = 0;
  std::string panel_title;
  std::string ref_id;
  std::string expr;
  std::string Where() const;  // "namespaces.json panel 3 \"Power\" target B"
};
std::vector<PanelQuery> DashboardQueries(const nlohmann::json& dashboard, const std::string& file);
// The PromQL annotation queries of a dashboard (panel_title "annotation: <name>", panel_id 0).
std::vector<PanelQuery> DashboardAnnotationQueries(const nlohmann::json& dashboard,
                                                   const std::string& file);

// `expr` of every rule in an alert-rules file; the error names the file.
Result<std::vector<std::string>> RuleExpressions(const std::filesystem::path& path);

// The names the recording rules of a rules file record (`record:`); the error names the file.
Result<std::set<std::string>> RecordedSeries(const std::filesystem::path& path);

// gpuattr_* metric names in a PromQL expression (identifiers, not label values, nor the middle
// of a recorded series' name such as namespace:gpuattr_x:sum).
std::set<std::string> GpuattrMetricNames(std::string_view expr);

// Every metric name a PromQL expression (or a Grafana label_values() variable query) selects,
// whatever its prefix: identifiers that are not functions, keywords, label names (in {}, by(),
// on() ...) or label_values' label argument.
std::set<std::string> MetricNames(std::string_view expr);

// The PromQL of a dashboard's query variables (templating), as PanelQuery with panel_title
// "variable: <name>".
std::vector<PanelQuery> DashboardVariableQueries(const nlohmann::json& dashboard,
                                                 const std::string& file);

// Replaces $name and ${name} for each entry of `values` (longest names first, so $__range_s is
// not taken for $__range).
std::string SubstituteVariables(std::string expr, const std::map<std::string, std::string>& values);

// A multi-value selection as Grafana formats it for a Prometheus regex matcher: "(a|b\.c)".
std::string GrafanaRegexAlternation(const std::vector<std::string>& values);

}  // namespace gpuattr::testing
