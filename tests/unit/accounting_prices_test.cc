// Prices per GPU-hour (docs/accounting.md#prices): ordered rules, first match wins, node labels
// compared as strings, the model by full-match regex; bad rules are errors naming the rule and
// key (config: exit 2).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuattr/accounting/prices.h"
#include "gpuattr/app/config.h"
#include "gpuattr/app/options.h"

namespace gpuattr::accounting {
namespace {

using ::testing::HasSubstr;

kube::Node NodeWith(std::map<std::string, std::string> labels) {
  kube::Node n;
  n.name = "n1";
  n.labels = std::move(labels);
  return n;
}

TEST(AccountingPrices, FirstMatchingRuleWins) {
  auto list = PriceList::Make({
      {{{"node.kubernetes.io/instance-type", "g6.xlarge"}}, "", 0.8},
      {{}, "NVIDIA A100.*", 3.0},
      {{}, "", 1.0},  // neither: every card
  });
  ASSERT_TRUE(list.ok()) << list.error().message;
  const kube::Node g6 = NodeWith({{"node.kubernetes.io/instance-type", "g6.xlarge"}});
  const kube::Node other = NodeWith({{"node.kubernetes.io/instance-type", "p4d.24xlarge"}});
  EXPECT_EQ(list->Price(&g6, "NVIDIA A100-SXM4-80GB"), 0.8);
  EXPECT_EQ(list->Price(&other, "NVIDIA A100-SXM4-80GB"), 3.0);
  EXPECT_EQ(list->Price(&other, "NVIDIA L4"), 1.0);
  EXPECT_EQ(list->Price(nullptr, "NVIDIA L4"), 1.0);  // unknown node: label rules cannot match
}

TEST(AccountingPrices, ModelIsAFullMatchAndNoMatchIsUnpriced) {
  auto list = PriceList::Make({{{}, "A100", 3.0}, {{{"zone", "1"}}, "", 2.0}});
  ASSERT_TRUE(list.ok());
  EXPECT_FALSE(list->Price(nullptr, "NVIDIA A100-SXM4-80GB"));  // "A100" is not the whole model
  EXPECT_EQ(list->Price(nullptr, "A100"), 3.0);
  const kube::Node numeric = NodeWith({{"zone", "1"}});
  EXPECT_EQ(list->Price(&numeric, "T4"), 2.0);
  const kube::Node other = NodeWith({{"zone", "01"}});  // strings, not numbers
  EXPECT_FALSE(list->Price(&other, "T4"));
  EXPECT_TRUE(PriceList().empty());
}

// PriceCards matches once per node and model, and gives each card what Price gives it: the
// cache never carries one node's price to the next node or to another model on the same node.
TEST(AccountingPrices, PriceCardsGivesEachCardItsOwnNodesAndModelsPrice) {
  auto list = PriceList::Make({
      {{{"spot", "true"}}, "", 1.0},
      {{}, "NVIDIA A100.*", 3.0},
  });
  ASSERT_TRUE(list.ok()) << list.error().message;
  kube::ClusterObjects objects;
  kube::Node spot = NodeWith({{"spot", "true"}});
  spot.name = "spot-1";
  kube::Node on_demand = NodeWith({});
  on_demand.name = "od-1";
  objects.nodes = {{spot.name, spot}, {on_demand.name, on_demand}};
  auto card = [](std::string node, std::string model) {
    CardAccount c;
    c.node = std::move(node);
    c.model = std::move(model);
    return c;
  };
  const std::vector<CardAccount> cards = {
      card("spot-1", "NVIDIA A100-SXM4-80GB"), card("spot-1", "NVIDIA A100-SXM4-80GB"),
      card("od-1", "NVIDIA A100-SXM4-80GB"),   card("od-1", "NVIDIA L4"),
      card("od-1", "NVIDIA A100-SXM4-80GB"),   card("gone", "NVIDIA A100-SXM4-80GB")};
  const std::vector<std::optional<double>> prices = PriceCards(*list, cards, objects);
  ASSERT_EQ(prices.size(), cards.size());
  for (size_t i = 0; i < cards.size(); ++i)
    EXPECT_EQ(prices[i], list->Price(objects.FindNode(cards[i].node), cards[i].model)) << i;
  EXPECT_EQ(prices[1], 1.0);
  EXPECT_EQ(prices[2], 3.0);
  EXPECT_EQ(prices[3], std::nullopt);
  EXPECT_EQ(prices[4], 3.0);
  EXPECT_EQ(prices[5], 3.0);  // a node without its object: label rules cannot match
  EXPECT_TRUE(PriceCards(PriceList{}, cards, objects).empty());
}

TEST(AccountingPrices, BadRulesAreErrorsNamingTheRule) {
  auto bad_regex = PriceList::Make({{{}, "ok.*", 1}, {{}, "NVIDIA (A100", 1}});
  ASSERT_FALSE(bad_regex.ok());
  EXPECT_THAT(bad_regex.error().message, HasSubstr("accounting.prices[1].model"));
  auto negative = PriceList::Make({{{}, "", -0.5}});
  ASSERT_FALSE(negative.ok());
  EXPECT_THAT(negative.error().message, HasSubstr("accounting.prices[0].per_gpu_hour"));
}

TEST(AccountingPrices, CurrencyIsAnIsoCode) {
  EXPECT_EQ(*ParseCurrency("EUR"), "EUR");
  EXPECT_FALSE(ParseCurrency("usd").ok());
  EXPECT_FALSE(ParseCurrency("DOLLARS").ok());
}

// --- the config file ---------------------------------------------------------------------------

std::string ConfigError(std::string_view text) {
  auto c = app::LoadConfig({}, "config.yaml", text);
  EXPECT_FALSE(c.ok()) << text;
  return c.ok() ? "" : c.error().message;
}

TEST(AccountingConfig, ReadsRulesCurrencyAndBases) {
  auto c = app::LoadConfig({}, "config.yaml", R"(
accounting:
  currency: EUR
  prices:
    - node_labels: {node.kubernetes.io/instance-type: g6.xlarge, zone: "1"}
      per_gpu_hour: 0.80
    - model: "NVIDIA A100.*"
      per_gpu_hour: 3
  bases: [allocation, usage]
)");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->accounting.currency, "EUR");
  ASSERT_EQ(c->accounting.prices.size(), 2u);
  EXPECT_EQ(c->accounting.prices[0].node_labels.at("zone"), "1");
  EXPECT_EQ(c->accounting.prices[0].per_gpu_hour, 0.8);
  EXPECT_EQ(c->accounting.prices[1].model, "NVIDIA A100.*");
  EXPECT_EQ(c->accounting.bases, (std::vector<Basis>{Basis::kAllocation, Basis::kUsage}));
}

TEST(AccountingConfig, DefaultsAreUsdNoPricesAndEveryBasis) {
  app::Config c;
  EXPECT_EQ(c.accounting.currency, "USD");
  EXPECT_TRUE(c.accounting.prices.empty());
  EXPECT_EQ(c.accounting.bases.size(), kBases);
  EXPECT_EQ(c.accounting.retention_days, 400);
  auto days = app::LoadConfig({}, "config.yaml", "accounting:\n  retention_days: 3660\n");
  ASSERT_TRUE(days.ok()) << days.error().message;
  EXPECT_EQ(days->accounting.retention_days, 3660);
}

TEST(AccountingConfig, BadInputNamesTheKey) {
  EXPECT_THAT(ConfigError("accounting:\n  prices:\n    - {per_gpu_hour: 1}\n"
                          "    - {model: \"NVIDIA (A100\", per_gpu_hour: 1}\n"),
              HasSubstr("accounting.prices[1].model"));
  EXPECT_THAT(ConfigError("accounting:\n  prices:\n    - {model: x, per_gpu_hour: -1}\n"),
              HasSubstr("accounting.prices[0].per_gpu_hour: must be a price of 0 or more"));
  EXPECT_THAT(ConfigError("accounting:\n  prices:\n    - {model: x}\n"),
              HasSubstr("accounting.prices[0].per_gpu_hour: missing"));
  EXPECT_THAT(ConfigError("accounting:\n  prices:\n    - {modle: x, per_gpu_hour: 1}\n"),
              HasSubstr("modle"));
  EXPECT_THAT(ConfigError("accounting:\n  bases: [allocation, compute]\n"),
              HasSubstr("accounting.bases[1]: unknown basis \"compute\""));
  EXPECT_THAT(ConfigError("accounting:\n  currency: dollars\n"), HasSubstr("accounting.currency"));
  EXPECT_THAT(ConfigError("accounting:\n  retention_days: 0\n"),
              HasSubstr("accounting.retention_days"));
  EXPECT_THAT(ConfigError("accounting:\n  retention_days: 3661\n"),
              HasSubstr("accounting.retention_days"));
  auto c = app::LoadConfig({}, "config.yaml", "accounting:\n  bases: [compute]\n");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, ErrorCode::kInvalidArgument);  // exit 2 (app/run.cc)
}

}  // namespace
}  // namespace gpuattr::accounting
