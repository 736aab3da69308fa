// Teams (docs/accounting.md#teams): the labels of `accounting.namespace_labels` each namespace
// has, published as gpuattr_namespace_labels{namespace, label_<name>...} (kube-state-metrics'
// convention) and grouping the bill.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/kube/objects.h"
#include "gpuattr/util/status.h"

namespace gpuattr::accounting {

// Namespace -> the listed labels it has (label name as in Kubernetes -> value). Every namespace
// is there, also one with none of the labels.
using NamespaceLabels = std::map<std::string, std::map<std::string, std::string>>;

NamespaceLabels TeamLabelsOf(const std::map<std::string, kube::Namespace>& namespaces,
                             const std::vector<std::string>& names);

// The group of namespaces without the team label (the report's --group-by team, the status page).
inline constexpr std::string_view kNoTeam = "(no team)";
// A namespace's team: the value of `team_label` (the first of accounting.namespace_labels) among
// its labels, else kNoTeam.
std::string TeamOf(const std::map<std::string, std::string>& labels, const std::string& team_label);

// "label_" + the name with every character outside [a-zA-Z0-9_] as '_' (kube-state-metrics).
std::string PrometheusLabelFor(std::string_view label);

// At most this many (a series has cluster, namespace and these).
inline constexpr size_t kMaxNamespaceLabels = 10;

// The configured names: at most kMaxNamespaceLabels, each non-empty, and no two the same
// Prometheus label (`team.io/x` and `team_io_x` would be); the error names both.
Status CheckNamespaceLabelNames(const std::vector<std::string>& names);

}  // namespace gpuattr::accounting
