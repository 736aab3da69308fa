// Discovery cycles against an in-memory transport: probes, caching, re-discovery, the politeness
// gate, 403s, and the diagnostics families built from the report.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string_view>
#include <thread>

#include "gpuattr/discovery/discovery.h"
#include "gpuattr/kube/api_client.h"
#include "gpuattr/metrics/discovery_metrics.h"
#include "gpuattr/metrics/families.h"
#include "gpuattr/report/status_page.h"
#include "gpuattr/scrape/cycle.h"
#include "gpuattr/sources/body.h"
#include "gpuattr/trust/vet.h"
#include "support/fake_clock.h"
#include "support/fake_transport.h"
#include "support/family_collector.h"
#include "support/pods.h"

namespace gpuattr::discovery {
namespace {

using std::chrono::seconds;
using testing::FakeReply;
using testing::FakeTransport;

constexpr char kDcgmBody[] =
    "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
    "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",modelName=\"NVIDIA A100\",Hostname=\"x\"} 42\n"
    "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\",modelName=\"NVIDIA A100\",Hostname=\"x\"} "
    "250\n";

kube::Pod MakePod(std::string name, std::string image, std::vector<kube::ContainerPort> ports) {
  return gpuattr::testing::MakeDaemonSetPod("gpu-operator", std::move(name), "node-a",
                                            std::move(image), std::move(ports));
}

std::shared_ptr<const kube::ClusterObjects> GpuCluster() {
  auto o = std::make_shared<kube::ClusterObjects>();
  kube::Node n;
  n.name = "node-a";
  n.capacity["nvidia.com/gpu"] = 1;
  o->nodes[n.name] = n;
  for (auto p :
       {MakePod("dcgm-exporter-a", "nvcr.io/nvidia/k8s/dcgm-exporter:3.3", {{"metrics", 9400}}),
        MakePod("gpu-feature-discovery", "nvcr.io/nvidia/gpu-feature-discovery", {{"", 8080}}),
        MakePod("web", "nginx", {{"http", 80}})})
    o->pods[p.Key()] = p;
  return o;
}

const std::string kDcgmPath =
    "/api/v1/namespaces/gpu-operator/pods/dcgm-exporter-a:9400/proxy/metrics";
const std::string kGfdPath =
    "/api/v1/namespaces/gpu-operator/pods/gpu-feature-discovery:8080/proxy/metrics";

struct Fixture {
  FakeClock clock;
  std::shared_ptr<FakeTransport> transport = std::make_shared<FakeTransport>("test");
  std::shared_ptr<kube::ApiClient> client;
  std::unique_ptr<scrape::Fetcher> fetcher;
  std::unique_ptr<Discovery> discovery;

  explicit Fixture(DiscoveryOptions options = {}) {
    kube::ApiClientOptions ao;
    ao.clock = &clock;
    client = std::make_shared<kube::ApiClient>(transport, ao);
    fetcher = scrape::MakeApiFetcher(client);
    discovery = std::make_unique<Discovery>("test", std::move(options), clock);
  }
  size_t ProxyGets() const { return transport->CountRequests("/api/v1/namespaces/"); }
};

const ExporterStatus* FindExporter(const DiscoveryReport& r, const std::string& pod) {
  for (const auto& e : r.exporters)
    if (e.pod == pod) return &e;
  return nullptr;
}

TEST(DiscoveryCycle, ProbesClassifiesAndScrapesOncePerCycle) {
  Fixture f;
  f.transport->SetDefault(kDcgmPath, FakeReply::Json(kDcgmBody));
  f.transport->SetDefault(kGfdPath, FakeReply::Json("go_goroutines 12\n"));
  auto objects = GpuCluster();

  scrape::ScrapeResult c1 = scrape::ReadCycle(*f.discovery, *f.fetcher, *objects);
  EXPECT_EQ(f.ProxyGets(), 2u);  // the probe's body is also the first scrape
  EXPECT_EQ(c1.report.probed_this_cycle, 2u);
  EXPECT_EQ(c1.report.outcome_counts.at("accepted"), 1u);
  EXPECT_EQ(c1.report.outcome_counts.at("unrecognised"), 1u);
  EXPECT_EQ(c1.report.outcome_counts.at("error"), 0u);
  EXPECT_TRUE(c1.report.nothing_found.empty());
  ASSERT_EQ(c1.readings.size(), 1u);
  EXPECT_EQ(c1.readings[0].pod, "dcgm-exporter-a");
  EXPECT_EQ(c1.readings[0].node, "node-a");
  const auto& dcgm = std::get<sources::DcgmReadings>(c1.readings[0].readings);
  ASSERT_EQ(dcgm.records.size(), 1u);
  EXPECT_DOUBLE_EQ(*dcgm.records[0].values.power_watts, 250);
  // An unrecognised candidate is no exporter: only the dcgm one has exporter_* series.
  ASSERT_EQ(c1.report.exporters.size(), 1u);
  EXPECT_TRUE(c1.report.exporters[0].up);
  EXPECT_EQ(c1.report.exporters[0].kind, "dcgm");
  bool saw_unrecognised = false;
  for (const auto& p : c1.report.probes)
    if (p.candidate.pod == "gpu-feature-discovery") {
      saw_unrecognised = true;
      EXPECT_NE(p.verdict.reason.find("go_goroutines 12"), std::string::npos) << p.verdict.reason;
    }
  EXPECT_TRUE(saw_unrecognised);

  // Steady state: one scrape per cycle, no probe until the 60 s cache runs out.
  f.clock.Advance(seconds(20));
  scrape::ScrapeResult c2 = scrape::ReadCycle(*f.discovery, *f.fetcher, *objects);
  EXPECT_EQ(f.ProxyGets(), 3u);
  EXPECT_EQ(f.transport->CountRequests(kGfdPath), 1u);
  EXPECT_EQ(c2.report.probed_this_cycle, 0u);
  EXPECT_EQ(c2.readings.size(), 1u);
  f.clock.Advance(seconds(20));
  scrape::ReadCycle(*f.discovery, *f.fetcher, *objects);
  f.clock.Advance(seconds(20));  // 60 s after the probe: the unrecognised one is probed again
  scrape::ScrapeResult c4 = scrape::ReadCycle(*f.discovery, *f.fetcher, *objects);
  EXPECT_EQ(f.transport->CountRequests(kGfdPath), 2u);
  EXPECT_EQ(f.transport->CountRequests(kDcgmPath), 4u);
  EXPECT_EQ(c4.report.probed_this_cycle, 1u);
}

TEST(DiscoveryCycle, AFailedScrapeReDiscoversNextCycle) {
  Fixture f;
  f.transport->SetDefault(kDcgmPath, FakeReply::Json(kDcgmBody));
  f.transport->SetDefault(kGfdPath, FakeReply::Json("go_goroutines 12\n"));
  auto objects = GpuCluster();
  scrape::ReadCycle(*f.discovery, *f.fetcher, *objects);
  f.transport->Enqueue(kDcgmPath, FakeReply::Json("{\"kind\":\"Status\"}", 503));
  f.clock.Advance(seconds(20));
  scrape::ScrapeResult failed = scrape::ReadCycle(*f.discovery, *f.fetcher, *objects);
  const ExporterStatus* e = FindExporter(failed.report, "dcgm-exporter-a");
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(e->up);
  EXPECT_EQ(e->kind, "dcgm");
  EXPECT_EQ(e->http_status, 503);
  EXPECT_FALSE(e->reason.empty());
  EXPECT_TRUE(failed.readings.empty());
  EXPECT_TRUE(failed.report.rediscovery_next_cycle);

  f.clock.Advance(seconds(20));  // the unrecognised candidate's 60 s have not run out
  scrape::ScrapeResult again = scrape::ReadCycle(*f.discovery, *f.fetcher, *objects);
  EXPECT_EQ(again.report.probed_this_cycle, 2u);  // both exporter candidates probed again
  EXPECT_EQ(f.transport->CountRequests(kGfdPath), 2u);
  EXPECT_EQ(again.readings.size(), 1u);
  EXPECT_FALSE(again.report.rediscovery_next_cycle);
}

// docs/security.md#memory: the bodies read in one cycle stop at scrape.limits.total_bytes; what
// is left is not read, says why on its status row, and is read first next cycle.
TEST(DiscoveryCycle, TheCyclesByteBudgetDefersTheRestAndReadsItFirstNextCycle) {
  DiscoveryOptions options;
  options.scrape.concurrency = 1;  // one read at a time: the order is the plan's
  const size_t body = std::string_view(kDcgmBody).size();
  options.scrape.limits.total_bytes = 2 * body - 1;  // the second body reaches it
  Fixture f(options);
  auto o = std::make_shared<kube::ClusterObjects>();
  for (std::string node : {"node-a", "node-b", "node-c"}) {
    kube::Node n;
    n.name = node;
    n.capacity["nvidia.com/gpu"] = 1;
    o->nodes[node] = n;
    kube::Pod p = gpuattr::testing::MakeDaemonSetPod(
        "gpu-operator", "dcgm-exporter-" + node.substr(5), node,
        "nvcr.io/nvidia/k8s/dcgm-exporter:3.3", {{"metrics", 9400}});
    o->pods[p.Key()] = p;
    f.transport->SetDefault("/api/v1/namespaces/gpu-operator/pods/dcgm-exporter-" + node.substr(5) +
                                ":9400/proxy/metrics",
                            FakeReply::Json(kDcgmBody));
  }
  auto read_pods = [](const scrape::ScrapeResult& r) {
    std::set<std::string> pods;
    for (const auto& e : r.readings) pods.insert(e.pod);
    return pods;
  };

  // Cycle 1, in key order: a and b are read (2 bodies), c is left.
  scrape::ScrapeResult c1 = scrape::ReadCycle(*f.discovery, *f.fetcher, *o);
  EXPECT_EQ(read_pods(c1), (std::set<std::string>{"dcgm-exporter-a", "dcgm-exporter-b"}));
  EXPECT_EQ(f.ProxyGets(), 2u);
  const ExporterStatus* left = FindExporter(c1.report, "dcgm-exporter-c");
  ASSERT_NE(left, nullptr) << "a deferred exporter keeps its status row";
  EXPECT_FALSE(left->up);
  EXPECT_THAT(left->reason,
              ::testing::HasSubstr("not read this cycle: " + std::to_string(2 * body) +
                                   " bytes of bodies were read, the limit is " +
                                   std::to_string(2 * body - 1) + " (scrape.limits.total_bytes)"));
  EXPECT_FALSE(c1.report.rediscovery_next_cycle) << "deferred is no failure";

  // Cycle 2: c first, then a; b waits.
  f.clock.Advance(seconds(20));
  scrape::ScrapeResult c2 = scrape::ReadCycle(*f.discovery, *f.fetcher, *o);
  EXPECT_EQ(read_pods(c2), (std::set<std::string>{"dcgm-exporter-c", "dcgm-exporter-a"}));
  const ExporterStatus* waits = FindExporter(c2.report, "dcgm-exporter-b");
  ASSERT_NE(waits, nullptr);
  EXPECT_FALSE(waits->up);
  EXPECT_EQ(f.ProxyGets(), 4u);

  // Cycle 3: b first; every exporter was read within two cycles of the one before.
  f.clock.Advance(seconds(20));
  scrape::ScrapeResult c3 = scrape::ReadCycle(*f.discovery, *f.fetcher, *o);
  EXPECT_TRUE(read_pods(c3).count("dcgm-exporter-b"));
}

TEST(DiscoveryCycle, NoGpuNoProbe) {
  Fixture f;
  auto o = std::make_shared<kube::ClusterObjects>();
  kube::Pod api =
      MakePod("kube-apiserver-gpu-node-1", "registry.k8s.io/kube-apiserver", {{"", 6443}});
  api.namespace_ = "kube-system";
  api.node_name = "gpu-node-1";
  o->pods[api.Key()] = api;
  kube::Node n;
  n.name = "gpu-node-1";
  o->nodes[n.name] = n;
  for (int i = 0; i < 10; ++i) {
    scrape::ScrapeResult c = scrape::ReadCycle(*f.discovery, *f.fetcher, *o);
    EXPECT_FALSE(c.report.gpu_present);
    EXPECT_NE(c.report.nothing_found.find("1 pods listed, 0 candidates probed"), std::string::npos)
        << c.report.nothing_found;
    EXPECT_NE(c.report.nothing_found.find("kubectl auth can-i get pods/proxy -A"),
              std::string::npos);
    f.clock.Advance(seconds(20));
  }
  EXPECT_EQ(f.transport->Requests().size(), 0u);
}

TEST(DiscoveryCycle, PinnedPodWithoutKeywordIsProbedOnItsPort) {
  DiscoveryOptions opts;
  opts.pins = *ParsePins({"telemetry/collector:9500", "mon/svc/prometheus:9090"});
  Fixture f(opts);
  auto o = std::make_shared<kube::ClusterObjects>();
  kube::Pod p = MakePod("collector-x1", "example.com/collector:1", {{"http", 8080}});
  p.namespace_ = "telemetry";
  o->pods[p.Key()] = p;
  const std::string path = "/api/v1/namespaces/telemetry/pods/collector-x1:9500/proxy/metrics";
  f.transport->SetDefault(path, FakeReply::Json(kDcgmBody));
  scrape::ScrapeResult c = scrape::ReadCycle(*f.discovery, *f.fetcher, *o);
  EXPECT_EQ(f.transport->CountRequests(path), 1u);
  EXPECT_EQ(c.report.outcome_counts.at("pinned"), 1u);
  ASSERT_EQ(c.readings.size(), 1u);
  ASSERT_EQ(c.report.pins.size(), 2u);
  EXPECT_NE(c.report.pins[1].note.find("not used: exporter pods answer directly"),
            std::string::npos)
      << c.report.pins[1].note;
}

TEST(DiscoveryCycle, ForbiddenProxyIsAnErrorNamingThePermission) {
  Fixture f;
  const char forbidden[] =
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403})";
  f.transport->SetDefault("/api/v1/namespaces/", FakeReply::Json(forbidden, 403));
  scrape::ScrapeResult c = scrape::ReadCycle(*f.discovery, *f.fetcher, *GpuCluster());
  ASSERT_FALSE(c.errors.empty());
  EXPECT_NE(c.errors[0].find("pods/proxy"), std::string::npos) << c.errors[0];
  EXPECT_NE(c.errors[0].find("cannot get"), std::string::npos) << c.errors[0];
  EXPECT_NE(c.errors[0].find("gpu-operator"), std::string::npos) << c.errors[0];
  EXPECT_EQ(c.errors.size(), 1u);  // both pods in one namespace: one message
  EXPECT_EQ(c.report.outcome_counts.at("error"), 2u);
  // A candidate whose probe failed gets exporter_up 0 with kind "unknown".
  const ExporterStatus* e = FindExporter(c.report, "dcgm-exporter-a");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->kind, "unknown");
  EXPECT_FALSE(e->up);
  EXPECT_EQ(e->http_status, 403);
  EXPECT_NE(c.report.nothing_found.find("2 candidates probed"), std::string::npos);
}

TEST(DiscoveryFamilies, ExporterAndCandidateSeries) {
  Fixture f;
  f.transport->SetDefault(kDcgmPath, FakeReply::Json(kDcgmBody));
  f.transport->SetDefault(kGfdPath, FakeReply::Json("not exposition at all\n", 503));
  scrape::ScrapeResult c = scrape::ReadCycle(*f.discovery, *f.fetcher, *GpuCluster());
  metrics::FamilyCollector w;
  metrics::AddDiscoveryFamilies(c.report, w);
  auto fams = std::move(w).Finish();
  std::map<std::string, const prometheus::MetricFamily*> by_name;
  for (const auto& fam : fams) by_name[fam.name] = &fam;
  for (const auto& spec : metrics::DiscoveryFamilySpecs())
    ASSERT_TRUE(by_name.count(std::string(spec.name))) << spec.name;
  const auto& up = *by_name["gpuattr_exporter_up"];
  ASSERT_EQ(up.metric.size(), 2u);
  std::map<std::string, double> up_by_kind;
  for (const auto& m : up.metric) {
    std::map<std::string, std::string> l;
    for (const auto& p : m.label) l[p.name] = p.value;
    EXPECT_EQ(l["cluster"], "test");
    EXPECT_EQ(l["namespace"], "gpu-operator");
    EXPECT_EQ(l["node"], "node-a");
    up_by_kind[l["kind"]] = m.gauge.value;
  }
  EXPECT_EQ(up_by_kind["dcgm"], 1);
  EXPECT_EQ(up_by_kind["unknown"], 0);
  // Every probe outcome (untrusted included), plus no_port and waiting.
  EXPECT_EQ(by_name["gpuattr_discovery_candidates"]->metric.size(), 7u);
  // Every rejection reason of the exporter that was read, 0 included; none for the one down.
  EXPECT_EQ(by_name["gpuattr_exporter_rejected_lines"]->metric.size(),
            std::size(trust::kRejectReasons));
  std::string html = report::RenderDiscoverySection(c.report, 0);
  EXPECT_NE(html.find("dcgm-exporter-a"), std::string::npos);
  EXPECT_NE(html.find("503"), std::string::npos);
}

// docs/design.md#caching-and-the-probe-budget: port-less GPU pods are never probed, inference
// probes are spread over cycles within the budget, the exporter is read in the first cycle whatever
// the budget.
TEST(DiscoveryCycle, PortlessPodsAreNeverProbedAndInferenceProbesKeepTheBudget) {
  DiscoveryOptions options;
  options.inference_probes_per_cycle = 3;
  Fixture f(options);
  f.transport->SetDefault(kDcgmPath, FakeReply::Json(kDcgmBody));
  auto objects = std::make_shared<kube::ClusterObjects>(*GpuCluster());
  auto gpu_pod = [&](std::string name, std::vector<kube::ContainerPort> ports) {
    kube::Pod p = gpuattr::testing::MakeRunningPod("ml", std::move(name), "node-a",
                                                   "registry.example/job:1", std::move(ports));
    p.containers[0].limits["nvidia.com/gpu"] = 1;
    objects->pods[p.Key()] = p;
  };
  for (int i = 0; i < 20; ++i) gpu_pod("job-" + std::to_string(i), {});
  for (int i = 0; i < 7; ++i) gpu_pod("notebook-" + std::to_string(i), {{"", 8888}});
  gpu_pod("vllm-0", {{"http", 8000}});
  const std::string vllm = "/api/v1/namespaces/ml/pods/vllm-0:8000/proxy/metrics";
  f.transport->SetDefault(vllm, FakeReply::Json("vllm:num_requests_running{model_name=\"m\"} 1\n"));

  scrape::ScrapeResult c1 = scrape::ReadCycle(*f.discovery, *f.fetcher, *objects);
  EXPECT_EQ(f.transport->CountRequests(kDcgmPath), 1u);  // the exporter, first cycle
  EXPECT_EQ(c1.report.skipped_no_port, 20u);
  EXPECT_EQ(c1.report.outcome_counts.at("no_port"), 20u);
  EXPECT_EQ(c1.report.inference_probe_budget, 3u);
  EXPECT_EQ(c1.report.waiting_first_probe, 5u);  // 8 inference candidates, 3 probed
  EXPECT_EQ(c1.report.outcome_counts.at("waiting"), 5u);
  EXPECT_EQ(f.transport->CountRequests("/api/v1/namespaces/ml/"), 3u);
  std::string html = report::RenderDiscoverySection(c1.report, 0);
  EXPECT_NE(html.find("20 pods skipped: no declared port"), std::string::npos) << html;
  EXPECT_NE(html.find("5 inference candidates wait for a first probe"), std::string::npos);

  // Cycles go on until nothing waits: 8 candidates at 3 per cycle take 3 cycles.
  size_t cycles = 1, vllm_found_in = 0;
  for (scrape::ScrapeResult c = std::move(c1);; ++cycles) {
    for (const auto& e : c.report.exporters)
      if (e.pod == "vllm-0" && e.up && vllm_found_in == 0) vllm_found_in = cycles;
    if (c.report.waiting_first_probe == 0 || cycles == 10) break;
    f.clock.Advance(seconds(20));
    c = scrape::ReadCycle(*f.discovery, *f.fetcher, *objects);
    // 3 inference probes a cycle; the second cycle also tries gpu-feature-discovery again, whose
    // first probe failed (an exporter's first failure is due at the next cycle).
    EXPECT_LE(c.report.probed_this_cycle, cycles == 1 ? 4u : 3u);
  }
  EXPECT_EQ(cycles, 3u);
  EXPECT_EQ(vllm_found_in, 1u);  // a named http port goes before the notebooks' first ports
  // Over every cycle: not one GET to a port-less pod.
  for (const auto& req : f.transport->Requests())
    EXPECT_EQ(req.path.find("/pods/job-"), std::string::npos) << req.path;
  // Failed notebook probes back off (2 min, then 4): none is probed again within 2 minutes.
  const size_t notebook_gets = f.transport->CountRequests("/api/v1/namespaces/ml/pods/notebook-");
  EXPECT_EQ(notebook_gets, 7u);
  f.clock.Advance(seconds(20));
  scrape::ReadCycle(*f.discovery, *f.fetcher, *objects);
  EXPECT_EQ(f.transport->CountRequests("/api/v1/namespaces/ml/pods/notebook-"), 7u);
}

TEST(ReadBody, MalformedLinesCountButGoodLinesStay) {
  const std::string body = std::string(kDcgmBody) + "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\" 40\n";
  sources::BodyRead r = sources::ReadBody(body, sources::BodyKind::kDcgm);
  ASSERT_TRUE(r.readings.has_value());
  EXPECT_EQ(std::get<sources::DcgmReadings>(*r.readings).records.size(), 1u);
  EXPECT_EQ(r.parse_errors, 1u);
  EXPECT_NE(r.reason.find("line 4"), std::string::npos) << r.reason;

  sources::BodyRead g =
      sources::ReadBody("\x01\x02 this is {not exposition\n<html>\n", sources::BodyKind::kDcgm);
  EXPECT_FALSE(g.readings.has_value());
  EXPECT_GE(g.parse_errors, 1u);
  EXPECT_NE(g.reason.find("no valid sample"), std::string::npos) << g.reason;

  sources::BodyRead empty = sources::ReadBody("", sources::BodyKind::kDcgm);
  EXPECT_FALSE(empty.readings.has_value());
  EXPECT_EQ(empty.reason, "empty body");
  EXPECT_FALSE(sources::ReadBody(kDcgmBody, sources::BodyKind::kUnrecognised).readings);
}

// Discovery makes no request: each step returns what to read as a value and learns from what
// the reads found (here made up, as scrape/read.h would report them).
TEST(DiscoverySteps, DecideAsValuesAndLearnFromOutcomes) {
  FakeClock clock;
  Discovery d("test", {}, clock);
  auto objects = GpuCluster();
  EXPECT_FALSE(d.Begin(*objects).has_value());  // one GPU node: no preferred query API
  std::vector<PodRead> reads = d.PlanPodReads(nullptr);
  ASSERT_EQ(reads.size(), 2u);  // by key: both candidates are due for a probe
  EXPECT_EQ(reads[0].candidate.pod, "dcgm-exporter-a");
  EXPECT_EQ(reads[1].candidate.pod, "gpu-feature-discovery");
  EXPECT_TRUE(reads[0].probe);
  EXPECT_EQ(reads[0].timeout, std::chrono::milliseconds(5000));

  std::vector<PodReadOutcome> outcomes(2);
  for (PodReadOutcome& o : outcomes) {
    o.done = true;
    o.fetch.ok = true;
    o.fetch.http_status = 200;
  }
  outcomes[0].verdict = {Outcome::kAccepted, sources::BodyKind::kDcgm, "dcgm (DCGM_FI_DEV_*)", 200};
  outcomes[0].kind = sources::BodyKind::kDcgm;
  outcomes[0].read = outcomes[0].up = true;
  outcomes[0].status.pod = "dcgm-exporter-a";
  outcomes[0].status.up = true;
  outcomes[1].verdict = {Outcome::kUnrecognised, sources::BodyKind::kUnrecognised, "x", 200};
  EXPECT_FALSE(d.RecordPodReads(reads, outcomes).has_value());  // an exporter answered
  DiscoveryFindings found = d.Finish(nullptr);
  EXPECT_EQ(found.report.probed_this_cycle, 2u);
  EXPECT_EQ(found.report.outcome_counts.at("accepted"), 1u);
  ASSERT_EQ(found.report.exporters.size(), 1u);
  EXPECT_EQ(found.report.exporters[0].pod, "dcgm-exporter-a");
  EXPECT_TRUE(found.errors.empty());

  // The next cycle scrapes the accepted target with the scrape timeout; the other is not due.
  clock.Advance(seconds(20));
  EXPECT_FALSE(d.Begin(*objects).has_value());
  reads = d.PlanPodReads(nullptr);
  ASSERT_EQ(reads.size(), 1u);
  EXPECT_FALSE(reads[0].probe);
  EXPECT_EQ(reads[0].kind, sources::BodyKind::kDcgm);
  EXPECT_EQ(reads[0].timeout, std::chrono::milliseconds(15000));
  // Nothing answered: a GPU cluster falls back to the query API (no service here: no read).
  outcomes.assign(1, PodReadOutcome{});
  outcomes[0].done = outcomes[0].read = true;
  outcomes[0].fetch.error = "no response";
  std::optional<QueryApiRead> fallback = d.RecordPodReads(reads, outcomes);
  ASSERT_TRUE(fallback.has_value());
  EXPECT_TRUE(fallback->probes.empty());
  EXPECT_FALSE(fallback->chosen.has_value());
  QueryApiReadOutcome nothing;
  found = d.Finish(&nothing);
  EXPECT_TRUE(found.report.rediscovery_next_cycle);
  EXPECT_EQ(found.report.read_path_reason, "below_threshold");
}

TEST(HttpStatusOfError, FromTheFieldOrACredentialFailure) {
  EXPECT_EQ(scrape::HttpStatusOfError({ErrorCode::kPermissionDenied, "forbidden"}), 403);
  EXPECT_EQ(scrape::HttpStatusOfError({ErrorCode::kUnauthenticated, "exec plugin failed"}), 401);
  EXPECT_EQ(scrape::HttpStatusOfError(
                {ErrorCode::kUnavailable, "apiserver error: answered HTTP 503 to get", 503}),
            503);
  // The text is never read: only the field says a response arrived.
  EXPECT_EQ(scrape::HttpStatusOfError(
                {ErrorCode::kUnavailable, "apiserver error: answered HTTP 503 to get"}),
            0);
  EXPECT_EQ(scrape::HttpStatusOfError({ErrorCode::kTimeout, "timed out after 5000 ms"}), 0);
}

TEST(RunBounded, NeverMoreThanTheLimitAtOnce) {
  std::atomic<int> running{0}, peak{0}, done{0};
  scrape::RunBounded(40, 3, [&](size_t) {
    int now = ++running;
    int p = peak.load();
    while (now > p && !peak.compare_exchange_weak(p, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    --running;
    ++done;
  });
  EXPECT_EQ(done.load(), 40);
  EXPECT_LE(peak.load(), 3);
  StopSignal stop;
  stop.Stop();
  int ran = 0;
  scrape::RunBounded(
      5, 2, [&](size_t) { ++ran; }, &stop);
  EXPECT_EQ(ran, 0);
}

}  // namespace
}  // namespace gpuattr::discovery
