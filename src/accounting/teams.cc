#include "gpuattr/accounting/teams.h"

namespace gpuattr::accounting {

NamespaceLabels TeamLabelsOf(const std::map<std::string, kube::Namespace>& namespaces,
                             const std::vector<std::string>& names) {
  NamespaceLabels out;
  for (const auto& [name, ns] : namespaces) {
    std::map<std::string, std::string>& labels = out[name];
    for (const std::string& label : names)
      if (auto it = ns.labels.find(label); it != ns.labels.end()) labels.emplace(label, it->second);
  }
  return out;
}

std::string PrometheusLabelFor(std::string_view label) {
  std::string out = "label_";
  for (char c : label) {
    const bool keep =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out += keep ? c : '_';
  }
  return out;
}

Status CheckNamespaceLabelNames(const std::vector<std::string>& names) {
  if (names.size() > kMaxNamespaceLabels)
    return MakeError(ErrorCode::kInvalidArgument,
                     std::to_string(names.size()) + " names, at most " +
                         std::to_string(kMaxNamespaceLabels) + " are published");
  std::map<std::string, std::string> seen;  // Prometheus label -> the name that made it
  for (const std::string& name : names) {
    if (name.empty()) return MakeError(ErrorCode::kInvalidArgument, "a label name is empty");
    auto [it, fresh] = seen.emplace(PrometheusLabelFor(name), name);
    if (!fresh)
      return MakeError(ErrorCode::kInvalidArgument, "\"" + it->second + "\" and \"" + name +
                                                        "\" are both published as " + it->first +
                                                        ": keep one");
  }
  return Status::Ok();
}

std::string TeamOf(const std::map<std::string, std::string>& labels,
                   const std::string& team_label) {
  auto it = labels.find(team_label);
  return it == labels.end() ? std::string(kNoTeam) : it->second;
}

}  // namespace gpuattr::accounting
