// The kube-backed session against the fake apiserver over TLS on 127.0.0.1: what is probed, what
// is scraped, how many requests a polite client makes, and what happens when exporters misbehave.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "gpuattr/app/kube_session.h"
#include "gpuattr/kube/http_transport.h"
#include "gpuattr/kube/kubeconfig.h"
#include "gpuattr/metrics/discovery_metrics.h"
#include "support/fake_apiserver.h"
#include "support/family_collector.h"
#include "support/paths.h"
#include "support/session_harness.h"

namespace gpuattr::discovery {
namespace {

using app::KubeClusterSession;
using app::KubeSessionOptions;

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeApiServer;

constexpr char kProxyPrefix[] = "/api/v1/namespaces/";

// Pods and nodes only: these tests count every request, and the fallback's Services watch would add
// some.
struct Harness : testing::SessionHarness {
  ::testing::AssertionResult Start(const std::string& scenario, KubeSessionOptions options = {}) {
    options.cache.services = false;
    return SessionHarness::Start(scenario, std::move(options));
  }

  std::set<std::string> ProxyPaths() const {
    std::set<std::string> out;
    for (const auto& r : server->Requests())
      if (r.verb == "proxy") out.insert(r.path);
    return out;
  }

  // Waits (bounded, real time) until the session's object cache shows `key` present or absent.
  bool WaitForPod(const std::string& key, bool present) {
    for (int i = 0; i < 200; ++i) {
      auto snap = session->object_cache().Snapshot();
      if ((snap->pods.count(key) > 0) == present) return true;
      std::this_thread::sleep_for(milliseconds(25));
    }
    return false;
  }
};

std::string Proxy(const std::string& ns, const std::string& pod, int port) {
  return scrape::ProxyMetricsPath(ns, pod, port);
}

const ExporterStatus* FindExporter(const DiscoveryReport& r, const std::string& pod) {
  for (const auto& e : r.exporters)
    if (e.pod == pod) return &e;
  return nullptr;
}

TEST(DiscoverySession, FindsExportersByImageLabelNameAndPinNeverStaticPods) {
  KubeSessionOptions opts;
  opts.discovery.pins = *ParsePins({"telemetry/collector-:9500"});
  Harness h;
  ASSERT_TRUE(h.Start("disc-discovery", opts));
  auto c = h.Cycle();
  ASSERT_TRUE(c->up) << (c->errors.empty() ? "" : c->errors[0]);
  EXPECT_EQ(h.ProxyPaths(),
            (std::set<std::string>{
                Proxy("gpu-operator", "exporter-by-image-7xk2p", 9400),  // annotation
                Proxy("monitoring", "telemetry-by-label-q9d4m", 9401),   // named metrics
                Proxy("monitoring", "dcgm-by-name-m2x7z", 9402),         // first port
                Proxy("telemetry", "collector-0", 9500),                 // pinned port
            }));
  EXPECT_EQ(h.server->CountRequests("proxy", "/api/v1/namespaces/kube-system/"), 0u);
  EXPECT_EQ(c->report.outcome_counts.at("accepted"), 3u);
  EXPECT_EQ(c->report.outcome_counts.at("pinned"), 1u);
  ASSERT_EQ(c->input.readings.size(), 4u);
  std::map<std::string, std::string> node_of;
  for (const auto& e : c->input.readings) {
    node_of[e.pod] = e.node;
    const auto& d = std::get<sources::DcgmReadings>(e.readings);
    EXPECT_EQ(d.records.size(), 2u) << e.pod;
  }
  EXPECT_EQ(node_of["exporter-by-image-7xk2p"], "gpu-node-1");  // spec.nodeName, not Hostname
  EXPECT_EQ(node_of["telemetry-by-label-q9d4m"], "cpu-node-1");
  for (const auto& e : c->report.exporters) {
    EXPECT_TRUE(e.up) << e.pod << ": " << e.reason;
    EXPECT_EQ(e.kind, "dcgm");
    EXPECT_GT(e.bytes, 0u);
  }
  ASSERT_FALSE(c->report.probes.empty());
  for (const auto& p : c->report.probes) EXPECT_NE(p.candidate.namespace_, "kube-system");
  EXPECT_TRUE(c->report.nothing_found.empty());
}

TEST(DiscoverySession, NoGpuClusterIsSilentInSteadyState) {
  Harness h;
  ASSERT_TRUE(h.Start("disc-no-gpu"));
  auto first = h.Cycle();
  ASSERT_TRUE(first->up);
  EXPECT_FALSE(first->report.gpu_present);
  EXPECT_NE(first->report.nothing_found.find("kubectl auth can-i get pods/proxy -A"),
            std::string::npos);
  EXPECT_NE(first->report.nothing_found.find("4 pods listed, 0 candidates probed"),
            std::string::npos)
      << first->report.nothing_found;
  const size_t lists = h.server->CountRequests("list");
  EXPECT_EQ(h.server->CountRequests("proxy"), 0u);
  // 4 minutes of cycles at a 20 s interval on the test clock.
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(h.WaitForWatches());
    h.clock.Advance(seconds(20));
    auto c = h.Cycle();
    ASSERT_TRUE(c->up) << (c->errors.empty() ? "" : c->errors[0]);
  }
  EXPECT_EQ(h.server->CountRequests("list"), lists);
  EXPECT_EQ(h.server->CountRequests("proxy"), 0u);
}

TEST(DiscoverySession, BadExportersDoNotHoldBackTheGoodOnes) {
  KubeSessionOptions opts;
  opts.discovery.scrape.timeout = seconds(2);
  opts.discovery.probe_timeout = seconds(2);
  opts.discovery.scrape.limits.body_bytes = 8u << 20;
  Harness h;
  ASSERT_TRUE(h.Start("disc-faults", opts));
  auto c1 = h.Cycle();
  ASSERT_TRUE(c1->up);
  ASSERT_EQ(c1->input.readings.size(), 6u);

  // Cycle 2: four known exporters go bad.
  testing::FaultRule slow;
  slow.path_prefix = Proxy("gpu-operator", "dcgm-exporter-slow", 9400);
  slow.delay = seconds(30);
  h.server->AddFault(slow);
  testing::FaultRule truncated;
  truncated.path_prefix = Proxy("gpu-operator", "dcgm-exporter-truncated", 9400);
  truncated.truncate_at = 300;  // mid-line
  h.server->AddFault(truncated);
  testing::FaultRule huge;
  huge.path_prefix = Proxy("gpu-operator", "dcgm-exporter-huge", 9400);
  huge.oversize_bytes = 80ll << 20;
  h.server->AddFault(huge);
  // dcgm-exporter-garbage serves its second body (garbage) from now on.

  h.clock.Advance(seconds(20));
  const auto start = std::chrono::steady_clock::now();
  auto c2 = h.Cycle();
  const auto took = std::chrono::steady_clock::now() - start;
  // The 30 s delay did not hold the cycle: it ended near the 2 s timeout (bound far below 30 s).
  EXPECT_LT(took, seconds(20));

  std::set<std::string> good;
  for (const auto& e : c2->input.readings) good.insert(e.pod);
  EXPECT_EQ(good, (std::set<std::string>{"dcgm-exporter-good-1", "dcgm-exporter-good-2"}));
  // Both good ones were read. The six exporters share one node and its GPU indices 0 and 1, so
  // one device each: good-1 (first by name among those that answered) keeps both, good-2's six
  // lines are duplicate_device (docs/design.md#rejected-lines).
  for (const auto& e : c2->input.readings) {
    const auto& d = std::get<sources::DcgmReadings>(e.readings);
    const bool first = e.pod == "dcgm-exporter-good-1";
    EXPECT_EQ(d.records.size(), first ? 2u : 0u) << e.pod;
    EXPECT_EQ(
        d.stats.rejected.count("duplicate_device") ? d.stats.rejected.at("duplicate_device") : 0u,
        first ? 0u : 6u)
        << e.pod;
  }
  for (std::string bad : {"slow", "garbage", "truncated", "huge"}) {
    const ExporterStatus* e = FindExporter(c2->report, "dcgm-exporter-" + bad);
    ASSERT_NE(e, nullptr) << bad;
    EXPECT_FALSE(e->up) << bad;
    EXPECT_FALSE(e->reason.empty()) << bad;
    EXPECT_EQ(e->kind, "dcgm") << bad;
    EXPECT_LE(e->bytes, opts.discovery.scrape.limits.body_bytes) << bad;
  }
  EXPECT_NE(FindExporter(c2->report, "dcgm-exporter-huge")->reason.find("limit"), std::string::npos)
      << FindExporter(c2->report, "dcgm-exporter-huge")->reason;
  EXPECT_TRUE(c2->report.rediscovery_next_cycle);

  // The families show it too.
  metrics::FamilyCollector w;
  metrics::AddDiscoveryFamilies(c2->report, w);
  size_t down = 0;
  for (const auto& f : std::move(w).Finish())
    if (f.name == "gpuattr_exporter_up")
      for (const auto& m : f.metric) down += m.gauge.value == 0;
  EXPECT_EQ(down, 4u);
}

TEST(DiscoverySession, FailedScrapeRediscoversAndReplacedPodIsPickedUpWithoutRelist) {
  Harness h;
  ASSERT_TRUE(h.Start("disc-replace"));
  const std::string gfd = Proxy("gpu-operator", "gpu-feature-discovery-x1", 8080);
  auto c1 = h.Cycle();
  ASSERT_TRUE(c1->up);
  ASSERT_EQ(c1->input.readings.size(), 1u);
  EXPECT_EQ(h.server->CountRequests("proxy", gfd), 1u);

  // The exporter stops answering: exporter_up 0 now, all candidates probed again next cycle.
  h.server->RemoveExporter("gpu-operator", "nvidia-dcgm-exporter-aaaaa", 9400);
  h.clock.Advance(seconds(20));
  auto c2 = h.Cycle();
  const ExporterStatus* e = FindExporter(c2->report, "nvidia-dcgm-exporter-aaaaa");
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(e->up);
  EXPECT_EQ(h.server->CountRequests("proxy", gfd), 1u);  // still cached
  h.clock.Advance(seconds(20));
  auto c3 = h.Cycle();
  EXPECT_EQ(h.server->CountRequests("proxy", gfd), 2u);  // re-discovery probed it again

  // The exporter pod is replaced: DELETED then ADDED, seen through the watch.
  const size_t lists = h.server->CountRequests("list");
  auto old_pod = h.server->Get("pods", "gpu-operator", "nvidia-dcgm-exporter-aaaaa");
  ASSERT_TRUE(old_pod.has_value());
  nlohmann::json new_pod = *old_pod;
  new_pod["metadata"]["name"] = "nvidia-dcgm-exporter-bbbbb";
  new_pod["metadata"]["uid"] = "uid-nvidia-dcgm-exporter-bbbbb";
  new_pod["metadata"].erase("resourceVersion");
  ASSERT_TRUE(h.server->Delete("pods", "gpu-operator", "nvidia-dcgm-exporter-aaaaa").ok());
  h.server->SetExporterBodies(
      "gpu-operator", "nvidia-dcgm-exporter-bbbbb", 9400,
      {testing::ReadFile(testing::FixturePath(
          "scenarios/disc-replace/exporters/gpu-operator/nvidia-dcgm-exporter-aaaaa:9400.prom"))});
  ASSERT_TRUE(h.server->Upsert(new_pod).ok());
  ASSERT_TRUE(h.WaitForPod("gpu-operator/nvidia-dcgm-exporter-bbbbb", true));
  ASSERT_TRUE(h.WaitForPod("gpu-operator/nvidia-dcgm-exporter-aaaaa", false));

  h.clock.Advance(seconds(20));
  auto c4 = h.Cycle();
  ASSERT_EQ(c4->input.readings.size(), 1u);
  EXPECT_EQ(c4->input.readings[0].pod, "nvidia-dcgm-exporter-bbbbb");
  EXPECT_EQ(FindExporter(c4->report, "nvidia-dcgm-exporter-aaaaa"), nullptr);  // series gone
  EXPECT_EQ(h.server->CountRequests("list"), lists);                           // no relist
}

// The session keeps a ledger: energy integrates over the session's (fake) clock between cycles,
// the view is in the cycle result, and the state file is written after each successful cycle.
TEST(DiscoverySession, LedgerCountsEnergyAndWritesTheStateFile) {
  const fs::path state =
      fs::temp_directory_path() / ("gpuattr-ledger-" + std::to_string(::getpid()) + "/state.json");
  KubeSessionOptions opts;
  opts.state_file = ledger::StateFile::Open(state.string(), true);
  Harness h;
  ASSERT_TRUE(h.Start("basic", opts));
  model::CycleResult first = h.session->RunCycle();
  ASSERT_TRUE(first.up);
  ASSERT_TRUE(first.output);
  h.clock.Advance(seconds(20));
  model::CycleResult second = h.session->RunCycle();
  ASSERT_TRUE(second.output);
  EXPECT_EQ(second.output->ledger.cluster, "fake");
  // The exporter's readings may change between scrapes: trapezoid of the two cycles' power.
  std::map<kube::PodId, double> before;
  for (const attribution::Pod& p : first.output->attribution.pods)
    if (p.power_watts) before[p.id] = *p.power_watts;
  std::map<kube::PodId, std::optional<double>> joules;
  size_t rows = 0;
  ledger::ForEachPodLedger(second.output->ledger, second.output->attribution.pods,
                           [&](const ledger::PodLedgerRef& l) {
                             joules[l.id] = l.energy_joules;
                             ++rows;
                           });
  size_t with_power = 0;
  for (const attribution::Pod& p : second.output->attribution.pods) {
    if (!p.power_watts || !before.count(p.id)) continue;
    ++with_power;
    auto it = joules.find(p.id);
    ASSERT_NE(it, joules.end()) << p.id.name;
    EXPECT_NEAR(it->second.value_or(-1), (before[p.id] + *p.power_watts) / 2 * 20, 1e-6)
        << p.id.name;
  }
  EXPECT_GT(with_power, 0u) << "scenario basic should attribute power to a pod";
  auto saved = ledger::StateFile::Open(state.string(), true)->Load("fake");
  EXPECT_EQ(saved.last_cycle_unix, second.output->ledger.recorded_unix);
  EXPECT_EQ(saved.pods.size(), rows);
  std::error_code ec;
  fs::remove_all(state.parent_path(), ec);
}

}  // namespace
}  // namespace gpuattr::discovery
