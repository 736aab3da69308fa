// The status view (report/view.h) and the four outputs built from it: the status page, the
// terminal table, the JSON snapshot and the Markdown report. One hand-made cluster whose numbers
// are known: a busy whole GPU, an MIG card with two idle slices and a critical issue on both, a
// pending pod, a namespace that only requests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "gpuattr/metrics/families.h"
#include "gpuattr/report/outputs.h"
#include "gpuattr/report/status_page.h"
#include "gpuattr/report/text_format.h"
#include "gpuattr/report/view.h"
#include "support/snapshots.h"

namespace gpuattr::report {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kNow = 1764460800;  // 2025-11-30 00:00:00 UTC

attribution::Device MakeDevice(std::string gpu, std::optional<std::string> instance, size_t card) {
  attribution::Device d;
  d.id = {"n1", std::move(gpu), std::move(instance)};
  d.card = card;
  d.model = "NVIDIA A100-SXM4-80GB";
  return d;
}

attribution::Pod MakePod(std::string ns, std::string name, double watts, double mem, double util,
                         bool idle) {
  attribution::Pod p;
  p.id = {std::move(ns), std::move(name)};
  p.node = "n1";
  p.power_watts = watts;
  p.memory_used_bytes = mem;
  p.utilization = util;
  p.idle = idle;
  p.devices = 1;
  return p;
}

model::ClusterSnapshot Cluster(const std::string& name = "lab") {
  model::ClusterSnapshot c;
  c.cluster = name;
  c.latest.up = true;
  c.cycles = 3;
  c.cycle_duration_seconds = 0.5;
  c.last_success_unix_seconds = kNow - 12;
  c.last_attempt_unix_seconds = kNow - 12;
  model::CycleOutput& out = gpuattr::testing::MutableOutput(c);
  attribution::Attribution& a = out.attribution;
  a.cluster = name;

  // Card 0: a whole GPU, busy. Card 1: two 1g.10gb slices with the same critical XID.
  attribution::Device whole = MakeDevice("0", std::nullopt, 0);
  whole.uuid = "GPU-0";
  whole.utilization = 0.5;
  whole.memory_used_bytes = 10 * kGiB;
  whole.memory_total_bytes = 80 * kGiB;
  whole.power_watts = 300;
  whole.temperature_celsius = 61;
  whole.health.state = health::State::kOk;
  health::Issue xid{"xid", health::Severity::kCritical, "last XID 79: GPU has fallen off the bus",
                    "last XID 79: GPU has fallen off the bus"};
  attribution::Device s7 = MakeDevice("1", "7", 1), s8 = MakeDevice("1", "8", 1);
  for (attribution::Device* s : {&s7, &s8}) {
    s->uuid = "GPU-1";
    s->mig_profile = "1g.10gb";
    s->gpu_equivalents = 1.0 / 7;
    s->memory_total_bytes = 9.5 * kGiB;
    s->power_watts = 20;
    s->health.state = health::State::kCritical;
    s->health.issues = {xid};
  }
  s7.utilization = 0.0;
  s7.memory_used_bytes = 2 * kGiB;
  s8.utilization = 0.02;
  s8.memory_used_bytes = 5 * kGiB;
  a.devices = {whole, s7, s8};
  a.cards = {{"n1", "0", "GPU-0", "NVIDIA A100-SXM4-80GB", 300.0, {0}, {}},
             {"n1", "1", "GPU-1", "NVIDIA A100-SXM4-80GB", 140.0, {1, 2}, {}}};

  attribution::Pod train = MakePod("a", "train", 300, 10 * kGiB, 0.5, false);
  train.gpu_equivalents = 1;
  attribution::Pod nb = MakePod("b", "nb<1>", 20, 2 * kGiB, 0.0, true);
  nb.gpu_equivalents = 1.0 / 7;
  attribution::Pod nb2 = MakePod("b", "nb2", 20, 5 * kGiB, 0.02, true);
  nb2.gpu_equivalents = 1.0 / 7;
  a.pods = {train, nb, nb2};
  for (auto [pod, device] : {std::pair{&train, 0}, {&nb, 1}, {&nb2, 2}}) {
    attribution::PodDevice pd;
    pd.pod = pod->id;
    pd.device = static_cast<size_t>(device);
    a.pod_devices.push_back(pd);
  }
  attribution::Namespace na{"a", 1, 1.0, 1, 0.5, 10 * kGiB, 0.0, 0, 300.0};
  attribution::Namespace nsb{"b", 2, 2.0 / 7, 2, 0.01, 7 * kGiB, 7 * kGiB, 2, 40.0};
  a.namespaces = {na, nsb};
  a.nodes = {{"n1", attribution::Tier::kDcgmPod, 440.0, 100.0}};
  out.node_health = {{"n1", health::State::kCritical, {"2 critical devices"}}};

  out.allocation.namespaces = {
      {"a", {{"nvidia.com/gpu", 1}}, {}, 0},
      {"b", {{"nvidia.com/mig-1g.10gb", 2}}, {{"nvidia.com/gpu.shared", 3}}, 0},
      {"c", {}, {}, 1}};
  out.allocation.nodes = {{"n1", 8, 8, 0, 3, 3, 3}};
  allocation::PendingPod waiting;
  waiting.pod = {"c", "wait"};
  waiting.age_seconds = 3700;
  waiting.requested = {{"nvidia.com/gpu", 4}};
  waiting.hint = {"nvidia.com/gpu", "exceeds_node_max",
                  "Needs more gpu on one node than any node has.",
                  "Needs 4 gpu on one node; the most any node has is 1 | pipes"};
  out.allocation.pending = {waiting};

  out.ledger.namespaces = {{"a", 9e6, 3.6e6, 86400}, {"b", 100, 50, 7200}, {"gone", 5, 5, 60}};
  // nb and nb2 by their index in a.pods, as the ledger names attributed pods; a kept pod that is
  // not attributed has a named row, and no row of the status view.
  out.ledger.attributed_pods = {{1, true, true, true, 3600.0, 10.0},
                                {2, true, true, true, 60.0, 20.0}};
  out.ledger.other_pods = {{{"b", "kept"}, "n1", std::nullopt, std::nullopt, 5.0}};

  auto report = std::make_shared<discovery::DiscoveryReport>();
  report->cluster = name;
  report->exporters.push_back(
      {"gpu-operator", "dcgm-x", "n1", 9400, "dcgm", true, 200, "", 0.05, 60000, 0});
  report->exporters.push_back(
      {"ml", "vllm-0", "n1", 8000, "unknown", false, 503, "503 Service Unavailable", 0.01, 0, 0});
  report->outcome_counts = {{"accepted", 1}, {"error", 1}};
  c.latest.discovery = report;
  return c;
}

model::Snapshot OneCluster() {
  model::Snapshot s;
  s.complete = true;
  s.clusters.push_back(Cluster());
  return s;
}

std::vector<std::string> Names(const std::vector<PodRow>& rows) {
  std::vector<std::string> out;
  for (const PodRow& p : rows) out.push_back(p.pod->id.Text());
  return out;
}

// --- the view ------------------------------------------------------------------------------------

TEST(StatusView, NamespacesMergeUseRequestsPendingAndEnergyBiggestFirst) {
  StatusView v = BuildStatusView(OneCluster(), kNow, {});
  ASSERT_EQ(v.namespaces.size(), 3u);  // "gone" has energy only: not a GPU user now
  EXPECT_EQ(v.namespaces[0].name, "a");
  EXPECT_EQ(v.namespaces[1].name, "b");
  EXPECT_EQ(v.namespaces[2].name, "c");
  const NamespaceRow& b = v.namespaces[1];
  EXPECT_EQ(b.requested_devices, 2);   // the MIG slices
  EXPECT_EQ(b.requested_replicas, 3);  // replicas are never devices
  EXPECT_EQ(b.idle_pods, 2u);
  EXPECT_EQ(b.energy_24h_joules, 50);
  EXPECT_EQ(b.energy_window_seconds, 7200);
  EXPECT_EQ(v.namespaces[0].energy_24h_joules, 3.6e6);
  const NamespaceRow& c = v.namespaces[2];
  EXPECT_EQ(c.pending_pods, 1u);
  EXPECT_FALSE(c.power_watts.has_value());  // unknown, not 0
  EXPECT_FALSE(c.energy_24h_joules.has_value());
}

TEST(StatusView, IdleHoldersByMemoryWithTheirIdleRun) {
  StatusView v = BuildStatusView(OneCluster(), kNow, {});
  EXPECT_THAT(Names(v.idle), ElementsAre("b/nb2", "b/nb<1>"));
  EXPECT_EQ(v.idle[1].idle_seconds, 3600);
  EXPECT_EQ(v.totals.idle_pods, 2u);
  EXPECT_EQ(v.totals.idle_memory_bytes, 7 * kGiB);
}

TEST(StatusView, TopPodsAreCutToTheLimit) {
  ViewOptions o;
  o.top_pods = 2;
  StatusView v = BuildStatusView(OneCluster(), kNow, o);
  EXPECT_THAT(Names(v.top_by_power), ElementsAre("a/train", "b/nb2"));  // ties by name
  EXPECT_THAT(Names(v.top_by_memory), ElementsAre("a/train", "b/nb2"));
  EXPECT_EQ(v.pods.size(), 3u);  // every pod stays in the view
}

TEST(StatusView, CardsNestTheirSlices) {
  StatusView v = BuildStatusView(OneCluster(), kNow, {});
  ASSERT_EQ(v.nodes.size(), 1u);
  const NodeRow& n = v.nodes[0];
  EXPECT_EQ(n.power_watts, 440);
  EXPECT_EQ(n.unattributed_power_watts, 100);
  EXPECT_EQ(n.capacity, 8);
  ASSERT_EQ(n.cards.size(), 2u);
  EXPECT_FALSE(n.cards[0].mig);
  EXPECT_THAT(n.cards[0].devices[0].pods, ElementsAre("a/train"));
  const CardRow& mig = n.cards[1];
  EXPECT_TRUE(mig.mig);
  EXPECT_EQ(mig.slices, 2u);
  EXPECT_EQ(mig.card->power_watts, 140);
  EXPECT_EQ(mig.memory_used_bytes, 7 * kGiB);
  EXPECT_DOUBLE_EQ(*mig.utilization, 0.01);  // GPU-equivalent-weighted mean of the slices
  EXPECT_EQ(mig.health, health::State::kCritical);
  EXPECT_EQ(mig.devices[0].device->id.gpu_instance, "7");
  EXPECT_THAT(mig.devices[1].pods, ElementsAre("b/nb2"));
}

TEST(StatusView, HealthIsOneLinePerCardWithItsSlicesIssuesOnce) {
  StatusView v = BuildStatusView(OneCluster(), kNow, {});
  ASSERT_EQ(v.health.size(), 1u);  // not one per slice; the node's "2 critical devices" neither
  EXPECT_EQ(v.health[0].gpu, "1");
  EXPECT_EQ(v.health[0].slices, 2u);
  EXPECT_EQ(v.health[0].state, health::State::kCritical);
  ASSERT_EQ(v.health[0].issues.size(), 1u);
  EXPECT_EQ(v.totals.cards_critical, 1u);
  EXPECT_EQ(v.totals.cards_ok, 1u);
}

TEST(StatusView, ANodeWithWithdrawnDevicesGetsItsOwnLine) {
  model::Snapshot s = OneCluster();
  gpuattr::testing::MutableOutput(s.clusters[0]).node_health[0].reasons = {
      "nvidia.com/gpu: capacity 8, allocatable 7", "2 critical devices"};
  StatusView v = BuildStatusView(s, kNow, {});
  ASSERT_EQ(v.health.size(), 2u);
  EXPECT_EQ(v.health[0].gpu, "");
  EXPECT_THAT(v.health[0].reasons, ElementsAre("nvidia.com/gpu: capacity 8, allocatable 7"));
}

TEST(StatusView, BeforeTheFirstCycleOnlyClustersArePending) {
  model::Snapshot s;
  model::ClusterSnapshot c;
  c.cluster = "lab";
  s.clusters.push_back(c);
  StatusView v = BuildStatusView(s, kNow, {});
  ASSERT_EQ(v.clusters.size(), 1u);
  EXPECT_EQ(v.clusters[0].state, "pending");
  EXPECT_FALSE(v.clusters[0].data_age_seconds.has_value());
  EXPECT_TRUE(v.namespaces.empty());
  EXPECT_FALSE(v.totals.power_watts.has_value());
  // Every output renders it without inventing numbers.
  EXPECT_THAT(RenderStatusPage(v), HasSubstr("The first cycle has not finished yet."));
  EXPECT_THAT(RenderTable(v), HasSubstr("The first cycle has not finished yet."));
  auto j = nlohmann::json::parse(RenderSnapshotJson(v));
  EXPECT_TRUE(j["totals"]["power_watts"].is_null());
  EXPECT_FALSE(j["complete"].get<bool>());
}

// --- numbers for people ------------------------------------------------------------------------

TEST(TextFormat, NumbersReadAsAPersonWouldWriteThem) {
  EXPECT_EQ(BytesText(0), "0 B");
  EXPECT_EQ(BytesText(300.0 * 1024 * 1024), "300 MiB");
  EXPECT_EQ(BytesText(3.25 * kGiB), "3.2 GiB");
  EXPECT_EQ(BytesText(80 * kGiB), "80 GiB");
  EXPECT_EQ(BytesText(1536 * kGiB), "1.5 TiB");
  EXPECT_EQ(WattsText(805.4), "805 W");
  EXPECT_EQ(WattsText(5033), "5,033 W");
  EXPECT_EQ(WattsText(42.25), "42.2 W");
  EXPECT_EQ(PercentText(0.41), "41%");
  EXPECT_EQ(PercentText(0.004), "0.4%");
  EXPECT_EQ(PercentText(0), "0%");
  EXPECT_EQ(GpuEqText(2), "2");
  EXPECT_EQ(GpuEqText(3.0 / 7), "0.43");
  EXPECT_EQ(GpuEqText(1.5), "1.5");
  EXPECT_EQ(EnergyText(3600 * 340), "340 Wh");
  EXPECT_EQ(EnergyText(3.6e6 * 12.34), "12.3 kWh");
  EXPECT_EQ(EnergyText(3.6e6 * 1234), "1,234 kWh");
  EXPECT_EQ(DurationText(45), "45 s");
  EXPECT_EQ(DurationText(12 * 60 + 5), "12 min");
  EXPECT_EQ(DurationText(3 * 3600 + 5 * 60), "3 h 5 min");
  EXPECT_EQ(DurationText(2 * 86400 + 4 * 3600), "2 d 4 h");
  EXPECT_EQ(UtcText(kNow), "2025-11-30 00:00:00 UTC");
  EXPECT_EQ(ResourcesText({{"nvidia.com/gpu", 2}, {"nvidia.com/mig-1g.10gb", 3}}),
            "gpu 2, mig-1g.10gb 3");
  EXPECT_EQ(Known(std::nullopt, WattsText), "-");
}

// --- the page ----------------------------------------------------------------------------------

TEST(StatusPageView, SectionsInOrderAnswerFirst) {
  const std::string html = RenderStatusPage(OneCluster(), kNow);
  std::vector<size_t> at;
  for (const char* id : {"clusters", "whose", "costs", "idle", "rightsizing", "top", "devices",
                         "health", "pending", "exporters"}) {
    size_t p = html.find("<section id=\"" + std::string(id) + "\">");
    ASSERT_NE(p, std::string::npos) << id;
    at.push_back(p);
  }
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end()));
}

TEST(StatusPageView, SelfContainedEscapedAndReloading) {
  model::Snapshot s = OneCluster();
  s.clusters[0].latest.errors = {"<script>alert(1)</script>"};
  ViewOptions o;
  o.refresh_seconds = 20;
  const std::string html = RenderStatusPage(s, kNow, o);
  EXPECT_THAT(html, HasSubstr("<meta http-equiv=\"refresh\" content=\"20\">"));
  EXPECT_THAT(html, HasSubstr("name=\"viewport\""));
  EXPECT_THAT(html, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(html, HasSubstr("nb&lt;1&gt;"));
  EXPECT_THAT(html, Not(HasSubstr("nb<1>")));
  // No external asset: no absolute URL, no src=, no stylesheet link.
  EXPECT_THAT(html, Not(HasSubstr("http://")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  EXPECT_THAT(html, Not(HasSubstr(" src=")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  EXPECT_THAT(RenderStatusPage(s, kNow), Not(HasSubstr("http-equiv=\"refresh\"")));
}

TEST(StatusPageView, CellsCarryTheirRawValues) {
  const std::string html = RenderStatusPage(OneCluster(), kNow);
  // The whose-GPUs row of namespace b: power and held-idle memory as published.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(html, m, std::regex("<tr data-key=\"b\">(.*?)</tr>")));
  const std::string row = m[1];
  EXPECT_THAT(row, HasSubstr("data-k=\"power_watts\" data-v=\"40\""));
  EXPECT_THAT(row, HasSubstr("data-k=\"memory_idle_bytes\" data-v=\"7516192768\""));
  EXPECT_THAT(row, HasSubstr("data-k=\"requested_devices\" data-v=\"2\""));
  EXPECT_THAT(row, HasSubstr("+ 3 shared"));
  // Sortable headers and the script that sorts them.
  EXPECT_THAT(html, HasSubstr("<th class=\"n s\">power</th>"));
  EXPECT_THAT(html, HasSubstr("sessionStorage"));
}

TEST(StatusPageView, TwoClustersGetAClusterColumn) {
  model::Snapshot s = OneCluster();
  s.clusters.push_back(Cluster("prod"));
  const std::string html = RenderStatusPage(s, kNow);
  EXPECT_THAT(html, HasSubstr("<tr data-key=\"prod/b\">"));
  EXPECT_THAT(html, HasSubstr("<th class=\"s\">cluster</th>"));
  EXPECT_THAT(RenderStatusPage(OneCluster(), kNow), Not(HasSubstr("<th class=\"s\">cluster</th>")));
}

// --- the terminal table -------------------------------------------------------------------------

TEST(TableOutput, SameSectionsAsThePageAligned) {
  const StatusView v = BuildStatusView(OneCluster(), kNow, {});
  const std::string t = RenderTable(v);
  std::vector<size_t> at;
  for (const char* title :
       {"Clusters\n", "Whose GPUs\n", "What it costs\n", "Idle holders\n", "Rightsizing\n",
        "Top pods by power\n", "Top pods by memory\n", "Devices by node\n", "GPU health\n",
        "Pending GPU pods\n", "Exporters\n", "Probes\n"}) {
    size_t p = t.find(std::string("\n") + title);
    ASSERT_NE(p, std::string::npos) << title;
    at.push_back(p);
  }
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end()));
  EXPECT_THAT(t, Not(HasSubstr("\x1b[")));  // no colour unless asked
  // Columns line up: the header's "POWER" ends where the numbers end.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(t, m, std::regex("\n(NAMESPACE .*POWER)")));
  const size_t end = m[1].length();
  ASSERT_TRUE(std::regex_search(t, m, std::regex("\n(a .*300 W)")));
  EXPECT_EQ(static_cast<size_t>(m[1].length()), end);
  EXPECT_THAT(t, HasSubstr("    └ 1:7"));
  EXPECT_THAT(t, HasSubstr("n1/1 (NVIDIA A100-SXM4-80GB), 2 MIG slices  critical"));
}

TEST(TableOutput, NoTerminalSequenceFromTheClusterGetsThrough) {
  model::Snapshot s = OneCluster();
  model::CycleOutput& out = gpuattr::testing::MutableOutput(s.clusters[0]);
  out.attribution.cards[0].model = "A100\x1b]0;owned\x07\x1b[2J";
  out.allocation.pending[0].hint.message =
      "wait\xc2\x9b"
      "31mred";
  const StatusView v = BuildStatusView(s, kNow, {});
  for (const std::string& text : {RenderTable(v), RenderMarkdown(v)}) {
    EXPECT_THAT(text, Not(HasSubstr("\x1b"))) << text;
    EXPECT_THAT(text, Not(HasSubstr("\x07")));
    EXPECT_THAT(text, Not(HasSubstr("\xc2\x9b")));
  }
  EXPECT_THAT(RenderTable(v), HasSubstr("A100?]0;owned??[2J"));
  EXPECT_EQ(PrintableText("a\tb\x7f\xc3\xa9"), "a?b?\xc3\xa9");  // é stays
}

TEST(TableOutput, ColourOnlyWhenAskedAndWidthCutsFreeText) {
  const StatusView v = BuildStatusView(OneCluster(), kNow, {});
  EXPECT_THAT(RenderTable(v, {0, true}), HasSubstr("\x1b[31;1mcritical\x1b[0m"));
  const std::string narrow = RenderTable(v, {80, false});
  EXPECT_THAT(narrow, HasSubstr("…"));
  size_t longest = 0, pos = 0;
  while (pos < narrow.size()) {
    size_t e = narrow.find('\n', pos);
    std::string line = narrow.substr(pos, e - pos);
    size_t cols = 0;
    for (unsigned char ch : line) cols += (ch & 0xC0) != 0x80;
    // The headline sentence wraps in the terminal; tables must fit.
    if (line.rfind("gpuattr", 0) != 0 && line.find("GPU-eq in use") == std::string::npos)
      longest = std::max(longest, cols);
    pos = e + 1;
  }
  EXPECT_LE(longest, 80u);
  EXPECT_THAT(RenderTable(v), Not(HasSubstr("…")));  // no width: nothing cut
}

// --- JSON --------------------------------------------------------------------------------------

TEST(SnapshotJson, OneVersionedObjectWithNullForUnknown) {
  const StatusView v = BuildStatusView(OneCluster(), kNow, {});
  auto j = nlohmann::json::parse(RenderSnapshotJson(v));
  EXPECT_EQ(j["schema_version"], kSnapshotSchemaVersion);
  EXPECT_EQ(j["generated_unix"], kNow);
  EXPECT_EQ(j["clusters"][0]["state"], "up");
  EXPECT_EQ(j["clusters"][0]["data_age_seconds"], 12);
  ASSERT_EQ(j["namespaces"].size(), 3u);
  EXPECT_EQ(j["namespaces"][0]["namespace"], "a");
  EXPECT_EQ(j["namespaces"][0]["power_watts"], 300);
  EXPECT_EQ(j["namespaces"][1]["requested"]["nvidia.com/gpu.shared"], 3);
  EXPECT_TRUE(j["namespaces"][2]["power_watts"].is_null());
  EXPECT_TRUE(j["namespaces"][2]["energy_window_seconds"].is_null());
  EXPECT_EQ(j["idle_pods"][0]["pod"], "nb2");
  EXPECT_EQ(j["top_pods"]["by_power"][0]["pod"], "train");
  EXPECT_EQ(j["pods"].size(), 3u);
  EXPECT_EQ(j["nodes"][0]["cards"][1]["devices"][0]["gpu_instance"], "7");
  EXPECT_TRUE(j["nodes"][0]["cards"][0]["devices"][0]["gpu_instance"].is_null());
  EXPECT_EQ(j["health"][0]["issues"][0]["issue"], "xid");
  EXPECT_EQ(j["pending_pods"][0]["hint"]["code"], "exceeds_node_max");
  EXPECT_EQ(j["exporters"][1]["up"], false);
  EXPECT_EQ(j["totals"]["cards_by_health"]["critical"], 1);
}

// --- Markdown ----------------------------------------------------------------------------------

TEST(MarkdownOutput, ProblemsFirstThenIdleThenWhoseEscaped) {
  const StatusView v = BuildStatusView(OneCluster(), kNow, {});
  const std::string md = RenderMarkdown(v);
  const size_t health = md.find("## Health problems"), waiting = md.find("## Waiting pods"),
               down = md.find("## Exporters down"), idle = md.find("## Idle holders"),
               whose = md.find("## Whose GPUs");
  ASSERT_NE(whose, std::string::npos);
  EXPECT_LT(health, waiting);
  EXPECT_LT(waiting, down);
  EXPECT_LT(down, idle);
  EXPECT_LT(idle, whose);
  EXPECT_THAT(md, HasSubstr("| `n1/1` NVIDIA A100-SXM4-80GB, 2 MIG slices | **critical** | "
                            "critical: last XID 79: GPU has fallen off the bus |"));
  EXPECT_THAT(md, HasSubstr("the most any node has is 1 \\| pipes |"));  // cannot break the row
  EXPECT_THAT(md, HasSubstr("| `b/nb<1>` |"));
  EXPECT_THAT(md, HasSubstr("| `c/wait` | 1 h 1 min | gpu 4 | `exceeds_node_max` |"));
}

// --- one view, one set of numbers
// ------------------------------------------------------------------

double ExpositionValue(const std::string& text, const std::string& series) {
  size_t p = text.find("\n" + series + " ");
  EXPECT_NE(p, std::string::npos) << series;
  if (p == std::string::npos) return -1;
  return std::stod(text.substr(p + series.size() + 2));
}

TEST(StatusViewOutputs, PageJsonAndExpositionAgree) {
  const model::Snapshot s = OneCluster();
  const StatusView v = BuildStatusView(s, kNow, {});
  const std::string text = metrics::RenderText(s);
  const std::string html = RenderStatusPage(v);
  auto j = nlohmann::json::parse(RenderSnapshotJson(v));
  for (const auto& ns : j["namespaces"]) {
    const std::string name = ns["namespace"];
    if (ns["power_watts"].is_null()) continue;
    const std::string labels = "{cluster=\"lab\",namespace=\"" + name + "\"}";
    EXPECT_DOUBLE_EQ(ns["power_watts"].get<double>(),
                     ExpositionValue(text, "gpuattr_namespace_power_watts" + labels));
    EXPECT_DOUBLE_EQ(ns["gpu_equivalents"].get<double>(),
                     ExpositionValue(text, "gpuattr_namespace_gpu_equivalents" + labels));
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        html, m,
        std::regex("<tr data-key=\"" + name + "\">.*?data-k=\"power_watts\" data-v=\"([^\"]+)\"")));
    EXPECT_DOUBLE_EQ(std::stod(m[1]), ns["power_watts"].get<double>());
  }
}

}  // namespace
}  // namespace gpuattr::report
