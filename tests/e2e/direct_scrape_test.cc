// Direct scraping end to end (docs/deploy.md#direct-scraping): each scenario's pods get loopback
// addresses of their own and each exporter a listener there (support/direct_exporters.h). A
// KubeClusterSession reading directly must publish exactly the series of one reading through the
// pod proxy (two cycles 20 s apart, rendered through the metrics group table; the diff is in the
// failure message) while the fake apiserver sees no proxy GET at all. Then the failures: an
// exporter nothing listens for is down with a reason naming the NetworkPolicy, and a headless
// query API is not read directly, with its reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <sstream>

#include <prometheus/metric_family.h>

#include "gpuattr/app/kube_session.h"
#include "gpuattr/app/run.h"
#include "gpuattr/kube/http_transport.h"
#include "gpuattr/kube/kubeconfig.h"
#include "gpuattr/metrics/families.h"
#include "support/direct_exporters.h"
#include "support/fake_apiserver.h"
#include "support/fake_clock.h"
#include "support/family_collector.h"
#include "support/paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

struct SessionRun {
  std::string series;  // "family{labels} value" lines, sorted, self-metrics left out
  std::vector<discovery::ExporterStatus> exporters;  // the last cycle's
  std::string reasons;       // every exporter's and probe's reason of the last cycle, one a line
  size_t proxy_gets = 0;     // pods/proxy and services/proxy requests the apiserver saw
  size_t direct_served = 0;  // bodies the exporters' own listeners served
  std::string error;
};

// What differs between the two paths by design (the apiserver's request counts) or from run to
// run (durations measured in real time): left out of the comparison.
bool Compared(const std::string& family) {
  return family != "gpuattr_apiserver_requests_total" &&
         family != "gpuattr_cycle_duration_seconds" &&
         family != "gpuattr_exporter_scrape_duration_seconds" &&
         family != "gpuattr_pending_pod_seconds";
}

const TestPki& SharedPki() {
  static const TestPki* pki = new TestPki(MakeTestPki());
  return *pki;
}

// The scenario with addresses on its pods (the same in both runs), read directly or not.
SessionRun RunSession(Scenario scenario, bool direct) {
  SessionRun run;
  DirectExporters exporters(scenario);
  FakeApiServerOptions opts;
  opts.pki = SharedPki();
  FakeApiServer server(std::move(scenario), opts);
  if (Status s = server.Start(); !s.ok()) return run.error = s.message(), run;
  if (direct)
    if (Status s = exporters.Start(server); !s.ok()) return run.error = s.message(), run;
  auto transport = server.MakeTransport();
  if (!transport.ok()) return run.error = transport.error().message, run;

  FakeClock clock;
  app::KubeSessionOptions o;
  o.clock = &clock;
  o.sync_timeout = 20s;
  o.direct = direct;
  app::SessionList sessions;
  sessions.push_back(std::make_unique<app::KubeClusterSession>(
      "fake", std::shared_ptr<kube::Transport>(std::move(*transport)), o));
  auto store = std::make_shared<metrics::SnapshotStore>();
  auto loop = std::make_unique<app::CycleLoop>(std::move(sessions), store, clock);
  loop->RunOnce();
  clock.Advance(20s);
  auto snapshot = loop->RunOnce();
  loop.reset();  // its connections close: the listeners stop without waiting out keep-alive
  if (!snapshot->clusters.empty() && snapshot->clusters.front().latest.discovery) {
    const discovery::DiscoveryReport& report = *snapshot->clusters.front().latest.discovery;
    run.exporters = report.exporters;
    for (const auto& e : report.exporters) run.reasons += e.reason + "\n";
    for (const auto& p : report.probes) run.reasons += p.verdict.reason + "\n";
  }

  std::vector<std::string> lines;
  for (const prometheus::MetricFamily& f : metrics::BuildFamilies(*snapshot)) {
    if (!Compared(f.name)) continue;
    for (const prometheus::ClientMetric& m : f.metric) {
      std::ostringstream line;
      line << f.name << "{";
      for (const auto& l : m.label) line << l.name << "=\"" << l.value << "\",";
      line << "} " << (f.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value);
      lines.push_back(line.str());
    }
  }
  std::sort(lines.begin(), lines.end());
  for (const std::string& l : lines) run.series += l + "\n";
  run.proxy_gets = server.CountRequests("proxy");
  run.direct_served = exporters.served();
  exporters.Stop();
  server.Stop();
  return run;
}

Scenario Load(const std::string& name) {
  auto loaded = LoadScenario(FixturePath("scenarios/" + name));
  EXPECT_TRUE(loaded.ok()) << loaded.error().message;
  Scenario s = loaded.ok() ? std::move(*loaded) : Scenario{};
  s.watch_script.clear();  // timing tests of the object cache: not this test's subject
  // Query APIs are read at their ClusterIP: the fixtures' headless Services get one (the proxy
  // run does not look at it).
  for (nlohmann::json& o : s.objects)
    if (o.value("kind", "") == "Service" && o.contains("spec")) o["spec"].erase("clusterIP");
  return s;
}

class DirectScrape : public ::testing::TestWithParam<std::string> {};

TEST_P(DirectScrape, PublishesWhatTheProxyPathPublishesWithoutOneProxyGet) {
  const Scenario scenario = Load(GetParam());
  const SessionRun proxy = RunSession(scenario, /*direct=*/false);
  ASSERT_TRUE(proxy.error.empty()) << proxy.error;
  const SessionRun direct = RunSession(scenario, /*direct=*/true);
  ASSERT_TRUE(direct.error.empty()) << direct.error;

  EXPECT_GT(proxy.proxy_gets, 0u);
  EXPECT_EQ(direct.proxy_gets, 0u) << "the apiserver carried exporter bodies";
  EXPECT_GT(direct.direct_served, 0u);
  EXPECT_THAT(direct.series, HasSubstr("gpuattr_exporter_up{"));
  EXPECT_EQ(direct.series, proxy.series);  // gtest prints the diff
}

INSTANTIATE_TEST_SUITE_P(Scenarios, DirectScrape,
                         ::testing::Values("basic", "demo", "inference", "dra", "forgery",
                                           "forgery-tenant", "disc-discovery",
                                           "attr-dcgm-and-process", "prom-a100-mixed",
                                           "forgery-query-api"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(DirectScrapeFailures, NothingListeningIsDownWithTheNetworkPolicyNamed) {
  Scenario scenario = Load("basic");
  // One exporter's listener is never started: its GETs are refused, as a NetworkPolicy's are.
  ASSERT_FALSE(scenario.exporter_bodies.empty());
  const std::string silent = scenario.exporter_bodies.begin()->first;  // "ns/pod:port"
  std::vector<std::string> bodies = scenario.exporter_bodies.begin()->second;
  scenario.exporter_bodies.erase(scenario.exporter_bodies.begin());
  const SessionRun run = RunSession(scenario, /*direct=*/true);
  ASSERT_TRUE(run.error.empty()) << run.error;
  const std::string pod =
      silent.substr(silent.find('/') + 1, silent.rfind(':') - silent.find('/') - 1);
  bool found = false;
  for (const auto& e : run.exporters) {
    if (e.pod != pod) continue;
    found = true;
    EXPECT_FALSE(e.up);
    EXPECT_THAT(e.reason, HasSubstr("connection refused"));
    EXPECT_THAT(e.reason, HasSubstr("NetworkPolicy"));
    EXPECT_THAT(e.reason, HasSubstr("docs/deploy.md#networkpolicy"));
  }
  EXPECT_TRUE(found) << "no exporter row for " << pod;
  EXPECT_THAT(run.series, HasSubstr("gpuattr_exporter_up{cluster=\"fake\",kind=\"unknown\","));
}

TEST(DirectScrapeFailures, AHeadlessQueryApiIsNotReadDirectlyAndSaysWhy) {
  auto loaded = LoadScenario(FixturePath("scenarios/prom-a100-mixed"));
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  for (nlohmann::json& o : loaded->objects)  // every Service headless: no ClusterIP to read
    if (o.value("kind", "") == "Service") o["spec"]["clusterIP"] = "None";
  const SessionRun run = RunSession(std::move(*loaded), /*direct=*/true);
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_EQ(run.proxy_gets, 0u);
  EXPECT_THAT(run.reasons, HasSubstr("service monitoring/thanos-query is headless (clusterIP "
                                     "None): no address to read it directly"));
  EXPECT_THAT(run.series, Not(HasSubstr("gpuattr_pod_power_watts{")));
}

}  // namespace
}  // namespace gpuattr::testing
