// The query-API fallback through the real session against the fake apiserver: the scenario
// prom-a100-mixed (attr-a100-mixed seen only through kube-prometheus-stack / Thanos, relabelled,
// two HA replicas, no exporter pod answering) must attribute exactly like attr-a100-mixed read
// directly from its dcgm-exporter.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "gpuattr/app/kube_session.h"
#include "gpuattr/kube/http_transport.h"
#include "gpuattr/kube/kubeconfig.h"
#include "support/fake_apiserver.h"
#include "support/paths.h"
#include "support/session_harness.h"

namespace gpuattr::discovery {
namespace {

using app::KubeClusterSession;
using app::KubeSessionOptions;

namespace fs = std::filesystem;
using std::chrono::seconds;
using testing::FakeApiServer;

// The fallback searches Services, so the services watch is on.
struct Harness : testing::SessionHarness {
  ::testing::AssertionResult Start(const std::string& scenario, KubeSessionOptions options = {}) {
    options.cache.services = true;
    return SessionHarness::Start(scenario, std::move(options));
  }

  size_t ProxyGets(const std::string& prefix = "/api/v1/namespaces/") const {
    return server->CountRequests("proxy", prefix);
  }
};

std::string Num(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", *v);
  return buf;
}

// Everything the acceptance compares: devices, pods, namespace totals (power, memory), node power.
std::string Summary(const attribution::Attribution& a) {
  std::ostringstream s;
  for (const auto& d : a.devices)
    s << "device " << attribution::DeviceIdText(d.id) << " uuid=" << d.uuid
      << " profile=" << d.mig_profile << " power=" << Num(d.power_watts)
      << " mem=" << Num(d.memory_used_bytes) << " total=" << Num(d.memory_total_bytes)
      << " util=" << Num(d.utilization) << " pods=" << (d.pods ? std::to_string(*d.pods) : "-")
      << "\n";
  for (const auto& c : a.cards)
    s << "card " << c.node << "/" << c.gpu << " power=" << Num(c.power_watts) << "\n";
  for (const auto& p : a.pods)
    s << "pod " << p.id.namespace_ << "/" << p.id.name << " node=" << p.node
      << " power=" << Num(p.power_watts) << " mem=" << Num(p.memory_used_bytes)
      << " devices=" << p.devices << " util=" << Num(p.utilization) << "\n";
  for (const auto& n : a.namespaces)
    s << "namespace " << n.name << " power=" << Num(n.power_watts)
      << " mem=" << Num(n.memory_used_bytes) << " gpu_eq=" << Num(n.gpu_equivalents) << "\n";
  for (const auto& n : a.nodes)
    s << "node " << n.node << " power=" << Num(n.power_watts)
      << " unattributed=" << Num(n.unattributed_power_watts) << "\n";
  return s.str();
}

std::string DirectSummary() {
  Harness h;
  if (!h.Start("attr-a100-mixed")) return "direct scenario did not start";
  model::CycleResult r = h.session->RunCycle();
  if (!r.output) return "direct scenario: no attribution";
  return Summary(r.output->attribution);
}

const ExporterStatus* FindExporter(const DiscoveryReport& r, const std::string& pod) {
  for (const auto& e : r.exporters)
    if (e.pod == pod) return &e;
  return nullptr;
}

TEST(QueryApiFallbackE2E, KubePrometheusStackGivesTheSameAttributionAsTheDirectScrape) {
  const std::string direct = DirectSummary();
  ASSERT_NE(direct.find("namespace team-a"), std::string::npos) << direct;

  Harness h;
  ASSERT_TRUE(h.Start("prom-a100-mixed"));
  model::CycleResult r = h.session->RunCycle();
  ASSERT_TRUE(r.up);
  ASSERT_TRUE(r.output);
  EXPECT_EQ(Summary(r.output->attribution), direct);

  // The exporter pod was probed (503), then one probe and one query on Thanos, nothing else.
  EXPECT_EQ(h.ProxyGets("/api/v1/namespaces/gpu-operator/pods/"), 1u);
  EXPECT_EQ(h.ProxyGets("/api/v1/namespaces/monitoring/services/thanos-query:10902/"), 2u);
  EXPECT_EQ(h.ProxyGets(), 3u);

  auto input = h.LastInput();
  ASSERT_TRUE(input);
  const ExporterStatus* api = FindExporter(*r.discovery, "thanos-query");
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->kind, "prometheus");
  EXPECT_EQ(api->namespace_, "monitoring");
  EXPECT_TRUE(api->up);
  EXPECT_EQ(api->parse_errors, 0u);
  ASSERT_EQ(input->readings.size(), 1u);
  EXPECT_EQ(input->readings[0].node, "dgx-a100-1");  // from the node label
  const auto& dcgm = std::get<sources::DcgmReadings>(input->readings[0].readings);
  EXPECT_EQ(dcgm.records.size(), 48u);
  EXPECT_EQ(dcgm.stats.duplicate_samples, 0u);  // the HA replicas were merged before reading
  EXPECT_TRUE(r.discovery->nothing_found.empty());

  // Next cycle: one query; the exporter's first failed probe is tried once more (a pod that
  // failed once must not hide its node for a minute), and the query API is not probed again.
  h.clock.Advance(seconds(20));
  model::CycleResult r2 = h.session->RunCycle();
  ASSERT_TRUE(r2.output);
  EXPECT_EQ(Summary(r2.output->attribution), direct);
  EXPECT_EQ(h.ProxyGets("/api/v1/namespaces/monitoring/services/thanos-query:10902/"), 3u);
  EXPECT_EQ(h.ProxyGets("/api/v1/namespaces/gpu-operator/pods/"), 2u);
  EXPECT_EQ(h.ProxyGets(), 5u);

  // Steady state: failed twice, the exporter waits out the 60 s cache; one query per cycle.
  h.clock.Advance(seconds(20));
  model::CycleResult r3 = h.session->RunCycle();
  ASSERT_TRUE(r3.output);
  EXPECT_EQ(Summary(r3.output->attribution), direct);
  EXPECT_EQ(h.ProxyGets("/api/v1/namespaces/monitoring/services/thanos-query:10902/"), 4u);
  EXPECT_EQ(h.ProxyGets("/api/v1/namespaces/gpu-operator/pods/"), 2u);
  EXPECT_EQ(h.ProxyGets(), 6u);
}

TEST(QueryApiFallbackE2E, APinnedServiceIsUsedAndItsNodeComesFromTheExporterPod) {
  const std::string direct = DirectSummary();
  KubeSessionOptions options;
  options.discovery.pins = *ParsePins({"monitoring/svc/kube-prometheus-stack-prometheus:http-web"});
  Harness h;
  ASSERT_TRUE(h.Start("prom-a100-mixed", options));
  model::CycleResult r = h.session->RunCycle();
  ASSERT_TRUE(r.output);
  EXPECT_EQ(Summary(r.output->attribution), direct);
  EXPECT_EQ(h.ProxyGets("/api/v1/namespaces/monitoring/services/"
                        "kube-prometheus-stack-prometheus:http-web/"),
            2u);
  EXPECT_EQ(h.ProxyGets("/api/v1/namespaces/monitoring/services/thanos-query"), 0u);
  auto input = h.LastInput();
  ASSERT_EQ(input->readings.size(), 1u);
  EXPECT_EQ(input->readings[0].node, "dgx-a100-1");  // no node label: the exporter pod's
  ASSERT_EQ(r.discovery->pins.size(), 1u);
  EXPECT_NE(r.discovery->pins[0].note.find("queried"), std::string::npos)
      << r.discovery->pins[0].note;
}

}  // namespace
}  // namespace gpuattr::discovery
