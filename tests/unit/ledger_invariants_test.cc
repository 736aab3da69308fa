// The ledger over every attribution scenario (fixtures/scenarios/attr-*): after two cycles 20 s
// apart with the same readings, every pod with a known power gained power × 20 J, every
// namespace counter equals the sum of its pods (none has left), idle pods report a 20 s run and
// busy ones 0 — so the energy invariant of docs/design.md#invariants holds wherever power does.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "golden/attribution_harness.h"
#include "gpuattr/ledger/ledger.h"

namespace gpuattr::ledger {
namespace {

namespace fs = std::filesystem;

class LedgerInvariants : public ::testing::TestWithParam<fs::path> {};

TEST_P(LedgerInvariants, EnergyAndIdleFollowTheAttribution) {
  auto c = gpuattr::testing::LoadAttributionCase(GetParam());
  ASSERT_TRUE(c.ok()) << c.error().message;
  const attribution::Attribution a = gpuattr::testing::AttributeCase(*c);
  Ledger ledger;
  ledger.Record(a, 1000);
  const LedgerView v = ledger.Record(a, 1020);
  EXPECT_TRUE(v.other_pods.empty());  // every pod attributed: all rows by index
  std::vector<PodLedger> rows;
  ForEachPodLedger(v, a.pods, [&](const PodLedgerRef& r) {
    rows.push_back({r.id, r.node, r.idle, r.idle_seconds, r.energy_joules});
  });
  ASSERT_EQ(rows.size(), a.pods.size());
  std::map<std::string, double> pod_sum;
  for (size_t i = 0; i < a.pods.size(); ++i) {
    const attribution::Pod& p = a.pods[i];
    const PodLedger& l = rows[i];
    SCOPED_TRACE(p.id.namespace_ + "/" + p.id.name);
    EXPECT_EQ(l.id, p.id);
    EXPECT_EQ(l.node, p.node);
    EXPECT_EQ(l.energy_joules.has_value(), p.power_watts.has_value());
    if (p.power_watts) {
      EXPECT_NEAR(*l.energy_joules, *p.power_watts * 20, 1e-9 * std::max(1.0, *p.power_watts));
      pod_sum[p.id.namespace_] += *l.energy_joules;
    }
    EXPECT_EQ(l.idle, p.idle);
    if (p.idle) {
      EXPECT_EQ(l.idle_seconds, *p.idle ? 20.0 : 0.0);
    }
  }
  ASSERT_EQ(v.namespaces.size(), pod_sum.size());
  for (const NamespaceLedger& n : v.namespaces)
    EXPECT_NEAR(n.energy_joules, pod_sum[n.name], 1e-9 * std::max(1.0, n.energy_joules)) << n.name;
}

std::string Name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string n = info.param.filename().string();
  for (char& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, LedgerInvariants,
                         ::testing::ValuesIn(gpuattr::testing::AttributionScenarioDirs()), Name);

}  // namespace
}  // namespace gpuattr::ledger
