// Invariants that hold on every scenario (docs/design.md#invariants): device power sums to card
// power; pods + unattributed = node power; a namespace's pods sum to the namespace series for
// memory and power; no device is counted twice; every ratio is in [0, 1].
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "golden/attribution_harness.h"

namespace gpuattr::attribution {
namespace {

namespace fs = std::filesystem;

bool Near(double a, double b, double rel = 1e-6) {
  return std::fabs(a - b) <= rel * std::max({1.0, std::fabs(a), std::fabs(b)});
}

void ExpectRatio(const std::optional<double>& v, const std::string& what) {
  if (!v) return;
  EXPECT_GE(*v, 0.0) << what;
  EXPECT_LE(*v, 1.0) << what;
}

void CheckInvariants(const Attribution& a) {
  // No device twice, every device in exactly one card.
  std::set<DeviceId> ids;
  for (const Device& d : a.devices) EXPECT_TRUE(ids.insert(d.id).second) << DeviceIdText(d.id);
  std::vector<int> in_cards(a.devices.size(), 0);
  double cards_total = 0;
  for (size_t ci = 0; ci < a.cards.size(); ++ci) {
    const Card& c = a.cards[ci];
    double sum = 0;
    bool any = false;
    for (size_t i : c.devices) {
      ASSERT_LT(i, a.devices.size());
      in_cards[i] += 1;
      EXPECT_EQ(a.devices[i].card, ci);
      if (a.devices[i].power_watts) {
        sum += *a.devices[i].power_watts;
        any = true;
      }
    }
    if (c.power_watts) {
      cards_total += *c.power_watts;
      EXPECT_TRUE(any) << "card " << c.node << "/" << c.gpu << " has power but no device has";
      EXPECT_TRUE(Near(sum, *c.power_watts, 1e-9))
          << "card " << c.node << "/" << c.gpu << ": devices " << sum << " W, card "
          << *c.power_watts << " W";
    } else {
      EXPECT_FALSE(any);
    }
  }
  for (size_t i = 0; i < a.devices.size(); ++i)
    EXPECT_EQ(in_cards[i], 1) << DeviceIdText(a.devices[i].id);

  // A device never gives away more than itself.
  std::map<size_t, double> shares, device_ge;
  for (const PodDevice& l : a.pod_devices) {
    shares[l.device] += l.share;
    device_ge[l.device] += l.gpu_equivalents;
  }
  for (const auto& [i, s] : shares) {
    EXPECT_LE(s, 1 + 1e-9) << DeviceIdText(a.devices[i].id);
    EXPECT_LE(device_ge[i], a.devices[i].gpu_equivalents + 1e-9);
  }

  // Pods + unattributed = node power.
  std::map<std::string, double> pod_power_by_node;
  for (const Pod& p : a.pods)
    if (p.power_watts) pod_power_by_node[p.node] += *p.power_watts;
  double nodes_total = 0;
  for (const NodePower& n : a.nodes) {
    if (!n.power_watts) continue;
    nodes_total += *n.power_watts;
    ASSERT_TRUE(n.unattributed_power_watts) << n.node;
    EXPECT_TRUE(Near(pod_power_by_node[n.node] + *n.unattributed_power_watts, *n.power_watts))
        << n.node;
    EXPECT_GE(*n.unattributed_power_watts, -1e-6 * *n.power_watts) << n.node;
  }
  EXPECT_TRUE(Near(nodes_total, cards_total));

  // Namespaces = Σ their pods; never more than the cards.
  std::map<std::string, std::optional<double>> mem, power;
  for (const Pod& p : a.pods) {
    auto& m = mem[p.id.namespace_];
    if (p.memory_used_bytes) m = m.value_or(0) + *p.memory_used_bytes;
    auto& w = power[p.id.namespace_];
    if (p.power_watts) w = w.value_or(0) + *p.power_watts;
  }
  double ns_power = 0;
  for (const Namespace& n : a.namespaces) {
    EXPECT_EQ(n.memory_used_bytes.has_value(), mem[n.name].has_value()) << n.name;
    if (n.memory_used_bytes) {
      EXPECT_TRUE(Near(*n.memory_used_bytes, *mem[n.name])) << n.name;
    }
    EXPECT_EQ(n.power_watts.has_value(), power[n.name].has_value()) << n.name;
    if (n.power_watts) {
      EXPECT_TRUE(Near(*n.power_watts, *power[n.name])) << n.name;
      ns_power += *n.power_watts;
    }
    ExpectRatio(n.utilization, "namespace " + n.name);
  }
  EXPECT_LE(ns_power, cards_total * (1 + 1e-9) + 1e-9);

  for (const Device& d : a.devices) {
    std::string what = DeviceIdText(d.id);
    ExpectRatio(d.utilization, what);
    ExpectRatio(d.sm_active, what);
    ExpectRatio(d.tensor_active, what);
    ExpectRatio(d.dram_active, what);
  }
  for (const Pod& p : a.pods) ExpectRatio(p.utilization, p.id.namespace_ + "/" + p.id.name);
  for (const PodDevice& l : a.pod_devices) ExpectRatio(l.utilization, "link " + l.pod.name);
}

class AttributionInvariants : public ::testing::TestWithParam<fs::path> {};

TEST_P(AttributionInvariants, Hold) {
  auto c = gpuattr::testing::LoadAttributionCase(GetParam());
  ASSERT_TRUE(c.ok()) << c.error().message;
  Attribution a = gpuattr::testing::AttributeCase(*c);
  EXPECT_FALSE(a.devices.empty());
  CheckInvariants(a);
}

// The daemon hands its readings over (app::RunStages(CycleInput&&)), and the GPU readings are
// freed inside attribution, before it builds its output: the same output as with readings kept
// (under the sanitizer build, any read of them after that is a use after free).
TEST_P(AttributionInvariants, ReadingsFreedWhenReadGiveTheSameOutput) {
  auto c = gpuattr::testing::LoadAttributionCase(GetParam());
  ASSERT_TRUE(c.ok()) << c.error().message;
  const model::CycleOutput kept = gpuattr::testing::RunCase(*c);
  app::CycleInput in;
  in.cluster = "test";
  in.objects = std::make_shared<const kube::ClusterObjects>(c->objects);
  in.readings = c->exporters;
  in.now_unix = 1764460800;
  app::StageState state;
  const model::CycleOutput freed = app::RunStages(std::move(in), state, {});
  EXPECT_EQ(gpuattr::testing::RenderAttribution(freed), gpuattr::testing::RenderAttribution(kept));

  int calls = 0;
  const Attribution direct = Attribute({"test", c->objects, c->exporters, {}}, [&] { ++calls; });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(direct.devices.size(), kept.attribution.devices.size());
}

std::string Name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string n = info.param.filename().string();
  for (char& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, AttributionInvariants,
                         ::testing::ValuesIn(gpuattr::testing::AttributionScenarioDirs()), Name);

// The real captures too, when they are beside the checkout.
TEST(AttributionInvariantsReal, HoldOnRealCaptures) {
  auto dir = gpuattr::testing::RealFixturesDir();
  if (!dir) GTEST_SKIP() << "../shared/fixtures-real not present";
  int checked = 0;
  for (const auto& e : fs::directory_iterator(*dir)) {
    if (e.path().extension() != ".prom") continue;
    std::string body = gpuattr::testing::ReadFile(e.path());
    auto ex = gpuattr::testing::ReadExporter("gpu-operator", "exporter", "exporter-node", body);
    if (!ex) continue;  // inference bodies and the like
    SCOPED_TRACE(e.path().filename().string());
    kube::ClusterObjects objects;
    std::vector<sources::ExporterReadings> exporters;
    exporters.push_back(std::move(*ex));
    Attribution a = Attribute(AttributionInput{"real", objects, std::move(exporters), {}});
    CheckInvariants(a);
    ++checked;
  }
  EXPECT_GT(checked, 5);
}

}  // namespace
}  // namespace gpuattr::attribution
