// Direct scraping (docs/deploy.md#direct-scraping), the parts without a network: where a read
// goes (the pod's IP and the Service's ClusterIP from the watched objects, never from a body),
// the setting that chooses it, and a target without an address skipped with its reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "gpuattr/app/config.h"
#include "gpuattr/app/options.h"
#include "gpuattr/app/session_factory.h"
#include "gpuattr/discovery/candidates.h"
#include "gpuattr/kube/decode.h"
#include "gpuattr/scrape/fetch.h"
#include "gpuattr/scrape/read.h"

namespace gpuattr {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Records every target it is asked for and answers with no body.
class RecordingFetcher final : public scrape::Fetcher {
 public:
  scrape::Fetch Get(const scrape::FetchTarget& target, const scrape::FetchOptions&) override {
    std::lock_guard<std::mutex> lock(mu);
    targets.push_back(target);
    scrape::Fetch f;
    f.error = "recorded";
    return f;
  }
  std::mutex mu;
  std::vector<scrape::FetchTarget> targets;
};

kube::Pod ExporterPod() {
  kube::Pod p;
  p.namespace_ = "gpu-operator";
  p.name = "nvidia-dcgm-exporter-abcde";
  p.node_name = "node-1";
  p.phase = "Running";
  p.ip = "10.244.1.7";
  kube::Container c;
  c.name = "exporter";
  c.image = "nvcr.io/nvidia/k8s/dcgm-exporter:3.3";
  c.ports.push_back({"metrics", 9400});
  p.containers.push_back(c);
  return p;
}

TEST(DirectScrape, BaseUrlBracketsIpv6AndForwardedPathKeepsTheQuery) {
  EXPECT_EQ(scrape::DirectBaseUrl("http", "10.0.0.7", 9400), "http://10.0.0.7:9400");
  EXPECT_EQ(scrape::DirectBaseUrl("https", "fd00:10:244::7", 9400),
            "https://[fd00:10:244::7]:9400");
  EXPECT_EQ(scrape::ForwardedPath("/api/v1/namespaces/ns/pods/p:9400/proxy/metrics"), "/metrics");
  EXPECT_EQ(scrape::ForwardedPath(
                "/api/v1/namespaces/m/services/prometheus:9090/proxy/api/v1/query?query=up"),
            "/api/v1/query?query=up");
  EXPECT_EQ(scrape::ForwardedPath("/api/v1/namespaces/m/services/s:80/proxy"), "/");
  EXPECT_EQ(scrape::ForwardedPath("/api/v1/namespaces/proxy/pods/envoy-proxy:9901/proxy/metrics"),
            "/metrics");
}

TEST(DirectScrape, PodIpAndClusterIpAreDecodedFromTheObjects) {
  auto pod = kube::DecodeText(&kube::DecodePod, R"({"metadata": {"name": "p", "namespace": "n"},
      "status": {"phase": "Running", "podIP": "fd00::7", "podIPs": [{"ip": "fd00::7"}]}})");
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(pod->ip, "fd00::7");
  auto pending = kube::DecodeText(&kube::DecodePod,
                                  R"({"metadata": {"name": "p", "namespace": "n"},
                                      "status": {"phase": "Pending"}})");
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(pending->ip, "");
  auto svc = kube::DecodeText(&kube::DecodeService, R"({"metadata": {"name": "s", "namespace": "m"},
      "spec": {"clusterIP": "10.96.0.10", "ports": [{"port": 9090}]}})");
  ASSERT_TRUE(svc.ok()) << svc.error().message;
  EXPECT_EQ(svc->cluster_ip, "10.96.0.10");
}

TEST(DirectScrape, CandidateCarriesThePodsIpAndScheme) {
  kube::Pod p = ExporterPod();
  discovery::Candidate c =
      discovery::MakeCandidate(p, {9400, "named metrics"}, discovery::Role::kExporter, "image");
  EXPECT_EQ(c.ip, "10.244.1.7");
  EXPECT_EQ(c.scheme, "http");
  p.annotations["prometheus.io/scheme"] = " HTTPS ";
  EXPECT_EQ(discovery::MakeCandidate(p, {9400, "x"}, discovery::Role::kExporter, "").scheme,
            "https");
  p.annotations["prometheus.io/scheme"] = "gopher";  // anything else is plain http
  EXPECT_EQ(discovery::MakeCandidate(p, {9400, "x"}, discovery::Role::kExporter, "").scheme,
            "http");
}

TEST(DirectScrape, PodReadsNameTheProxyPathAndThePodsAddress) {
  kube::Pod p = ExporterPod();
  discovery::PodRead read;
  read.candidate =
      discovery::MakeCandidate(p, {9400, "named metrics"}, discovery::Role::kExporter, "image");
  kube::Pod no_ip = ExporterPod();
  no_ip.name = "starting";
  no_ip.ip.clear();
  discovery::PodRead second = read;
  second.candidate =
      discovery::MakeCandidate(no_ip, {9400, "named metrics"}, discovery::Role::kExporter, "");
  RecordingFetcher fetcher;
  scrape::PodReadings got = scrape::ReadPods({read, second}, fetcher, 1, {});
  ASSERT_EQ(fetcher.targets.size(), 2u);
  const scrape::FetchTarget& t = fetcher.targets[0];
  EXPECT_EQ(t.proxy_path,
            "/api/v1/namespaces/gpu-operator/pods/nvidia-dcgm-exporter-abcde:9400/proxy/metrics");
  EXPECT_EQ(t.host, "10.244.1.7");
  EXPECT_EQ(t.port, 9400);
  EXPECT_EQ(t.scheme, "http");
  EXPECT_EQ(t.what, "pod gpu-operator/nvidia-dcgm-exporter-abcde");
  EXPECT_EQ(fetcher.targets[1].host, "");
  EXPECT_THAT(fetcher.targets[1].no_host_reason,
              HasSubstr("pod gpu-operator/starting has no IP yet (status.podIP is empty)"));
  EXPECT_EQ(got.outcomes.size(), 2u);
}

TEST(DirectScrape, ATargetWithoutAnAddressIsSkippedWithItsReason) {
  auto fetcher = scrape::MakeDirectFetcher({});
  scrape::FetchTarget t;
  t.proxy_path = "/api/v1/namespaces/n/pods/p:9400/proxy/metrics";
  t.port = 9400;
  t.what = "pod n/p";
  t.no_host_reason = "pod n/p has no IP yet (status.podIP is empty): not read directly";
  scrape::Fetch f = fetcher->Get(t, {});
  EXPECT_FALSE(f.ok);
  EXPECT_EQ(f.http_status, 0);
  EXPECT_EQ(f.error, t.no_host_reason);
}

TEST(DirectScrape, QueryApisAreReadAtTheirClusterIpButNeverHeadless) {
  discovery::QueryApiRead read;
  discovery::QueryApiCandidate c;
  c.namespace_ = "monitoring";
  c.service = "prometheus-k8s";
  c.port = "9090";
  c.port_number = 9090;
  c.cluster_ip = "10.96.4.2";
  read.probes.push_back({c, discovery::QueryApiPath(c, "up"), discovery::QueryApiPath(c, "up")});
  c.service = "prometheus-operated";
  c.cluster_ip = "None";
  read.probes.push_back({c, discovery::QueryApiPath(c, "up"), discovery::QueryApiPath(c, "up")});
  RecordingFetcher fetcher;
  kube::ClusterObjects objects;
  scrape::ReadQueryApi(read, fetcher, objects);
  ASSERT_EQ(fetcher.targets.size(), 2u);
  EXPECT_EQ(fetcher.targets[0].host, "10.96.4.2");
  EXPECT_EQ(fetcher.targets[0].port, 9090);
  EXPECT_EQ(scrape::ForwardedPath(fetcher.targets[0].proxy_path), "/api/v1/query?query=up");
  EXPECT_EQ(fetcher.targets[1].host, "");
  EXPECT_THAT(fetcher.targets[1].no_host_reason,
              HasSubstr("service monitoring/prometheus-operated is headless"));
}

TEST(DirectScrape, ScrapePathSettingIsValidatedAndAutoMeansDirectInTheCluster) {
  auto load = [](std::string_view text) {
    return app::LoadConfig(app::CommandLine{}, "gpuattr.yaml", text);
  };
  auto def = load("");
  ASSERT_TRUE(def.ok()) << def.error().message;
  EXPECT_EQ(def->scrape.path, app::ScrapePath::kAuto);
  auto direct = load("scrape:\n  path: direct\n");
  ASSERT_TRUE(direct.ok()) << direct.error().message;
  EXPECT_EQ(direct->scrape.path, app::ScrapePath::kDirect);
  auto bad = load("scrape:\n  path: sideways\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("scrape.path"));
  EXPECT_THAT(bad.error().message, HasSubstr("use auto, direct or proxy"));

  EXPECT_TRUE(app::ScrapesDirectly(app::ScrapePath::kAuto, /*in_cluster=*/true));
  EXPECT_FALSE(app::ScrapesDirectly(app::ScrapePath::kAuto, /*in_cluster=*/false));
  EXPECT_TRUE(app::ScrapesDirectly(app::ScrapePath::kDirect, false));
  EXPECT_FALSE(app::ScrapesDirectly(app::ScrapePath::kProxy, true));
}

TEST(DirectScrape, AnUnreadableOrBadCaFileIsNamedWithItsKey) {
  app::ScrapeConfig s;
  s.tls.ca_file = "/nonexistent/ca.crt";
  auto missing = app::DirectOptionsFromConfig(s);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message,
              StartsWith("scrape.tls.ca_file: /nonexistent/ca.crt: cannot read"));
  const std::filesystem::path bad =
      std::filesystem::temp_directory_path() / "gpuattr-direct-bad-ca.crt";
  std::ofstream(bad) << "not a certificate\n";
  s.tls.ca_file = bad.string();
  auto garbage = app::DirectOptionsFromConfig(s);
  std::filesystem::remove(bad);
  ASSERT_FALSE(garbage.ok());
  EXPECT_THAT(garbage.error().message, HasSubstr("scrape.tls.ca_file"));
  s.tls.ca_file.clear();
  s.tls.server_name = "dcgm-exporter.gpu-operator.svc";
  auto none = app::DirectOptionsFromConfig(s);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->server_name, "dcgm-exporter.gpu-operator.svc");
  EXPECT_TRUE(none->ca_pem.empty());
}

}  // namespace
}  // namespace gpuattr
