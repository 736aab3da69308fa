// The query-API fallback against an in-memory transport: which services are candidates, the
// paths, when the fallback runs at all, the probe budget, the negative cache, pins, failures.
#include "gpuattr/discovery/query_api.h"

#include <gtest/gtest.h>

#include "gpuattr/discovery/discovery.h"
#include "gpuattr/kube/api_client.h"
#include "gpuattr/scrape/cycle.h"
#include "support/fake_clock.h"
#include "support/fake_transport.h"
#include "support/pods.h"

namespace gpuattr::discovery {
namespace {

using std::chrono::seconds;
using testing::FakeReply;
using testing::FakeTransport;

kube::Service MakeService(std::string ns, std::string name, std::vector<kube::ServicePort> ports) {
  kube::Service s;
  s.namespace_ = std::move(ns);
  s.name = std::move(name);
  s.ports = std::move(ports);
  return s;
}

void AddService(kube::ClusterObjects& o, kube::Service s) { o.services[s.Key()] = std::move(s); }

// A GPU node, a dcgm-exporter pod (which the tests make answer or fail) and a workload pod.
std::shared_ptr<kube::ClusterObjects> GpuCluster() {
  auto o = std::make_shared<kube::ClusterObjects>();
  kube::Node n;
  n.name = "node-a";
  n.capacity["nvidia.com/gpu"] = 2;
  o->nodes[n.name] = n;
  kube::Pod exporter = gpuattr::testing::MakeDaemonSetPod(
      "gpu-operator", "dcgm-exporter-a", "node-a", "nvcr.io/nvidia/k8s/dcgm-exporter:3.3",
      {{"metrics", 9400}});
  o->pods[exporter.Key()] = exporter;
  kube::Pod work =
      gpuattr::testing::MakeRunningPod("ml", "llm-0", "node-a", "vllm/vllm-openai", {});
  o->pods[work.Key()] = work;
  return o;
}

const std::string kExporterPath =
    "/api/v1/namespaces/gpu-operator/pods/dcgm-exporter-a:9400/proxy/metrics";
constexpr char kRefused[] = R"({"kind":"Status","code":503,"message":"connection refused"})";
constexpr char kDcgmBody[] = "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\"} 250\n";

std::string SvcPath(const std::string& ns, const std::string& svc, int port) {
  return "/api/v1/namespaces/" + ns + "/services/" + svc + ":" + std::to_string(port) +
         "/proxy/api/v1/query?query=";
}
std::string ProbePrefix(const std::string& ns, const std::string& svc, int port) {
  return SvcPath(ns, svc, port) + "count";
}
std::string DataPrefix(const std::string& ns, const std::string& svc, int port) {
  return SvcPath(ns, svc, port) + "%7B";
}

constexpr char kEmptyVector[] =
    R"({"status":"success","data":{"resultType":"vector","result":[]}})";
constexpr char kProbeHit[] = R"({"status":"success","data":{"resultType":"vector","result":[
  {"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE"},"value":[1700000000,"2"]}]}})";
// The exporter's series as kube-prometheus-stack stores them, from two HA replicas.
constexpr char kDataAnswer[] = R"({"status":"success","data":{"resultType":"vector","result":[
  {"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","gpu":"0","UUID":"GPU-1","Hostname":"dcgm-exporter-a",
    "namespace":"gpu-operator","pod":"dcgm-exporter-a","container":"exporter","exported_namespace":"ml",
    "exported_pod":"llm-0","exported_container":"vllm","job":"dcgm","instance":"10.0.0.5:9400",
    "prometheus_replica":"prometheus-0"},"value":[1700000000,"250"]},
  {"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","gpu":"0","UUID":"GPU-1","Hostname":"dcgm-exporter-a",
    "namespace":"gpu-operator","pod":"dcgm-exporter-a","container":"exporter","exported_namespace":"ml",
    "exported_pod":"llm-0","exported_container":"vllm","job":"dcgm","instance":"10.0.0.5:9400",
    "prometheus_replica":"prometheus-1"},"value":[1700000001,"251"]},
  {"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","gpu":"1","UUID":"GPU-2","Hostname":"dcgm-exporter-a",
    "namespace":"gpu-operator","pod":"dcgm-exporter-a","container":"exporter","job":"dcgm",
    "instance":"10.0.0.5:9400","prometheus_replica":"prometheus-0"},"value":[1700000000,"60"]}]}})";

struct Fixture {
  FakeClock clock;
  std::shared_ptr<FakeTransport> transport = std::make_shared<FakeTransport>("test");
  std::shared_ptr<kube::ApiClient> client;
  std::unique_ptr<scrape::Fetcher> fetcher;
  std::unique_ptr<Discovery> discovery;

  explicit Fixture(DiscoveryOptions options = {}) {
    kube::ApiClientOptions ao;
    ao.clock = &clock;
    ao.max_attempts = 1;
    client = std::make_shared<kube::ApiClient>(transport, ao);
    fetcher = scrape::MakeApiFetcher(client);
    discovery = std::make_unique<Discovery>("test", std::move(options), clock);
  }
  size_t ServiceGets() const { return transport->CountRequests("/api/v1/namespaces/monitoring/"); }
  scrape::ScrapeResult Cycle(const std::shared_ptr<kube::ClusterObjects>& o) {
    return scrape::ReadCycle(*discovery, *fetcher, *o);
  }
};

const ExporterStatus* FindExporter(const DiscoveryReport& r, const std::string& pod) {
  for (const auto& e : r.exporters)
    if (e.pod == pod) return &e;
  return nullptr;
}

// ---- Candidates and paths ---------------------------------------------------------------------

TEST(QueryApiCandidates, NamePatternsPickQueryApisAndSkipTheRest) {
  struct Case {
    const char* name;
    std::optional<QueryApiFlavor> flavor;
  };
  for (const Case& c : std::vector<Case>{
           {"prometheus-k8s", QueryApiFlavor::kPrometheus},
           {"kube-prometheus-stack-prometheus", QueryApiFlavor::kPrometheus},
           {"prometheus-operated", QueryApiFlavor::kPrometheus},
           {"thanos-query", QueryApiFlavor::kThanosQuery},
           {"thanos-querier", QueryApiFlavor::kThanosQuery},
           {"thanos-query-frontend", QueryApiFlavor::kThanosQuery},
           {"vmsingle-victoria-metrics", QueryApiFlavor::kVictoriaSingle},
           {"victoria-metrics-single-server", QueryApiFlavor::kVictoriaSingle},
           {"vmselect-vmcluster", QueryApiFlavor::kVictoriaSelect},
           {"mimir-query-frontend", QueryApiFlavor::kMimir},
           {"cortex-querier", QueryApiFlavor::kMimir},
           {"kube-prometheus-stack-alertmanager", std::nullopt},
           {"kube-prometheus-stack-operator", std::nullopt},
           {"kube-prometheus-stack-prometheus-node-exporter", std::nullopt},
           {"kube-prometheus-stack-kube-state-metrics", std::nullopt},
           {"kube-prometheus-stack-thanos-discovery", std::nullopt},
           {"thanos-store", std::nullopt},
           {"vminsert-vmcluster", std::nullopt},
           {"mimir-distributor", std::nullopt},
           {"prometheus-adapter", std::nullopt},
           {"nvidia-dcgm-exporter", std::nullopt},
           {"grafana", std::nullopt},
       })
    EXPECT_EQ(QueryApiFlavorOf(c.name), c.flavor) << c.name;
}

TEST(QueryApiCandidates, PortChoice) {
  auto port = [](QueryApiFlavor f, std::vector<kube::ServicePort> ports) {
    auto p = QueryApiPort(MakeService("m", "s", std::move(ports)), f);
    return p ? p->first.port : 0;
  };
  EXPECT_EQ(port(QueryApiFlavor::kPrometheus, {{"reloader-web", 8080}, {"http-web", 9090}}), 9090);
  EXPECT_EQ(port(QueryApiFlavor::kPrometheus, {{"metrics", 8080}, {"web", 9091}}), 9091);
  EXPECT_EQ(port(QueryApiFlavor::kThanosQuery, {{"grpc", 10901}, {"http", 10902}}), 10902);
  EXPECT_EQ(port(QueryApiFlavor::kThanosQuery, {{"grpc", 10901}, {"x", 9090}}), 9090);
  EXPECT_EQ(port(QueryApiFlavor::kVictoriaSingle, {{"a", 8428}, {"b", 8080}}), 8428);
  EXPECT_EQ(port(QueryApiFlavor::kVictoriaSelect, {{"a", 8481}, {"b", 8080}}), 8481);
  EXPECT_EQ(port(QueryApiFlavor::kMimir, {{"grpc", 9095}, {"x", 8080}}), 8080);
  EXPECT_EQ(port(QueryApiFlavor::kMimir, {{"grpc", 9095}, {"http", 80}}), 80);
  EXPECT_EQ(port(QueryApiFlavor::kPrometheus, {{"", 9999}}), 9999);  // the only port
  EXPECT_EQ(port(QueryApiFlavor::kPrometheus, {{"a", 1}, {"b", 2}}), 0);
}

TEST(QueryApiCandidates, PinsFirstThenByFlavorNamespaceAndName) {
  kube::ClusterObjects o;
  AddService(o, MakeService("z", "prometheus", {{"web", 9090}}));
  AddService(o, MakeService("a", "prometheus", {{"web", 9090}}));
  AddService(o, MakeService("m", "thanos-query", {{"http", 10902}}));
  AddService(o, MakeService("m", "vmsingle", {{"http", 8428}}));
  AddService(o, MakeService("m", "metrics-gateway", {{"api", 9000}}));
  AddService(o, MakeService("m", "alertmanager", {{"web", 9093}}));
  auto pins = ParsePins({"m/svc/metrics-gateway:api", "z/svc/prometheus:9090"});
  ASSERT_TRUE(pins.ok());
  auto c = QueryApiCandidates(o, pins->services);
  std::vector<std::string> keys;
  for (const auto& q : c) keys.push_back(q.Key());
  EXPECT_EQ(keys, (std::vector<std::string>{"m/metrics-gateway:api", "z/prometheus:9090",
                                            "m/thanos-query:10902", "a/prometheus:9090",
                                            "m/vmsingle:8428"}));
  EXPECT_TRUE(c[0].pinned);
  EXPECT_EQ(c[0].port_number, 9000);  // the named port resolved from the service
  EXPECT_FALSE(c[2].pinned);
  EXPECT_EQ(c[2].port_source, "10902");
}

TEST(QueryApiPaths, EncodeTheQueryAndUseTheFlavorsPrefix) {
  EXPECT_EQ(UrlEncodeQueryValue("count by (__name__) ({__name__=~\"a|b\"})"),
            "count%20by%20%28__name__%29%20%28%7B__name__%3D~%22a%7Cb%22%7D%29");
  QueryApiCandidate c;
  c.namespace_ = "monitoring";
  c.service = "prometheus-k8s";
  c.port = "web";
  EXPECT_EQ(
      QueryApiPath(c, "up"),
      "/api/v1/namespaces/monitoring/services/prometheus-k8s:web/proxy/api/v1/query?query=up");
  c.flavor = QueryApiFlavor::kVictoriaSelect;
  c.port = "8481";
  EXPECT_EQ(QueryApiPath(c, "up"),
            "/api/v1/namespaces/monitoring/services/prometheus-k8s:8481/"
            "proxy/select/0/prometheus/api/v1/query?query=up");
  c.flavor = QueryApiFlavor::kMimir;
  EXPECT_NE(QueryApiPath(c, "up").find("/proxy/prometheus/api/v1/query?"), std::string::npos);
}

TEST(QueryApiLookup, ExporterPodsAreTheOnesThatLookLikeExportersAndHoldNoGpu) {
  auto o = GpuCluster();
  kube::Pod gpu_pod = gpuattr::testing::MakeRunningPod("ml", "cuda-exporter-like-train", "node-a",
                                                       "nvcr.io/nvidia/cuda", {});
  gpu_pod.containers[0].limits["nvidia.com/gpu"] = 1;
  o->pods[gpu_pod.Key()] = gpu_pod;
  sources::PodLookup l = PodLookupFor(*o);
  EXPECT_TRUE(l.is_exporter("gpu-operator", "dcgm-exporter-a"));
  EXPECT_FALSE(l.is_exporter("ml", "llm-0"));
  EXPECT_FALSE(l.is_exporter("ml", "cuda-exporter-like-train"));            // it holds a GPU
  EXPECT_TRUE(l.is_exporter("gpu-operator", "nvidia-dcgm-exporter-gone"));  // unknown: by name
  EXPECT_FALSE(l.is_exporter("ml", "gone-workload"));
  EXPECT_EQ(l.node_of("gpu-operator", "dcgm-exporter-a"), "node-a");
  EXPECT_EQ(l.node_of("ml", "gone-workload"), "");
}

// ---- The fallback in discovery cycles ---------------------------------------------------------

TEST(QueryApiFallback, UsedWhenNoExporterPodAnswersOneQueryPerCycle) {
  Fixture f;
  auto o = GpuCluster();
  AddService(*o, MakeService("monitoring", "prometheus-k8s", {{"web", 9090}}));
  f.transport->SetDefault(kExporterPath, FakeReply::Json(kRefused, 503));
  f.transport->SetDefault(ProbePrefix("monitoring", "prometheus-k8s", 9090),
                          FakeReply::Json(kProbeHit));
  f.transport->SetDefault(DataPrefix("monitoring", "prometheus-k8s", 9090),
                          FakeReply::Json(kDataAnswer));

  scrape::ScrapeResult c1 = f.Cycle(o);
  EXPECT_EQ(f.transport->CountRequests(ProbePrefix("monitoring", "prometheus-k8s", 9090)), 1u);
  EXPECT_EQ(f.transport->CountRequests(DataPrefix("monitoring", "prometheus-k8s", 9090)), 1u);
  EXPECT_EQ(f.transport->LastRequest().headers.at("Accept"), "application/json");
  ASSERT_EQ(c1.readings.size(), 1u);
  const sources::ExporterReadings& d = c1.readings[0];
  EXPECT_EQ(d.namespace_, "monitoring");
  EXPECT_EQ(d.pod, "prometheus-k8s");
  EXPECT_EQ(d.node, "node-a");  // from the scraped exporter pod (no node label)
  EXPECT_TRUE(std::holds_alternative<sources::DcgmReadings>(d.readings));
  const auto& dcgm = std::get<sources::DcgmReadings>(d.readings);
  ASSERT_EQ(dcgm.records.size(), 2u);  // the two HA replicas of GPU 0 are one
  ASSERT_TRUE(dcgm.records[0].pod);
  EXPECT_EQ(dcgm.records[0].pod->id.name, "llm-0");
  EXPECT_DOUBLE_EQ(*dcgm.records[0].values.power_watts, 251);  // the fresher replica
  EXPECT_FALSE(dcgm.records[1].pod);                           // its pod was the exporter itself
  EXPECT_EQ(dcgm.stats.duplicate_samples, 0u);

  const ExporterStatus* api = FindExporter(c1.report, "prometheus-k8s");
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->kind, "prometheus");
  EXPECT_TRUE(api->up);
  EXPECT_EQ(api->port, 9090);
  const ExporterStatus* pod = FindExporter(c1.report, "dcgm-exporter-a");
  ASSERT_NE(pod, nullptr);
  EXPECT_FALSE(pod->up);
  EXPECT_TRUE(c1.report.nothing_found.empty());
  EXPECT_EQ(c1.report.outcome_counts.at("accepted"), 1u);

  // Steady state: the chosen API gets one query per cycle and no probe.
  for (int i = 0; i < 4; ++i) {
    f.clock.Advance(seconds(20));
    scrape::ScrapeResult c = f.Cycle(o);
    EXPECT_EQ(c.readings.size(), 1u);
  }
  EXPECT_EQ(f.transport->CountRequests(ProbePrefix("monitoring", "prometheus-k8s", 9090)), 1u);
  EXPECT_EQ(f.transport->CountRequests(DataPrefix("monitoring", "prometheus-k8s", 9090)), 5u);
}

TEST(QueryApiFallback, NotSearchedWhileAnExporterPodAnswers) {
  Fixture f;
  auto o = GpuCluster();
  AddService(*o, MakeService("monitoring", "prometheus-k8s", {{"web", 9090}}));
  f.transport->SetDefault(kExporterPath, FakeReply::Json(kDcgmBody));
  for (int i = 0; i < 3; ++i) {
    scrape::ScrapeResult c = f.Cycle(o);
    EXPECT_EQ(c.readings.size(), 1u);
    f.clock.Advance(seconds(20));
  }
  EXPECT_EQ(f.ServiceGets(), 0u);
}

TEST(QueryApiFallback, NoSearchOnAClusterWithoutGpus) {
  Fixture f;
  auto o = std::make_shared<kube::ClusterObjects>();
  kube::Node n;
  n.name = "cpu-1";
  o->nodes[n.name] = n;
  AddService(*o, MakeService("monitoring", "prometheus-k8s", {{"web", 9090}}));
  for (int i = 0; i < 4; ++i) {
    f.Cycle(o);
    f.clock.Advance(seconds(30));
  }
  EXPECT_EQ(f.transport->Requests().size(), 0u);
}

TEST(QueryApiFallback, AtMostSixProbesPerCycleAndNoReprobeWithin60Seconds) {
  Fixture f;
  auto o = GpuCluster();
  for (int i = 0; i < 9; ++i)
    AddService(*o, MakeService("monitoring", "prometheus-" + std::to_string(i), {{"web", 9090}}));
  f.transport->SetDefault(kExporterPath, FakeReply::Json(kRefused, 503));
  f.transport->SetDefault("/api/v1/namespaces/monitoring/", FakeReply::Json(kEmptyVector));

  scrape::ScrapeResult c1 = f.Cycle(o);
  EXPECT_EQ(f.ServiceGets(), 6u);
  EXPECT_EQ(c1.report.outcome_counts.at("unrecognised"), 6u);
  EXPECT_NE(c1.report.nothing_found.find("query API with GPU series either (9 candidate services"),
            std::string::npos)
      << c1.report.nothing_found;
  f.clock.Advance(seconds(20));
  f.Cycle(o);
  EXPECT_EQ(f.ServiceGets(), 9u);  // the three not probed yet
  f.clock.Advance(seconds(20));
  f.Cycle(o);
  EXPECT_EQ(f.ServiceGets(), 9u);  // every verdict is younger than 60 s
  f.clock.Advance(seconds(19));
  f.Cycle(o);
  EXPECT_EQ(f.ServiceGets(), 9u);  // 59 s after the first probes
  f.clock.Advance(seconds(2));
  f.Cycle(o);
  EXPECT_EQ(f.ServiceGets(), 15u);  // 61 s: the first six are due again
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(f.transport->CountRequests(
                  ProbePrefix("monitoring", "prometheus-" + std::to_string(i), 9090)),
              i < 6 ? 2u : 1u)
        << i;
}

TEST(QueryApiFallback, APinnedServiceIsProbedFirstAndUsed) {
  DiscoveryOptions opts;
  opts.pins = *ParsePins({"monitoring/svc/metrics-gateway:api"});
  Fixture f(opts);
  auto o = GpuCluster();
  AddService(*o, MakeService("monitoring", "metrics-gateway", {{"api", 9000}}));
  AddService(*o, MakeService("monitoring", "prometheus-k8s", {{"web", 9090}}));
  f.transport->SetDefault(kExporterPath, FakeReply::Json(kRefused, 503));
  const std::string pinned =
      "/api/v1/namespaces/monitoring/services/metrics-gateway:api/proxy/"
      "api/v1/query?query=";
  f.transport->SetDefault(pinned + "count", FakeReply::Json(kProbeHit));
  f.transport->SetDefault(pinned + "%7B", FakeReply::Json(kDataAnswer));
  f.transport->SetDefault(SvcPath("monitoring", "prometheus-k8s", 9090),
                          FakeReply::Json(kProbeHit));

  scrape::ScrapeResult c = f.Cycle(o);
  EXPECT_EQ(f.transport->CountRequests(pinned), 2u);  // probe + query
  EXPECT_EQ(f.transport->CountRequests(SvcPath("monitoring", "prometheus-k8s", 9090)), 0u);
  ASSERT_EQ(c.readings.size(), 1u);
  EXPECT_EQ(c.readings[0].pod, "metrics-gateway");
  EXPECT_EQ(c.report.outcome_counts.at("pinned"), 1u);
  ASSERT_EQ(c.report.pins.size(), 1u);
  EXPECT_NE(c.report.pins[0].note.find("queried"), std::string::npos) << c.report.pins[0].note;
}

TEST(QueryApiFallback, AFailedPinIsAQueryApiThatIsDownAndTheSearchGoesOn) {
  DiscoveryOptions opts;
  opts.pins = *ParsePins({"monitoring/svc/broken-prom:9090"});
  Fixture f(opts);
  auto o = GpuCluster();
  AddService(*o, MakeService("monitoring", "prometheus-k8s", {{"web", 9090}}));
  f.transport->SetDefault(kExporterPath, FakeReply::Json(kRefused, 503));
  f.transport->SetDefault(SvcPath("monitoring", "broken-prom", 9090),
                          FakeReply::Json(kRefused, 503));
  f.transport->SetDefault(ProbePrefix("monitoring", "prometheus-k8s", 9090),
                          FakeReply::Json(kProbeHit));
  f.transport->SetDefault(DataPrefix("monitoring", "prometheus-k8s", 9090),
                          FakeReply::Json(kDataAnswer));
  scrape::ScrapeResult c = f.Cycle(o);
  const ExporterStatus* broken = FindExporter(c.report, "broken-prom");
  ASSERT_NE(broken, nullptr);
  EXPECT_FALSE(broken->up);
  EXPECT_EQ(broken->kind, "prometheus");
  EXPECT_EQ(broken->http_status, 503);
  ASSERT_EQ(c.readings.size(), 1u);
  EXPECT_EQ(c.readings[0].pod, "prometheus-k8s");
  EXPECT_NE(c.report.pins[0].note.find("error"), std::string::npos) << c.report.pins[0].note;
}

TEST(QueryApiFallback, AFailedQueryIsReportedAndTheApiIsProbedAgainNextCycle) {
  Fixture f;
  auto o = GpuCluster();
  AddService(*o, MakeService("monitoring", "prometheus-k8s", {{"web", 9090}}));
  f.transport->SetDefault(kExporterPath, FakeReply::Json(kRefused, 503));
  const std::string probe = ProbePrefix("monitoring", "prometheus-k8s", 9090);
  const std::string data = DataPrefix("monitoring", "prometheus-k8s", 9090);
  f.transport->SetDefault(probe, FakeReply::Json(kProbeHit));
  f.transport->SetDefault(data, FakeReply::Json(kDataAnswer));
  f.Cycle(o);
  f.transport->Enqueue(
      data,
      FakeReply::Json(R"({"status":"error","errorType":"timeout","error":"query timed out"})"));
  f.clock.Advance(seconds(20));
  scrape::ScrapeResult failed = f.Cycle(o);
  const ExporterStatus* api = FindExporter(failed.report, "prometheus-k8s");
  ASSERT_NE(api, nullptr);
  EXPECT_FALSE(api->up);
  EXPECT_NE(api->reason.find("query timed out"), std::string::npos) << api->reason;
  EXPECT_NE(api->reason.find("monitoring/prometheus-k8s:9090"), std::string::npos) << api->reason;
  EXPECT_TRUE(failed.readings.empty());
  f.clock.Advance(seconds(20));
  scrape::ScrapeResult again = f.Cycle(o);
  EXPECT_EQ(f.transport->CountRequests(probe), 2u);
  EXPECT_EQ(again.readings.size(), 1u);
}

TEST(QueryApiFallback, ForbiddenServiceProxyNamesThePermission) {
  Fixture f;
  auto o = GpuCluster();
  AddService(*o, MakeService("monitoring", "prometheus-k8s", {{"web", 9090}}));
  f.transport->SetDefault(kExporterPath, FakeReply::Json(kRefused, 503));
  f.transport->SetDefault(
      "/api/v1/namespaces/monitoring/",
      FakeReply::Json(R"({"kind":"Status","status":"Failure","reason":"Forbidden","code":403})",
                      403));
  scrape::ScrapeResult c = f.Cycle(o);
  bool named = false;
  for (const auto& e : c.errors) named = named || e.find("services/proxy") != std::string::npos;
  EXPECT_TRUE(named) << (c.errors.empty() ? "no error" : c.errors.front());
}

}  // namespace
}  // namespace gpuattr::discovery
