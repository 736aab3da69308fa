// Discovery decides who may speak (docs/design.md#trust), from the pod object before any request: a
// dcgm body is read from a pod controlled by an apps/v1 DaemonSet in an exporter namespace, a
// pinned pod or one a trust rule names; any other candidate that holds no GPU is "untrusted" and
// never fetched. A vLLM body is read only from a pod holding a GPU. A query API outside the
// trusted namespaces is never asked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuattr/discovery/discovery.h"
#include "gpuattr/kube/api_client.h"
#include "gpuattr/metrics/discovery_metrics.h"
#include "gpuattr/metrics/families.h"
#include "gpuattr/report/status_page.h"
#include "gpuattr/scrape/cycle.h"
#include "support/fake_clock.h"
#include "support/fake_transport.h"
#include "support/family_collector.h"
#include "support/pods.h"

namespace gpuattr::discovery {
namespace {

using std::chrono::seconds;
using testing::FakeReply;
using testing::FakeTransport;
using ::testing::HasSubstr;

constexpr char kDcgmBody[] =
    "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\",namespace=\"finance\","
    "pod=\"payroll-db-0\"} 999999\n";
constexpr char kVllmBody[] = "vllm:num_requests_running{model_name=\"m\"} 3\n";

std::string Path(const std::string& ns, const std::string& pod, int port) {
  return "/api/v1/namespaces/" + ns + "/pods/" + pod + ":" + std::to_string(port) +
         "/proxy/metrics";
}

struct Fixture {
  FakeClock clock;
  std::shared_ptr<FakeTransport> transport = std::make_shared<FakeTransport>("test");
  std::unique_ptr<scrape::Fetcher> fetcher;
  std::unique_ptr<Discovery> discovery;
  kube::ClusterObjects objects;

  explicit Fixture(DiscoveryOptions options = {}) {
    kube::ApiClientOptions ao;
    ao.clock = &clock;
    fetcher = scrape::MakeApiFetcher(std::make_shared<kube::ApiClient>(transport, ao));
    discovery = std::make_unique<Discovery>("test", std::move(options), clock);
    kube::Node n;
    n.name = "cpu-1";
    n.capacity["nvidia.com/gpu"] = 1;  // the exporters below report one card
    objects.nodes[n.name] = n;
  }
  void Add(const kube::Pod& p) { objects.pods[p.Key()] = p; }
  scrape::ScrapeResult Cycle() {
    clock.Advance(seconds(20));
    return scrape::ReadCycle(*discovery, *fetcher, objects);
  }
};

const ProbeRecord* FindProbe(const DiscoveryReport& r, const std::string& pod) {
  for (const auto& p : r.probes)
    if (p.candidate.pod == pod) return &p;
  return nullptr;
}

// The pod of the issue: a tenant's StatefulSet pod on a CPU node, named like a GPU helper.
kube::Pod Forger() {
  kube::Pod p =
      testing::MakeRunningPod("finance", "gpu-helper-0", "cpu-1", "busybox", {{"metrics", 9400}});
  p.owners = {{"StatefulSet", "gpu-helper", true, "apps/v1"}};
  p.labels = {{"app", "gpu-helper"}};
  p.resource_version = "100";
  return p;
}

TEST(DiscoveryTrust, ADaemonSetExporterIsRead) {
  Fixture f;
  f.Add(testing::MakeDaemonSetPod("gpu-operator", "dcgm-exporter-a", "cpu-1", "dcgm-exporter",
                                  {{"metrics", 9400}}));
  f.transport->SetDefault(Path("gpu-operator", "dcgm-exporter-a", 9400),
                          FakeReply::Json(kDcgmBody));
  scrape::ScrapeResult r = f.Cycle();
  EXPECT_EQ(r.report.outcome_counts.at("accepted"), 1u);
  EXPECT_EQ(r.report.outcome_counts.at("untrusted"), 0u);
  ASSERT_EQ(r.readings.size(), 1u);
  ASSERT_NE(FindProbe(r.report, "dcgm-exporter-a"), nullptr);
  EXPECT_EQ(FindProbe(r.report, "dcgm-exporter-a")->candidate.trust,
            "controlled by DaemonSet gpu-operator/dcgm-exporter");
}

TEST(DiscoveryTrust, AnyOtherPodIsUntrustedAndNeverFetched) {
  Fixture f;
  f.Add(Forger());
  const std::string path = Path("finance", "gpu-helper-0", 9400);
  f.transport->SetDefault(path, FakeReply::Json(kDcgmBody));

  scrape::ScrapeResult r1 = f.Cycle();
  EXPECT_TRUE(r1.readings.empty());  // nothing it said reaches the stages
  EXPECT_TRUE(r1.report.exporters.empty());
  EXPECT_EQ(r1.report.outcome_counts.at("untrusted"), 1u);
  EXPECT_EQ(r1.report.probed_this_cycle, 0u);
  const ProbeRecord* p = FindProbe(r1.report, "gpu-helper-0");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->verdict.outcome, Outcome::kUntrusted);
  EXPECT_EQ(p->probed_unix, 0);  // never
  EXPECT_THAT(p->verdict.reason,
              HasSubstr("untrusted, not fetched: not controlled by a DaemonSet"));
  EXPECT_THAT(p->verdict.reason, HasSubstr("--target finance/gpu-helper-0:9400"));
  EXPECT_THAT(p->verdict.reason, HasSubstr("{namespace: finance, selector: {app: gpu-helper}}"));
  EXPECT_THAT(r1.report.nothing_found, HasSubstr("1 candidate(s) may not speak for GPUs"));

  // Ten minutes of cycles, a rediscovery among them, and a change of the pod: never a GET.
  for (int i = 0; i < 30; ++i) {
    scrape::ScrapeResult r = f.Cycle();
    EXPECT_EQ(r.report.outcome_counts.at("untrusted"), 1u);
    EXPECT_TRUE(r.readings.empty());
  }
  kube::Pod changed = Forger();
  changed.resource_version = "101";
  f.Add(changed);
  f.Cycle();
  EXPECT_EQ(f.transport->CountRequests(path), 0u);
}

// Issue 25: a tenant's DaemonSet, a bare pod with a hand-written owner reference, an owner
// reference that is not the controller: never fetched, whatever they would serve.
TEST(DiscoveryTrust, TenantDaemonSetsAndForgedOwnerReferencesAreNeverFetched) {
  Fixture f;
  kube::Pod tenant_ds = testing::MakeDaemonSetPod("zz-team", "gpu-process-exporter-a", "cpu-1",
                                                  "gpu-exporter", {{"metrics", 9400}});
  kube::Pod forged = testing::MakeRunningPod("gpu-operator", "dcgm-exporter-x", "cpu-1",
                                             "dcgm-exporter", {{"metrics", 9400}});
  forged.owners = {{"DaemonSet", "nvidia-dcgm-exporter", true, "example.com/v1"}};
  kube::Pod not_controller = testing::MakeDaemonSetPod("gpu-operator", "dcgm-exporter-y", "cpu-1",
                                                       "dcgm-exporter", {{"metrics", 9400}});
  not_controller.owners[0].controller = false;
  for (const kube::Pod* p : {&tenant_ds, &forged, &not_controller}) {
    f.Add(*p);
    f.transport->SetDefault(Path(p->namespace_, p->name, 9400), FakeReply::Json(kDcgmBody));
  }
  scrape::ScrapeResult r = f.Cycle();
  EXPECT_EQ(r.report.outcome_counts.at("untrusted"), 3u);
  EXPECT_TRUE(r.readings.empty());
  EXPECT_EQ(f.transport->CountRequests("/api/v1/namespaces/"), 0u);
  EXPECT_THAT(FindProbe(r.report, "gpu-process-exporter-a")->verdict.reason,
              HasSubstr("or add zz-team to discovery.trust.exporter_namespaces"));
  EXPECT_THAT(FindProbe(r.report, "dcgm-exporter-x")->verdict.reason,
              HasSubstr("apiVersion \"example.com/v1\", not apps/v1"));
  EXPECT_THAT(FindProbe(r.report, "dcgm-exporter-y")->verdict.reason,
              HasSubstr("not the controller reference"));
}

TEST(DiscoveryTrust, TheStatusPageSaysHowToTrustIt) {
  Fixture f;
  f.Add(Forger());
  f.transport->SetDefault(Path("finance", "gpu-helper-0", 9400), FakeReply::Json(kDcgmBody));
  scrape::ScrapeResult r = f.Cycle();
  model::Snapshot s;
  s.complete = true;
  model::ClusterSnapshot c;
  c.cluster = "test";
  c.latest.discovery = std::make_shared<const DiscoveryReport>(r.report);
  s.clusters.push_back(c);
  const std::string page = report::RenderStatusPage(s, 1764460800);
  EXPECT_THAT(page, HasSubstr("1 candidate may not speak for GPUs: not read (untrusted)"));
  EXPECT_THAT(page, HasSubstr("<details open>"));
  EXPECT_THAT(page, HasSubstr("pin it (--target finance/gpu-helper-0:9400) or add a rule to "
                              "discovery.trust.exporters"));
}

TEST(DiscoveryTrust, APinOrATrustRuleMakesItTrusted) {
  {
    DiscoveryOptions o;
    o.pins.pods.push_back({"finance", "gpu-helper", 9400, "finance/gpu-helper:9400"});
    Fixture f(o);
    f.Add(Forger());
    f.transport->SetDefault(Path("finance", "gpu-helper-0", 9400), FakeReply::Json(kDcgmBody));
    scrape::ScrapeResult r = f.Cycle();
    EXPECT_EQ(r.report.outcome_counts.at("pinned"), 1u);
    ASSERT_EQ(r.readings.size(), 1u);
    EXPECT_TRUE(r.readings[0].pinned);
  }
  {
    DiscoveryOptions o;
    o.trust_rules = {{"finance", {{"app", "gpu-helper"}}}};
    Fixture f(o);
    f.Add(Forger());
    f.transport->SetDefault(Path("finance", "gpu-helper-0", 9400), FakeReply::Json(kDcgmBody));
    scrape::ScrapeResult r = f.Cycle();
    EXPECT_EQ(r.report.outcome_counts.at("accepted"), 1u);
    EXPECT_EQ(r.readings.size(), 1u);
  }
}

TEST(DiscoveryTrust, ATrustRuleMatchingLaterAsksForANewVerdict) {
  DiscoveryOptions o;
  o.trust_rules = {{"finance", {{"app", "gpu-helper"}}}};
  Fixture f(o);
  kube::Pod p = Forger();
  p.labels = {{"app", "other"}};
  f.Add(p);
  const std::string path = Path("finance", "gpu-helper-0", 9400);
  f.transport->SetDefault(path, FakeReply::Json(kDcgmBody));
  EXPECT_EQ(f.Cycle().report.outcome_counts.at("untrusted"), 1u);
  EXPECT_EQ(f.transport->CountRequests(path), 0u);
  // The pod is relabelled to match the rule (the trust it carries changed): judged again.
  p.labels = {{"app", "gpu-helper"}};
  f.Add(p);
  scrape::ScrapeResult r = f.Cycle();
  EXPECT_EQ(r.report.outcome_counts.at("accepted"), 1u);
  EXPECT_EQ(r.readings.size(), 1u);
  EXPECT_EQ(f.transport->CountRequests(path), 1u);
}

TEST(DiscoveryTrust, AnInferenceServerMustHoldAGpu) {
  Fixture f;
  kube::Pod router =
      testing::MakeRunningPod("ml", "vllm-router-0", "cpu-1", "vllm/vllm-openai", {{"http", 8000}});
  kube::Pod server =
      testing::MakeRunningPod("ml", "vllm-server-0", "cpu-1", "vllm/vllm-openai", {{"http", 8000}});
  server.containers[0].limits["nvidia.com/gpu"] = 1;
  f.Add(router);
  f.Add(server);
  f.transport->SetDefault(Path("ml", "vllm-router-0", 8000), FakeReply::Json(kVllmBody));
  f.transport->SetDefault(Path("ml", "vllm-server-0", 8000), FakeReply::Json(kVllmBody));
  scrape::ScrapeResult r = f.Cycle();
  EXPECT_EQ(r.report.outcome_counts.at("untrusted"), 1u);
  EXPECT_EQ(r.report.outcome_counts.at("accepted"), 1u);
  ASSERT_EQ(r.readings.size(), 1u);
  EXPECT_EQ(r.readings[0].pod, "vllm-server-0");
  EXPECT_THAT(FindProbe(r.report, "vllm-router-0")->verdict.reason,
              HasSubstr("untrusted, not fetched: the pod holds no GPU"));
  EXPECT_EQ(f.transport->CountRequests(Path("ml", "vllm-router-0", 8000)), 0u);
}

TEST(DiscoveryTrust, RejectedLinesAreCountedPerExporterAndPublished) {
  Fixture f;
  f.Add(testing::MakeDaemonSetPod("gpu-operator", "dcgm-exporter-a", "cpu-1", "dcgm-exporter",
                                  {{"metrics", 9400}}));
  f.transport->SetDefault(Path("gpu-operator", "dcgm-exporter-a", 9400),
                          FakeReply::Json(kDcgmBody));
  scrape::ScrapeResult r = f.Cycle();
  ASSERT_EQ(r.report.exporters.size(), 1u);
  const ExporterStatus& e = r.report.exporters[0];
  EXPECT_EQ(e.rejected.at("unknown_pod"), 1u);
  EXPECT_EQ(e.rejected.at("bad_value"), 1u);  // 999,999 W
  EXPECT_EQ(e.rejected.at("duplicate_device"), 0u);
  EXPECT_EQ(e.rejected.at("pod_on_other_node"), 0u);
  EXPECT_THAT(e.reason, HasSubstr("2 line(s) rejected (bad_value 1, unknown_pod 1)"));
  const auto& d = std::get<sources::DcgmReadings>(r.readings[0].readings);
  ASSERT_EQ(d.records.size(), 1u);
  EXPECT_FALSE(d.records[0].pod);
  EXPECT_FALSE(d.records[0].values.power_watts);

  metrics::FamilyCollector w;
  metrics::AddDiscoveryFamilies(r.report, w);
  std::string text;
  for (const auto& fam : std::move(w).Finish())
    if (fam.name == "gpuattr_exporter_rejected_lines")
      for (const auto& m : fam.metric) {
        std::string reason;
        for (const auto& l : m.label)
          if (l.name == "reason") reason = l.value;
        text += reason + "=" + std::to_string(static_cast<int>(m.gauge.value)) + " ";
      }
  EXPECT_EQ(text,
            "bad_label=0 bad_value=1 duplicate_device=0 label_too_long=0 no_target=0 "
            "over_capacity=0 pod_on_other_node=0 unknown_node=0 unknown_pod=1 untrusted_target=0 ");
}

TEST(DiscoveryTrust, ABodyOverALimitIsAnExporterDownNamingIt) {
  DiscoveryOptions o;
  o.scrape.limits.devices_per_node = 1;
  Fixture f(o);
  f.Add(testing::MakeDaemonSetPod("gpu-operator", "dcgm-exporter-a", "cpu-1", "dcgm-exporter",
                                  {{"metrics", 9400}}));
  f.transport->SetDefault(Path("gpu-operator", "dcgm-exporter-a", 9400),
                          FakeReply::Json("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"} 1\n"
                                          "DCGM_FI_DEV_GPU_TEMP{gpu=\"1\"} 1\n"));
  scrape::ScrapeResult r = f.Cycle();
  EXPECT_TRUE(r.readings.empty());
  ASSERT_EQ(r.report.exporters.size(), 1u);
  EXPECT_FALSE(r.report.exporters[0].up);
  EXPECT_THAT(r.report.exporters[0].reason, HasSubstr("2 devices on one node, over the limit of 1 "
                                                      "(scrape.limits.devices_per_node)"));
}

TEST(DiscoveryTrust, AnUntrustedQueryApiIsNeverAsked) {
  Fixture f;
  kube::Service tenant;
  tenant.namespace_ = "tenant-a";
  tenant.name = "prometheus";
  tenant.ports = {{"web", 9090}};
  f.objects.services[tenant.Key()] = tenant;
  scrape::ScrapeResult r = f.Cycle();
  EXPECT_EQ(f.transport->CountRequests("/api/v1/namespaces/tenant-a/"), 0u);
  EXPECT_EQ(r.report.outcome_counts.at("untrusted"), 1u);
  const ProbeRecord* p = FindProbe(r.report, "prometheus");
  ASSERT_NE(p, nullptr);
  EXPECT_THAT(p->verdict.reason,
              HasSubstr("namespace tenant-a is not in discovery.trust.query_api_namespaces"));
  EXPECT_THAT(p->verdict.reason, HasSubstr("--target tenant-a/svc/prometheus:9090"));
}

}  // namespace
}  // namespace gpuattr::discovery
