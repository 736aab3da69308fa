#include "support/dashboards.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <regex>

#include "support/paths.h"

namespace gpuattr::testing {
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> FilesWithExtension(const fs::path& dir, const std::string& ext) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ext) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

void CollectPanels(const nlohmann::json& panels, std::vector<const nlohmann::json*>& out) {
  if (!panels.is_array()) return;
  for (const auto& p : panels) {
    out.push_back(&p);
    if (p.contains("panels")) CollectPanels(p["panels"], out);
  }
}

void CollectRuleExprs(const YAML::Node& groups, std::vector<std::string>& out) {
  for (const auto& g : groups)
    for (const auto& r : g["rules"])
      if (r["expr"]) out.push_back(r["expr"].as<std::string>());
}

}  // namespace

std::vector<fs::path> DashboardFiles() {
  return FilesWithExtension(SourceDir() / "grafana" / "dashboards", ".json");
}

std::vector<fs::path> AlertRuleFiles() {
  std::vector<fs::path> out;
  for (auto& p : FilesWithExtension(SourceDir() / "config" / "prometheus", ".yml"))
    if (p.filename() != "prometheus.yml") out.push_back(p);
  return out;
}

Result<nlohmann::json> LoadDashboard(const fs::path& path) {
  std::string text;
  try {
    text = ReadFile(path);
  } catch (const std::exception& e) {
    return MakeError(ErrorCode::kNotFound, e.what());
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return MakeError(ErrorCode::kInvalidArgument, path.string() + ": invalid JSON: " + e.what());
  }
}

std::vector<const nlohmann::json*> AllPanels(const nlohmann::json& dashboard) {
  std::vector<const nlohmann::json*> out;
  if (dashboard.contains("panels")) CollectPanels(dashboard["panels"], out);
  return out;
}

std::string PanelQuery::Where() const {
  return dashboard + " panel " + std::to_string(panel_id) + " \"" + panel_title + "\" target " +
         ref_id;
}

std::vector<PanelQuery> DashboardQueries(const nlohmann::json& dashboard, const std::string& file) {
  std::vector<PanelQuery> out;
  for (const nlohmann::json* p : AllPanels(dashboard)) {
    if (!p->contains("targets") || !(*p)["targets"].is_array()) continue;
    for (const auto& t : (*p)["targets"]) {
      PanelQuery q;
      q.dashboard = file;
      q.panel_id = p->value("id", 0);
      q.panel_title = p->value("title", "");
      q.ref_id = t.value("refId", "");
      q.expr = t.value("expr", "");
      out.push_back(std::move(q));
    }
  }
  return out;
}

std::vector<PanelQuery> DashboardAnnotationQueries(const nlohmann::json& dashboard,
                                                   const std::string& file) {
  std::vector<PanelQuery> out;
  if (!dashboard.contains("annotations")) return out;
  for (const auto& a : dashboard["annotations"].value("list", nlohmann::json::array())) {
    if (!a.contains("expr")) continue;  // Grafana's built-in annotations
    PanelQuery q;
    q.dashboard = file;
    q.panel_title = "annotation: " + a.value("name", "");
    q.expr = a.value("expr", "");
    out.push_back(std::move(q));
  }
  return out;
}

Result<std::vector<std::string>> RuleExpressions(const fs::path& path) {
  try {
    YAML::Node root = YAML::LoadFile(path.string());
    std::vector<std::string> out;
    CollectRuleExprs(root["groups"], out);
    return out;
  } catch (const YAML::Exception& e) {
    return MakeError(ErrorCode::kInvalidArgument, path.string() + ": " + e.what());
  }
}

std::set<std::string> GpuattrMetricNames(std::string_view expr) {
  // Label values sit between quotes: drop quoted strings first, then take identifiers. A name
  // inside a recorded series' name (level:gpuattr_x:operations) is no family of its own.
  static const std::regex quoted(R"("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')");
  static const std::regex name(R"((^|[^\w:])(gpuattr_[a-zA-Z0-9_]+)(?![\w:]))");
  const std::string bare = std::regex_replace(std::string(expr), quoted, "\"\"");
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(bare.begin(), bare.end(), name); it != std::sregex_iterator();
       ++it)
    out.insert((*it)[2].str());
  return out;
}

Result<std::set<std::string>> RecordedSeries(const fs::path& path) {
  try {
    YAML::Node root = YAML::LoadFile(path.string());
    std::set<std::string> out;
    for (const auto& g : root["groups"])
      for (const auto& r : g["rules"])
        if (r["record"]) out.insert(r["record"].as<std::string>());
    return out;
  } catch (const YAML::Exception& e) {
    return MakeError(ErrorCode::kInvalidArgument, path.string() + ": " + e.what());
  }
}

std::set<std::string> MetricNames(std::string_view expr) {
  static const std::regex quoted(R"("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')");
  static const std::regex braces(R"(\{[^}]*\}|\[[^\]]*\])");
  static const std::regex label_list(
      R"(\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\))");
  // label_values(metric, label) selects `metric`; label_values(label) selects nothing.
  static const std::regex label_values(R"(\blabel_values\s*\(([^,()]*)(,[^()]*)?\))");
  // The "(" of a function is looked at, not taken: it may open an argument that is a name.
  static const std::regex name(
      R"((^|[^\w$.:])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![a-zA-Z0-9_:])(?=(\s*\()?))");
  static const std::set<std::string> keywords = {
      "and",   "or", "unless",  "bool", "offset",   "inf",        "nan",
      "atan2", "by", "without", "on",   "ignoring", "group_left", "group_right"};
  std::string s = std::regex_replace(std::string(expr), quoted, "\"\"");
  s = std::regex_replace(s, braces, " ");
  s = std::regex_replace(s, label_list, " ");
  std::smatch lv;
  std::string rest;
  while (std::regex_search(s, lv, label_values)) {
    rest += lv.prefix().str() + " ";
    if (lv[2].matched) rest += lv[1].str();
    rest += " ";
    s = lv.suffix().str();
  }
  s = rest + s;
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(s.begin(), s.end(), name); it != std::sregex_iterator();
       ++it) {
    if ((*it)[3].matched) continue;  // a function or an aggregation
    const std::string n = (*it)[2].str();
    if (!keywords.count(n)) out.insert(n);
  }
  return out;
}

std::vector<PanelQuery> DashboardVariableQueries(const nlohmann::json& dashboard,
                                                 const std::string& file) {
  std::vector<PanelQuery> out;
  if (!dashboard.contains("templating")) return out;
  for (const auto& v : dashboard["templating"].value("list", nlohmann::json::array())) {
    if (v.value("type", "") != "query") continue;
    const nlohmann::json& q = v.contains("query") ? v["query"] : nlohmann::json();
    PanelQuery pq;
    pq.dashboard = file;
    pq.panel_title = "variable: " + v.value("name", "");
    pq.expr = q.is_string() ? q.get<std::string>() : q.is_object() ? q.value("query", "") : "";
    if (pq.expr.empty()) pq.expr = v.value("definition", "");
    out.push_back(std::move(pq));
  }
  return out;
}

std::string SubstituteVariables(std::string expr,
                                const std::map<std::string, std::string>& values) {
  std::vector<std::pair<std::string, std::string>> by_length(values.begin(), values.end());
  std::sort(by_length.begin(), by_length.end(),
            [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (size_t pos = expr.find(from); pos != std::string::npos; pos = expr.find(from, pos)) {
      expr.replace(pos, from.size(), to);
      pos += to.size();
    }
  };
  for (const auto& [name, value] : by_length) {
    replace_all("${" + name + "}", value);
    replace_all("$" + name, value);
  }
  return expr;
}

std::string GrafanaRegexAlternation(const std::vector<std::string>& values) {
  static const std::regex special(R"([.*+?^${}()|\[\]\\/])");
  std::string out = "(";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += "|";
    // Escaped once for the regex and once more for the PromQL string literal.
    out += std::regex_replace(values[i], special, R"(\\$&)");
  }
  return out + ")";
}

}  // namespace gpuattr::testing
