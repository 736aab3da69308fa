// Price rules: validated at start (exit 2 naming the rule), matched per card each cycle
// (docs/accounting.md#prices).
#include "gpuattr/accounting/prices.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace gpuattr::accounting {
namespace {

Result<std::regex> CompileModel(const std::string& pattern) {
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "\"" + pattern + "\" is not a regular expression (" + e.what() + ")");
  }
}

}  // namespace

Result<std::string> ParseCurrency(std::string_view text) {
  const bool iso = text.size() == 3 && std::all_of(text.begin(), text.end(), [](char c) {
                     return std::isupper(static_cast<unsigned char>(c)) != 0;
                   });
  if (!iso)
    return MakeError(ErrorCode::kInvalidArgument,
                     "\"" + std::string(text) + "\" is not an ISO 4217 code such as USD or EUR");
  return std::string(text);
}

Status CheckPriceRule(const PriceRule& rule) {
  if (!std::isfinite(rule.per_gpu_hour) || rule.per_gpu_hour < 0) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", rule.per_gpu_hour);
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string("per_gpu_hour: must be a price of 0 or more, not ") + text);
  }
  if (!rule.model.empty()) {
    auto re = CompileModel(rule.model);
    if (!re.ok()) return MakeError(ErrorCode::kInvalidArgument, "model: " + re.error().message);
  }
  return Status::Ok();
}

Result<PriceList> PriceList::Make(const std::vector<PriceRule>& rules) {
  PriceList out;
  for (size_t i = 0; i < rules.size(); ++i) {
    const std::string where = "accounting.prices[" + std::to_string(i) + "].";
    if (Status s = CheckPriceRule(rules[i]); !s.ok())
      return MakeError(ErrorCode::kInvalidArgument, where + s.error().message);
    Compiled c{rules[i], std::nullopt};
    if (!rules[i].model.empty()) c.model = *CompileModel(rules[i].model);
    out.rules_.push_back(std::move(c));
  }
  return out;
}

std::optional<double> PriceList::Price(const kube::Node* node, std::string_view model) const {
  for (const Compiled& c : rules_) {
    bool match = true;
    for (const auto& [key, value] : c.rule.node_labels) {
      if (node == nullptr) {
        match = false;
        break;
      }
      auto it = node->labels.find(key);
      match = match && it != node->labels.end() && it->second == value;
    }
    if (match && c.model) match = std::regex_match(model.begin(), model.end(), *c.model);
    if (match) return c.rule.per_gpu_hour;
  }
  return std::nullopt;
}

namespace {

// Cards of either kind (CardAccount, attribution::Card): each has its node and model.
template <typename Card>
std::vector<std::optional<double>> PriceEach(const PriceList& prices,
                                             const std::vector<Card>& cards,
                                             const kube::ClusterObjects& objects) {
  std::vector<std::optional<double>> out;
  if (prices.empty()) return out;
  out.reserve(cards.size());
  const Card* last = nullptr;
  for (const Card& c : cards) {
    if (last == nullptr || c.node != last->node || c.model != last->model)
      out.push_back(prices.Price(objects.FindNode(c.node), c.model));
    else
      out.push_back(out.back());
    last = &c;
  }
  return out;
}

}  // namespace

std::vector<std::optional<double>> PriceCards(const PriceList& prices,
                                              const std::vector<CardAccount>& cards,
                                              const kube::ClusterObjects& objects) {
  return PriceEach(prices, cards, objects);
}

std::vector<std::optional<double>> PriceCards(const PriceList& prices,
                                              const std::vector<attribution::Card>& cards,
                                              const kube::ClusterObjects& objects) {
  return PriceEach(prices, cards, objects);
}

}  // namespace gpuattr::accounting
