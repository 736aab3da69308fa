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
