// Prices per GPU-hour (docs/accounting.md#prices): an ordered list of rules, the first that
// matches a card prices it; a card no rule matches is unpriced (counted in GPU-hours only, no
// cost is invented).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/accounting/accounting.h"
#include "gpuattr/kube/objects.h"
#include "gpuattr/util/status.h"

namespace gpuattr::accounting {

// One rule of `accounting.prices`. Every `node_labels` pair must equal the node's label (compared
// as strings); `model`, when given, must match the whole card model (ECMAScript regex). A rule
// with neither matches every card.
struct PriceRule {
  std::map<std::string, std::string> node_labels;
  std::string model;
  double per_gpu_hour = 0;
  bool operator==(const PriceRule&) const = default;
};

// "USD", "EUR": three upper-case letters (ISO 4217), else an error saying so.
Result<std::string> ParseCurrency(std::string_view text);

// Checks one rule (a price that is negative or not finite, a model that is no regex); the error
// says what is wrong, the caller names the rule.
Status CheckPriceRule(const PriceRule& rule);

// The rules, their regexes compiled once.
class PriceList {
 public:
  PriceList() = default;
  // Fails on the first bad rule, naming it: "accounting.prices[1].model: ...".
  static Result<PriceList> Make(const std::vector<PriceRule>& rules);

  // The price per GPU-hour of a card of `model` on `node` (null: the node object is unknown, so
  // only rules without node_labels can match), or absent when no rule matches.
  std::optional<double> Price(const kube::Node* node, std::string_view model) const;
  bool empty() const { return rules_.empty(); }

 private:
  struct Compiled {
    PriceRule rule;
    std::optional<std::regex> model;
  };
  std::vector<Compiled> rules_;
};

// Each card's price per GPU-hour (parallel to `cards`; empty when there are no rules). The rules
// are matched once per node and model, not once per card: a regex match costs microseconds and a
// node's cards are adjacent (8,000 cards a cycle at 1,000 nodes, docs/performance.md).
std::vector<std::optional<double>> PriceCards(const PriceList& prices,
                                              const std::vector<CardAccount>& cards,
                                              const kube::ClusterObjects& objects);
// The same for the attribution's cards (ForEachCardShare's card indexes).
std::vector<std::optional<double>> PriceCards(const PriceList& prices,
                                              const std::vector<attribution::Card>& cards,
                                              const kube::ClusterObjects& objects);

}  // namespace gpuattr::accounting
