// The settings of what GPUs cost (docs/accounting.md) and what workloads should ask for
// (docs/rightsizing.md): a part of the settings table (settings.cc), kept apart for its size.
#include "config_values.h"
#include "gpuattr/app/settings.h"
#include "gpuattr/util/strings.h"
#include "setting_ops.h"
#include "setting_parts.h"

namespace gpuattr::app {
namespace {

using G = SettingGroup;
#define MEMBER GPUATTR_MEMBER

// accounting.prices[i]: {node_labels: {label: value}, model: REGEX, per_gpu_hour: PRICE}.
Result<accounting::PriceRule> PriceRuleItem(const yaml::Reader& r, const YAML::Node& node,
                                            const std::string& path) {
  GPUATTR_RETURN_IF_ERROR(r.Keys(node, path, {"node_labels", "model", "per_gpu_hour"}));
  accounting::PriceRule rule;
  const YAML::Node labels = yaml::Reader::Child(node, "node_labels");
  if (labels.IsDefined()) {
    if (!labels.IsMap()) return r.Fail(path + ".node_labels", "expected a mapping of label: value");
    for (const auto& kv : labels) {
      if (!kv.first.IsScalar() || !kv.second.IsScalar())
        return r.Fail(path + ".node_labels", "expected a mapping of label: value");
      rule.node_labels[kv.first.Scalar()] = kv.second.Scalar();
    }
  }
  GPUATTR_RETURN_IF_ERROR(r.String(node, path, "model", rule.model));
  const YAML::Node price = yaml::Reader::Child(node, "per_gpu_hour");
  if (!price.IsDefined()) return r.Fail(path + ".per_gpu_hour", "missing (a price per GPU-hour)");
  GPUATTR_ASSIGN_OR_RETURN(rule.per_gpu_hour, r.Parse(price, path + ".per_gpu_hour", ParseNumber));
  // "model: ..." or "per_gpu_hour: ...": the field at fault, then what is wrong with it.
  if (Status s = accounting::CheckPriceRule(rule); !s.ok()) {
    const size_t colon = s.message().find(": ");
    return r.Fail(path + "." + s.message().substr(0, colon), s.message().substr(colon + 2));
  }
  return rule;
}

Result<accounting::Basis> BasisItem(const yaml::Reader& r, const YAML::Node& node,
                                    const std::string& path) {
  if (!node.IsScalar()) return r.Fail(path, "expected allocation, memory or usage");
  auto basis = accounting::ParseBasis(Trim(node.Scalar()));
  if (!basis)
    return r.Fail(path,
                  "unknown basis \"" + node.Scalar() + "\" (use allocation, memory or usage)");
  return *basis;
}

Result<std::string> LabelNameItem(const yaml::Reader& r, const YAML::Node& node,
                                  const std::string& path) {
  if (!node.IsScalar() || Trim(node.Scalar()).empty())
    return r.Fail(path, "expected a namespace label name, e.g. team");
  return std::string(Trim(node.Scalar()));
}

}  // namespace

std::vector<Setting> AccountingSettings() {
  return {
      Value({.key = "accounting.currency",
             .value_name = "CODE",
             .group = G::kAccounting,
             .help = "ISO 4217 code of the prices, the `currency` label of every cost series.",
             .default_text = "USD"},
            MEMBER(accounting.currency), accounting::ParseCurrency),
      List({.key = "accounting.prices",
            .value_name = "LIST",
            .group = G::kAccounting,
            .help = "prices per GPU-hour: ordered {node_labels, model, per_gpu_hour} rules, the "
                    "first matching a card wins; an unpriced card gets no cost.",
            .default_text = "[]"},
           MEMBER(accounting.prices), PriceRuleItem),
      List({.key = "accounting.bases",
            .value_name = "LIST",
            .group = G::kAccounting,
            .help = "GPU-hour bases to publish: allocation, memory, usage.",
            .default_text = "[allocation, memory, usage]"},
           MEMBER(accounting.bases), BasisItem),
      List({.key = "accounting.namespace_labels",
            .value_name = "LIST",
            .group = G::kAccounting,
            .help = "namespace labels published as gpuattr_namespace_labels{label_<name>} (the "
                    "teams of the bill); needs list and watch on namespaces.",
            .default_text = "[team]"},
           MEMBER(accounting.namespace_labels), LabelNameItem),
      Value({.key = "accounting.retention_days",
             .value_name = "DAYS",
             .group = G::kAccounting,
             .help = "UTC days of daily GPU-hour totals per namespace kept in the state file for "
                     "`gpuattr report` (1..3660).",
             .default_text = "400"},
            MEMBER(accounting.retention_days),
            [](std::string_view text) { return ParseInt(text, 1, 3660); }),
  };
}

std::vector<Setting> RightsizingSettings() {
  return {
      Value({.key = "rightsizing.window",
             .value_name = "DURATION",
             .group = G::kRightsizing,
             .help = "how far back each workload's GPU memory peak and utilisation are kept for "
                     "its recommendation (docs/rightsizing.md); 7d, 24h.",
             .default_text = "7d"},
            MEMBER(rightsizing.window), ParsePositiveDuration),
      Value({.key = "rightsizing.min_observation",
             .value_name = "DURATION",
             .group = G::kRightsizing,
             .help = "a workload observed for less than this gets reason insufficient_data "
                     "(no larger than rightsizing.window).",
             .default_text = "24h"},
            MEMBER(rightsizing.min_observation), ParsePositiveDuration),
      Value({.key = "rightsizing.headroom",
             .value_name = "RATIO",
             .group = G::kRightsizing,
             .help = "added to what a workload used before it is compared with the offerings: "
                     "needs = peak memory, p95 compute × (1 + headroom); 0..1.",
             .default_text = "0.2"},
            MEMBER(rightsizing.headroom), ParseRatio),
  };
}

}  // namespace gpuattr::app
