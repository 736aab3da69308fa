// GPU health (docs/design.md#health): the XID table, device assessment, the node
// roll-up, its place in the attribution, and the one-hot families on every scenario.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "golden/attribution_harness.h"
#include "gpuattr/health/health.h"
#include "gpuattr/metrics/health.h"
#include "gpuattr/report/status_page.h"
#include "support/family_collector.h"
#include "support/paths.h"
#include "support/promtool.h"
#include "support/snapshots.h"

namespace gpuattr::health {
namespace {

namespace fs = std::filesystem;

DeviceHealth Assess(const sources::DcgmValues& v, const std::map<int, double>& counts = {}) {
  HealthFields f;
  f.Add(v, counts);
  return AssessDevice(f);
}

std::vector<std::string> Names(const DeviceHealth& h) {
  std::vector<std::string> out;
  for (const Issue& i : h.issues) out.push_back(i.name);
  return out;
}

// ---- XID table ---------------------------------------------------------------------------------

TEST(HealthXid, TableIsSortedForLookup) { EXPECT_TRUE(XidTableIsSorted()); }

TEST(HealthXid, FallenOffTheBusIsCriticalWithItsMeaning) {
  EXPECT_EQ(LookupXid(79).severity, Severity::kCritical);
  EXPECT_EQ(LookupXid(79).meaning, "GPU has fallen off the bus");
  EXPECT_EQ(XidText(79), "XID 79: GPU has fallen off the bus");
}

TEST(HealthXid, ApplicationFaultsAreWarnings) {
  for (int xid : {13, 31, 43, 45}) {
    EXPECT_EQ(LookupXid(xid).severity, Severity::kWarning) << xid;
    EXPECT_FALSE(LookupXid(xid).meaning.empty()) << xid;
  }
  EXPECT_NE(LookupXid(31).meaning.find("GPU memory page fault"), std::string_view::npos);
}

TEST(HealthXid, HardwareXidsAreCritical) {
  for (int xid : {48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120}) {
    EXPECT_EQ(LookupXid(xid).severity, Severity::kCritical) << xid;
    EXPECT_FALSE(LookupXid(xid).meaning.empty()) << xid;
  }
}

TEST(HealthXid, UnknownXidIsCriticalAndPointsToTheDocumentation) {
  EXPECT_EQ(LookupXid(999).severity, Severity::kCritical);
  EXPECT_TRUE(LookupXid(999).meaning.empty());
  EXPECT_EQ(XidText(999), "XID 999 (see NVIDIA XID documentation)");
}

// ---- Device assessment -----------------------------------------------------------------------

TEST(HealthDevice, Xid79IsCriticalWithItsMeaning) {
  sources::DcgmValues v;
  v.last_xid = 79;
  DeviceHealth h = Assess(v);
  EXPECT_EQ(h.state, State::kCritical);
  ASSERT_EQ(h.issues.size(), 1u);
  EXPECT_EQ(h.issues[0].name, "xid");
  EXPECT_EQ(h.issues[0].severity, Severity::kCritical);
  EXPECT_EQ(h.issues[0].detail, "last XID 79: GPU has fallen off the bus");
}

TEST(HealthDevice, Xid31IsAWarning) {
  sources::DcgmValues v;
  v.last_xid = 31;
  DeviceHealth h = Assess(v);
  EXPECT_EQ(h.state, State::kWarning);
  ASSERT_EQ(h.issues.size(), 1u);
  EXPECT_EQ(h.issues[0].severity, Severity::kWarning);
  EXPECT_NE(h.issues[0].detail.find("GPU memory page fault"), std::string::npos);
}

TEST(HealthDevice, LastXidZeroIsOk) {
  sources::DcgmValues v;
  v.last_xid = 0;
  DeviceHealth h = Assess(v);
  EXPECT_EQ(h.state, State::kOk);
  EXPECT_TRUE(h.issues.empty());
}

TEST(HealthDevice, TwoDoubleBitEccErrorsAreCritical) {
  sources::DcgmValues v;
  v.ecc_dbe_volatile = 2;
  DeviceHealth h = Assess(v);
  EXPECT_EQ(h.state, State::kCritical);
  ASSERT_EQ(Names(h), std::vector<std::string>{"ecc_dbe"});
  EXPECT_EQ(h.issues[0].severity, Severity::kCritical);
  // The label carries no count (a growing count must not start a new series); the text does.
  EXPECT_EQ(h.issues[0].detail, "uncorrectable (double-bit) ECC errors since the driver loaded");
  EXPECT_EQ(h.issues[0].text, "2 uncorrectable (double-bit) ECC errors since the driver loaded");
  v.ecc_dbe_volatile = 5;
  EXPECT_EQ(Assess(v).issues[0].detail, h.issues[0].detail);
}

TEST(HealthDevice, RowRemapFailureIsCritical) {
  sources::DcgmValues v;
  v.row_remap_failure = 1;
  DeviceHealth h = Assess(v);
  EXPECT_EQ(h.state, State::kCritical);
  ASSERT_EQ(Names(h), std::vector<std::string>{"row_remap_failed"});
}

TEST(HealthDevice, ThreeRowsPendingRemapAreAWarning) {
  sources::DcgmValues v;
  v.uncorrectable_remapped_rows = 3;
  v.row_remap_failure = 0;
  DeviceHealth h = Assess(v);
  EXPECT_EQ(h.state, State::kWarning);
  ASSERT_EQ(h.issues.size(), 1u);
  EXPECT_EQ(h.issues[0].name, "rows_pending_remap");
  EXPECT_EQ(h.issues[0].detail, "rows pending remap");
  EXPECT_EQ(h.issues[0].text, "3 rows pending remap");
}

TEST(HealthDevice, RowRemapPendingFlagAloneIsAWarning) {
  sources::DcgmValues v;
  v.row_remap_pending = 1;
  DeviceHealth h = Assess(v);
  EXPECT_EQ(h.state, State::kWarning);
  EXPECT_EQ(Names(h), std::vector<std::string>{"rows_pending_remap"});
}

TEST(HealthDevice, ThrottleMask0xc1GivesTwoWarningsAndIgnoresIdle) {
  sources::DcgmValues v;
  v.clocks_event_reasons = 0xc1;
  DeviceHealth h = Assess(v);
  EXPECT_EQ(h.state, State::kWarning);
  EXPECT_EQ(Names(h), (std::vector<std::string>{"throttle_hw_power_brake", "throttle_hw_thermal"}));
  for (const Issue& i : h.issues) EXPECT_EQ(i.severity, Severity::kWarning);
}

TEST(HealthDevice, EveryHarmfulThrottleBitHasItsIssue) {
  sources::DcgmValues v;
  v.clocks_event_reasons = 0x8 | 0x20 | 0x40 | 0x80;
  EXPECT_EQ(Names(Assess(v)),
            (std::vector<std::string>{"throttle_hw_power_brake", "throttle_hw_slowdown",
                                      "throttle_hw_thermal", "throttle_sw_thermal"}));
}

TEST(HealthDevice, SwPowerCapAloneIsUnknownNotOk) {
  sources::DcgmValues v;
  v.clocks_event_reasons = 0x4;
  DeviceHealth h = Assess(v);
  EXPECT_EQ(h.state, State::kUnknown);
  EXPECT_TRUE(h.issues.empty());
  v.clocks_event_reasons = 0x1 | 0x2 | 0x4 | 0x10 | 0x100;
  EXPECT_EQ(Assess(v).state, State::kUnknown);
}

TEST(HealthDevice, NoHealthFieldIsUnknown) {
  sources::DcgmValues v;
  v.power_watts = 300;
  v.gpu_util = 0.5;
  DeviceHealth h = Assess(v);
  EXPECT_EQ(h.state, State::kUnknown);
  EXPECT_TRUE(h.issues.empty());
}

TEST(HealthDevice, ExporterHealthStatusPassWarnFail) {
  sources::DcgmValues v;
  v.health_status = 0;
  EXPECT_EQ(Assess(v).state, State::kOk);
  v.health_status = 10;
  DeviceHealth warn = Assess(v);
  EXPECT_EQ(warn.state, State::kWarning);
  EXPECT_EQ(Names(warn), std::vector<std::string>{"health_check"});
  v.health_status = 20;
  EXPECT_EQ(Assess(v).state, State::kCritical);
}

TEST(HealthDevice, ExporterXidCountsAddIssuesButNotTheLastXidTwice) {
  sources::DcgmValues v;
  v.last_xid = 79;
  DeviceHealth h = Assess(v, {{79, 2}, {13, 1}, {31, 0}});
  ASSERT_EQ(h.issues.size(), 2u);
  EXPECT_EQ(h.issues[0].detail, "last XID 79: GPU has fallen off the bus");  // critical first
  EXPECT_EQ(h.issues[1].severity, Severity::kWarning);
  EXPECT_NE(h.issues[1].detail.find("XID 13: Graphics Engine Exception"), std::string::npos);
  EXPECT_EQ(h.issues[1].detail.find("1 time"), std::string::npos) << h.issues[1].detail;
  EXPECT_NE(h.issues[1].text.find("1 time "), std::string::npos) << h.issues[1].text;
  EXPECT_EQ(Assess(v, {{79, 2}, {13, 7}}).issues[1].detail, h.issues[1].detail);

  sources::DcgmValues none;
  DeviceHealth zero = Assess(none, {{31, 0}});  // the count family was exported: all clear
  EXPECT_EQ(zero.state, State::kOk);
}

TEST(HealthDevice, WorstSeverityWinsAndCriticalIssuesComeFirst) {
  sources::DcgmValues v;
  v.clocks_event_reasons = 0x40;
  v.ecc_dbe_volatile = 1;
  DeviceHealth h = Assess(v);
  EXPECT_EQ(h.state, State::kCritical);
  EXPECT_EQ(Names(h), (std::vector<std::string>{"ecc_dbe", "throttle_hw_thermal"}));
  EXPECT_NE(h.issues[0].text.find("1 uncorrectable (double-bit) ECC error "), std::string::npos);
}

TEST(HealthDevice, FieldsGatherOverLines) {
  HealthFields f;
  sources::DcgmValues a, b;
  a.last_xid = 0;
  a.clocks_event_reasons = 0x40;
  b.last_xid = 31;
  b.clocks_event_reasons = 0x8;
  f.Add(a, {});
  f.Add(b, {});
  EXPECT_EQ(f.last_xid, 31);
  EXPECT_EQ(f.clocks_event_reasons, 0x48u);
  EXPECT_EQ(Names(AssessDevice(f)),
            (std::vector<std::string>{"throttle_hw_slowdown", "throttle_hw_thermal", "xid"}));
  // A non-integer mask is no mask.
  HealthFields g;
  sources::DcgmValues c;
  c.clocks_event_reasons = 64.5;
  g.Add(c, {});
  EXPECT_FALSE(g.clocks_event_reasons);
}

// ---- Node roll-up ----------------------------------------------------------------------------

kube::Node GpuNode(const std::string& name, const std::string& resource, int64_t capacity,
                   int64_t allocatable) {
  kube::Node n;
  n.name = name;
  n.capacity[resource] = capacity;
  n.allocatable[resource] = allocatable;
  return n;
}

TEST(HealthNode, OneOkAndFortySevenUnknownIsOk) {
  std::vector<State> states(47, State::kUnknown);
  states.push_back(State::kOk);
  EXPECT_EQ(RollUp(states, false), State::kOk);
  std::vector<DeviceState> devices;
  for (State s : states) devices.push_back({"a100-1", s});
  std::map<std::string, kube::Node> nodes{
      {"a100-1", GpuNode("a100-1", "nvidia.com/mig-1g.10gb", 48, 48)}};
  auto out = AssessNodes(devices, nodes);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].state, State::kOk);
  EXPECT_TRUE(out[0].reasons.empty());
}

TEST(HealthNode, WorstReportedStateWins) {
  EXPECT_EQ(RollUp(std::vector<State>{State::kOk, State::kWarning, State::kUnknown}, false),
            State::kWarning);
  EXPECT_EQ(RollUp(std::vector<State>{State::kCritical, State::kOk}, false), State::kCritical);
  EXPECT_EQ(RollUp(std::vector<State>{State::kUnknown, State::kUnknown}, false), State::kUnknown);
  EXPECT_EQ(RollUp(std::vector<State>{}, false), State::kUnknown);
}

TEST(HealthNode, CapacityAboveAllocatableIsCritical) {
  std::map<std::string, kube::Node> nodes{{"n1", GpuNode("n1", "nvidia.com/gpu", 8, 7)}};
  std::vector<DeviceState> devices{{"n1", State::kOk}};
  auto out = AssessNodes(devices, nodes);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].state, State::kCritical);
  ASSERT_FALSE(out[0].reasons.empty());
  EXPECT_EQ(out[0].reasons[0], "nvidia.com/gpu: capacity 8, allocatable 7");
  // Even with no device reporting.
  EXPECT_EQ(AssessNodes({}, nodes)[0].state, State::kCritical);
  // Non-GPU resources do not count.
  kube::Node other = GpuNode("n2", "nvidia.com/gpu", 4, 4);
  other.capacity["example.com/fpga"] = 2;
  other.allocatable["example.com/fpga"] = 1;
  EXPECT_TRUE(WithdrawnGpuResources(other).empty());
}

TEST(HealthNode, EveryGpuNodeGetsASeriesAndOnlyThose) {
  std::map<std::string, kube::Node> nodes{{"idle-gpu", GpuNode("idle-gpu", "nvidia.com/gpu", 0, 0)},
                                          {"cpu", GpuNode("cpu", "example.com/fpga", 1, 1)}};
  std::vector<DeviceState> devices{{"seen-only", State::kWarning}};
  auto out = AssessNodes(devices, nodes);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].node, "idle-gpu");
  EXPECT_EQ(out[0].state, State::kUnknown);
  EXPECT_EQ(out[1].node, "seen-only");
  EXPECT_EQ(out[1].state, State::kWarning);
  EXPECT_EQ(out[1].reasons, std::vector<std::string>{"1 warning device"});
}

}  // namespace
}  // namespace gpuattr::health

// ---- Through the attribution and the published families ---------------------------------------

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using health::State;

model::CycleOutput AttributeText(const kube::ClusterObjects& objects, const std::string& node,
                                 const std::string& body) {
  auto e = ReadExporter("gpu", "dcgm-" + node, node, body);
  EXPECT_TRUE(e.ok());
  std::vector<sources::ExporterReadings> exporters;
  if (e.ok()) exporters.push_back(std::move(*e));
  return RunCase(AttributionCase{"case", objects, std::move(exporters)});
}

const attribution::Device* FindDevice(const attribution::Attribution& a, const std::string& gpu,
                                      std::optional<std::string> instance) {
  for (const auto& d : a.devices)
    if (d.id.gpu == gpu && d.id.gpu_instance == instance) return &d;
  return nullptr;
}

std::string MigLine(const std::string& family, const std::string& gpu, const std::string& id,
                    const std::string& value) {
  return family + "{gpu=\"" + gpu + "\",UUID=\"GPU-" + gpu +
         "\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"" + id + "\"} " + value + "\n";
}

TEST(HealthAttribution, MigSlicesInheritTheirCardsHealth) {
  kube::ClusterObjects objects;
  std::string body = MigLine("DCGM_FI_DEV_POWER_USAGE", "0", "7", "100") +
                     MigLine("DCGM_FI_DEV_POWER_USAGE", "0", "8", "100") +
                     MigLine("DCGM_FI_DEV_XID_ERRORS", "0", "7", "79") +  // on one slice only
                     MigLine("DCGM_FI_DEV_POWER_USAGE", "1", "1", "50") +
                     MigLine("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "1", "1", "0");
  const model::CycleOutput out = AttributeText(objects, "n1", body);
  const attribution::Attribution& a = out.attribution;
  const auto* s7 = FindDevice(a, "0", "7");
  const auto* s8 = FindDevice(a, "0", "8");
  const auto* s1 = FindDevice(a, "1", "1");
  ASSERT_TRUE(s7 && s8 && s1);
  EXPECT_EQ(s7->health.state, State::kCritical);
  EXPECT_EQ(s8->health.state, State::kCritical);
  ASSERT_EQ(s8->health.issues.size(), 1u);
  EXPECT_EQ(s8->health.issues[0].detail, "last XID 79: GPU has fallen off the bus");
  EXPECT_EQ(s1->health.state, State::kOk);
  ASSERT_EQ(out.node_health.size(), 1u);
  EXPECT_EQ(out.node_health[0].state, State::kCritical);
}

void ExpectOneHot(const model::CycleOutput& out, const std::string& what);

// The device_health series of one device (or card: no gpu_instance), "" when it has none.
std::string HealthSeries(const model::CycleOutput& out, const std::string& gpu,
                         const std::string& gpu_instance) {
  metrics::FamilyCollector w;
  metrics::WriteHealth(out, w);
  std::string states;
  for (const auto& f : std::move(w).Finish()) {
    if (f.name != "gpuattr_device_health") continue;
    for (const auto& m : f.metric) {
      std::string g, gi, state;
      for (const auto& l : m.label) {
        if (l.name == "gpu") g = l.value;
        if (l.name == "gpu_instance") gi = l.value;
        if (l.name == "state") state = l.value;
      }
      if (g == gpu && gi == gpu_instance)
        states += state + "=" + std::to_string(static_cast<int>(m.gauge.value)) + " ";
    }
  }
  return states;
}

// A MIG card's health is published once, without slice labels; its slices have no series while
// they share it, and their own as soon as one differs (the writer compares, it does not assume).
TEST(HealthAttribution, OneHotOncePerCardAndForASliceOnlyWhenItDiffers) {
  kube::ClusterObjects objects;
  std::string body = MigLine("DCGM_FI_DEV_POWER_USAGE", "0", "7", "100") +
                     MigLine("DCGM_FI_DEV_POWER_USAGE", "0", "8", "100") +
                     MigLine("DCGM_FI_DEV_XID_ERRORS", "0", "7", "79");
  model::CycleOutput out = AttributeText(objects, "n1", body);
  ASSERT_EQ(out.attribution.cards.size(), 1u);
  EXPECT_EQ(out.attribution.cards[0].health.state, State::kCritical);
  EXPECT_EQ(HealthSeries(out, "0", ""), "ok=0 warning=0 critical=1 unknown=0 ");
  EXPECT_EQ(HealthSeries(out, "0", "7"), "");
  EXPECT_EQ(HealthSeries(out, "0", "8"), "");

  attribution::Device* s8 = nullptr;
  for (auto& d : out.attribution.devices)
    if (d.id.gpu_instance == "8") s8 = &d;
  ASSERT_NE(s8, nullptr);
  s8->health.state = State::kWarning;
  EXPECT_EQ(HealthSeries(out, "0", ""), "ok=0 warning=0 critical=1 unknown=0 ");
  EXPECT_EQ(HealthSeries(out, "0", "7"), "");
  EXPECT_EQ(HealthSeries(out, "0", "8"), "ok=0 warning=1 critical=0 unknown=0 ");
  ExpectOneHot(out, "slice 8 warning");
}

TEST(HealthAttribution, MigOnlyNodeWithoutHealthFieldsIsUnknownNeverOk) {
  kube::ClusterObjects objects;
  kube::Node n;
  n.name = "mig-node";
  n.capacity["nvidia.com/mig-1g.10gb"] = 2;
  n.allocatable["nvidia.com/mig-1g.10gb"] = 2;
  objects.nodes[n.name] = n;
  std::string body = MigLine("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "0", "7", "0.5") +
                     MigLine("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "0", "8", "0.1");
  const model::CycleOutput out = AttributeText(objects, "mig-node", body);
  const attribution::Attribution& a = out.attribution;
  ASSERT_EQ(a.devices.size(), 2u);
  for (const auto& d : a.devices) EXPECT_EQ(d.health.state, State::kUnknown);
  ASSERT_EQ(out.node_health.size(), 1u);
  EXPECT_EQ(out.node_health[0].node, "mig-node");
  EXPECT_EQ(out.node_health[0].state, State::kUnknown);
}

TEST(HealthAttribution, ProcessExporterDevicesAreUnknown) {
  kube::ClusterObjects objects;
  auto e = ReadExporter("gpu", "proc", "p1",
                        "gpu_process_memory_bytes{namespace=\"a\",pod=\"x\",pid=\"1\",gpu=\"0\","
                        "uuid=\"P0\"} 1e9\n"
                        "gpu_total_memory_bytes{gpu=\"0\",uuid=\"P0\"} 8e9\n"
                        "gpu_power_usage_watts{gpu=\"0\",uuid=\"P0\"} 80\n");
  ASSERT_TRUE(e.ok());
  std::vector<sources::ExporterReadings> exporters;
  exporters.push_back(std::move(*e));
  const model::CycleOutput out = RunCase(AttributionCase{"case", objects, std::move(exporters)});
  const attribution::Attribution& a = out.attribution;
  ASSERT_EQ(a.devices.size(), 1u);
  EXPECT_EQ(a.devices[0].health.state, State::kUnknown);
  ASSERT_EQ(out.node_health.size(), 1u);
  EXPECT_EQ(out.node_health[0].state, State::kUnknown);
}

// Every gpuattr_device_health and gpuattr_node_health label set (without `state`) has the four
// states with exactly one at 1; every card (no gpu_instance) and every node with a device has its
// series, and a MIG slice only when its state differs from its card's.
void ExpectOneHot(const model::CycleOutput& out, const std::string& what) {
  const attribution::Attribution& a = out.attribution;
  metrics::FamilyCollector w;
  metrics::WriteHealth(out, w);
  auto families = std::move(w).Finish();
  std::map<std::string, std::map<std::string, double>> by_family_key;
  size_t device_series = 0, node_series = 0;
  for (const auto& f : families) {
    if (f.name != "gpuattr_device_health" && f.name != "gpuattr_node_health") continue;
    for (const auto& m : f.metric) {
      std::string key = f.name, state;
      for (const auto& l : m.label)
        if (l.name == "state")
          state = l.value;
        else
          key += "," + l.name + "=" + l.value;
      EXPECT_TRUE(by_family_key[key].emplace(state, m.gauge.value).second) << what << key;
      (f.name == "gpuattr_device_health" ? device_series : node_series) += 1;
    }
  }
  for (const auto& [key, states] : by_family_key) {
    EXPECT_EQ(states.size(), 4u) << what << " " << key;
    double ones = 0;
    for (const auto& [state, value] : states) {
      EXPECT_TRUE(value == 0 || value == 1) << what << " " << key << " " << state;
      ones += value;
    }
    EXPECT_EQ(ones, 1) << what << " " << key;
  }
  size_t own_slices = 0;
  for (const auto& d : a.devices)
    own_slices += d.id.gpu_instance && d.health.state != a.cards.at(d.card).health.state;
  EXPECT_EQ(device_series, 4 * (a.cards.size() + own_slices)) << what;
  for (const auto& c : a.cards) {
    const std::string key =
        "gpuattr_device_health,cluster=" + a.cluster + ",gpu=" + c.gpu + ",node=" + c.node;
    ASSERT_TRUE(by_family_key.count(key)) << what << " " << key;
    EXPECT_EQ(by_family_key[key][std::string(StateName(c.health.state))], 1) << what << " " << key;
  }
  std::set<std::string> device_nodes;
  for (const auto& d : a.devices) device_nodes.insert(d.id.node);
  std::set<std::string> health_nodes;
  for (const auto& n : out.node_health) health_nodes.insert(n.node);
  for (const std::string& n : device_nodes) EXPECT_TRUE(health_nodes.count(n)) << what << " " << n;
  EXPECT_EQ(node_series, 4 * out.node_health.size()) << what;
}

TEST(HealthAttribution, OneHotOnEveryAttributionScenario) {
  auto dirs = AttributionScenarioDirs();
  ASSERT_FALSE(dirs.empty());
  for (const fs::path& dir : dirs) {
    auto c = LoadAttributionCase(dir);
    ASSERT_TRUE(c.ok()) << c.error().message;
    const model::CycleOutput out = RunCase(*c);
    ExpectOneHot(out, dir.filename().string());
    // GPU nodes from the objects get a series too.
    for (const auto& [key, node] : c->objects.nodes) {
      if (!health::IsGpuNode(node)) continue;
      const std::string& name = key;  // clang 14 cannot capture a structured binding
      EXPECT_TRUE(std::any_of(out.node_health.begin(), out.node_health.end(),
                              [&](const health::NodeHealth& h) { return h.node == name; }))
          << dir.filename() << " " << name;
    }
  }
}

TEST(HealthAttribution, HealthScenarioStates) {
  auto c = LoadAttributionCase(FixturePath("scenarios/attr-health"));
  ASSERT_TRUE(c.ok()) << c.error().message;
  const model::CycleOutput out = RunCase(*c);
  const attribution::Attribution& a = out.attribution;
  std::map<std::string, State> devices, nodes;
  for (const auto& d : a.devices) devices[attribution::DeviceIdText(d.id)] = d.health.state;
  for (const auto& n : out.node_health) nodes[n.node] = n.state;
  EXPECT_EQ(devices, (std::map<std::string, State>{{"health-a/0", State::kOk},
                                                   {"health-a/1", State::kWarning},
                                                   {"health-a/2", State::kCritical},
                                                   {"health-a/3", State::kWarning},
                                                   {"health-mig/0:7", State::kOk},
                                                   {"health-mig/0:8", State::kOk},
                                                   {"health-mig/0:9", State::kOk},
                                                   {"health-mig/1:1", State::kUnknown}}));
  EXPECT_EQ(nodes, (std::map<std::string, State>{{"health-a", State::kCritical},
                                                 {"health-idle", State::kUnknown},
                                                 {"health-mig", State::kOk}}));
}

TEST(HealthAttribution, OneHotOnEveryRealCapture) {
  auto dir = RealFixturesDir();
  if (!dir) GTEST_SKIP() << "../shared/fixtures-real is absent";
  kube::ClusterObjects objects;
  size_t read = 0;
  for (const auto& entry : fs::directory_iterator(*dir)) {
    if (entry.path().extension() != ".prom") continue;
    std::string body = ReadFile(entry.path());
    auto e = ReadExporter("gpu", "exporter", "node-x", body);
    if (!e.ok()) continue;  // inference servers and the like
    ++read;
    std::vector<sources::ExporterReadings> exporters;
    exporters.push_back(std::move(*e));
    const model::CycleOutput out = RunCase(AttributionCase{"case", objects, std::move(exporters)});
    const attribution::Attribution& a = out.attribution;
    EXPECT_FALSE(a.devices.empty()) << entry.path().filename();
    ExpectOneHot(out, entry.path().filename().string());
  }
  EXPECT_GT(read, 5u);
}

TEST(HealthAttribution, RealXidCaptureGivesCriticalAndWarningDevices) {
  auto dir = RealFixturesDir();
  if (!dir || !fs::exists(*dir / "dcgm-xid-extra.prom") ||
      !fs::exists(*dir / "dcgm_pod_labels.prom"))
    GTEST_SKIP() << "real captures absent";
  // The XID lines are a separate capture of the same node: two exporters' lines on one node.
  std::vector<sources::ExporterReadings> exporters;
  for (const char* name : {"dcgm_pod_labels.prom", "dcgm-xid-extra.prom"}) {
    auto e = ReadExporter("gpu", "dcgm", "exporter-node", ReadFile(*dir / name));
    ASSERT_TRUE(e.ok()) << name;
    exporters.push_back(std::move(*e));
  }
  kube::ClusterObjects objects;
  const model::CycleOutput out = RunCase(AttributionCase{"case", objects, std::move(exporters)});
  const attribution::Attribution& a = out.attribution;
  const auto* g0 = FindDevice(a, "0", std::nullopt);
  const auto* g2 = FindDevice(a, "2", std::nullopt);
  const auto* g3 = FindDevice(a, "3", std::nullopt);
  ASSERT_TRUE(g0 && g2 && g3);
  EXPECT_EQ(g0->health.state, State::kOk);
  EXPECT_EQ(g2->health.state, State::kWarning);
  EXPECT_EQ(g3->health.state, State::kCritical);
  ASSERT_EQ(g3->health.issues.size(), 1u);
  EXPECT_EQ(g3->health.issues[0].detail, "last XID 79: GPU has fallen off the bus");
  ASSERT_EQ(out.node_health.size(), 1u);
  EXPECT_EQ(out.node_health[0].state, State::kCritical);
  // The published text passes promtool (labels with free text included).
  std::string text = RenderAttribution(out);
  EXPECT_NE(text.find("gpuattr_device_health_issue{"), std::string::npos);
  auto lint = gpuattr::testing::PromtoolCheckMetrics(text);
  if (!lint.available) return;  // the health checks above still count
  EXPECT_EQ(lint.exit_code, 0) << lint.printed;
  EXPECT_EQ(lint.printed, "");
}

TEST(HealthStatusPage, ListsProblemDevicesWithTheirIssueText) {
  model::Snapshot s;
  s.complete = true;
  model::ClusterSnapshot c;
  c.cluster = "prod<eu>";
  const model::CycleOutput rich = RichOutput(c.cluster);
  MutableOutput(c).attribution = rich.attribution;
  MutableOutput(c).node_health = rich.node_health;
  s.clusters.push_back(c);
  std::string page = report::RenderStatusPage(s, 1764460800);
  EXPECT_NE(page.find("<section id=\"health\"><h2>GPU health</h2>"), std::string::npos);
  EXPECT_NE(page.find("n1/0"), std::string::npos);
  EXPECT_NE(page.find("warning: last XID 31: GPU memory page fault"), std::string::npos);
  EXPECT_NE(page.find("prod&lt;eu&gt;"), std::string::npos);
  EXPECT_EQ(page.find("prod<eu>"), std::string::npos);

  // The page gives the counts the `detail` label leaves out.
  attribution::Attribution& a = MutableOutput(s.clusters[0]).attribution;
  ASSERT_FALSE(a.devices.empty());
  sources::DcgmValues ecc;
  ecc.ecc_dbe_volatile = 4;
  health::HealthFields fields;
  fields.Add(ecc, {});
  a.devices[0].health = health::AssessDevice(fields);
  page = report::RenderStatusPage(s, 1764460800);
  EXPECT_NE(page.find("critical: 4 uncorrectable (double-bit) ECC errors since the driver loaded"),
            std::string::npos);
  EXPECT_EQ(a.devices[0].health.issues[0].detail.find('4'), std::string::npos);

  MutableOutput(s.clusters[0]) = model::CycleOutput{};
  std::string quiet = report::RenderStatusPage(s, 1764460800);
  EXPECT_NE(quiet.find("No GPU or node reports a warning or a critical problem."),
            std::string::npos);
}

}  // namespace
}  // namespace gpuattr::testing
