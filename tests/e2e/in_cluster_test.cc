// In-cluster mode end to end: the built gpuattr binary with no kubeconfig, KUBERNETES_SERVICE_HOST
// and _PORT pointing at the fake apiserver, and a temporary service-account folder (token, ca.crt,
// namespace) named by GPUATTR_SERVICE_ACCOUNT_DIR. The token is rotated under a running daemon.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/direct_exporters.h"
#include "support/fake_apiserver.h"
#include "support/paths.h"
#include "support/subprocess.h"
#include "test_paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

const std::string kBinary = DaemonBinary();
constexpr char kUserOne[] = "system:serviceaccount:gpuattr:gpuattr#1";
constexpr char kUserTwo[] = "system:serviceaccount:gpuattr:gpuattr#2";

void Write(const fs::path& p, const std::string& text) {
  // As the kubelet rotates a projected token: a new file renamed over the old one.
  const fs::path tmp = p.string() + ".new";
  std::ofstream(tmp, std::ios::binary | std::ios::trunc) << text;
  fs::rename(tmp, p);
}

class InClusterBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpuattr-incluster-e2e-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directories(dir_ / "home");  // HOME without .kube/config
    fs::create_directories(dir_ / "sa");
    auto scenario = LoadScenario(FixturePath("scenarios/basic"));
    ASSERT_TRUE(scenario.ok()) << scenario.error().message;
    // The pods have addresses and their exporters listen there, as in a cluster: in-cluster mode
    // reads them directly (docs/deploy.md#direct-scraping).
    exporters_ = std::make_unique<DirectExporters>(*scenario);
    FakeApiServerOptions opts;
    opts.tokens = {{"sa-token-one", kUserOne}};
    server_ = std::make_unique<FakeApiServer>(std::move(*scenario), opts);
    ASSERT_TRUE(server_->Start().ok());
    ASSERT_TRUE(exporters_->Start(*server_).ok());
    Write(dir_ / "sa" / "token", "sa-token-one\n");
    Write(dir_ / "sa" / "ca.crt", server_->pki().ca.cert_pem);
    Write(dir_ / "sa" / "namespace", "gpuattr");
  }
  void TearDown() override {
    if (exporters_) exporters_->Stop();
    if (server_) server_->Stop();
    fs::remove_all(dir_);
  }

  // No KUBECONFIG, HOME without a kubeconfig; `in_pod` adds the service variables.
  std::vector<std::string> Env(bool in_pod) const {
    std::vector<std::string> env = EnvironmentWithout(
        {"KUBECONFIG", "HOME", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT",
         "GPUATTR_SERVICE_ACCOUNT_DIR", "XDG_STATE_HOME"});
    env.push_back("HOME=" + (dir_ / "home").string());
    if (in_pod) {
      env.push_back("KUBERNETES_SERVICE_HOST=127.0.0.1");
      env.push_back("KUBERNETES_SERVICE_PORT=" + std::to_string(server_->port()));
      env.push_back("GPUATTR_SERVICE_ACCOUNT_DIR=" + (dir_ / "sa").string());
    }
    return env;
  }

  struct Ran {
    int code;
    std::string out, err;
  };
  Ran Once(std::vector<std::string> extra, bool in_pod) {
    std::vector<std::string> args = {kBinary, "--once", "--state.file",
                                     (dir_ / "state.json").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    Child c = SpawnChild(args, Env(in_pod), dir_);
    EXPECT_GT(c.pid, 0);
    int code = WaitChild(c.pid, 60s);
    return {code, SlurpFile(c.out), SlurpFile(c.err)};
  }

  fs::path dir_;
  std::unique_ptr<DirectExporters> exporters_;
  std::unique_ptr<FakeApiServer> server_;
};

// The exposition without what differs between runs by design (the apiserver's request counts)
// or by the clock (durations, timestamps, the process's own series).
std::string Comparable(const std::string& exposition) {
  static const char* const kLeftOut[] = {"gpuattr_apiserver_requests_total",
                                         "gpuattr_cycle_duration_seconds",
                                         "gpuattr_exporter_scrape_duration_seconds",
                                         "gpuattr_last_cycle_timestamp_seconds",
                                         "gpuattr_pending_pod_seconds",
                                         "process_"};
  std::istringstream in(exposition);
  std::string out, line;
  while (std::getline(in, line)) {
    bool keep = true;
    for (const char* family : kLeftOut)
      if (line.starts_with(family)) keep = false;
    if (keep) out += line + "\n";
  }
  return out;
}

TEST_F(InClusterBinary, OnceReadsTheClusterWithTheServiceAccount) {
  Ran r = Once({}, /*in_pod=*/true);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("gpuattr_cluster_up{cluster=\"in-cluster\"} 1\n"));
  EXPECT_THAT(r.out, HasSubstr("gpuattr_pod_power_watts{cluster=\"in-cluster\""));
  EXPECT_THAT(r.err, HasSubstr("in-cluster mode"));
  EXPECT_THAT(r.err, Not(HasSubstr("sa-token-one")));  // never a secret in the log
  // Every request was the service account's, and none was refused.
  auto log = server_->Requests();
  ASSERT_FALSE(log.empty());
  for (const RequestRecord& q : log) {
    EXPECT_EQ(q.user, kUserOne) << q.path;
    EXPECT_NE(q.status, 401) << q.path;
  }
}

TEST_F(InClusterBinary, ReadsExportersByPodIpAndPublishesWhatTheProxyPathDoes) {
  Ran direct = Once({}, /*in_pod=*/true);
  ASSERT_EQ(direct.code, 0) << direct.err;
  EXPECT_THAT(direct.err, HasSubstr("scrape_path=direct"));
  EXPECT_EQ(server_->CountRequests("proxy"), 0u) << "the apiserver carried exporter bodies";
  const size_t served = exporters_->served();
  EXPECT_GT(served, 0u);
  EXPECT_THAT(direct.out, HasSubstr("gpuattr_exporter_up{cluster=\"in-cluster\""));

  server_->ResetRequests();
  // The exporters' body sequences start over: the proxy run reads the bytes the direct one read.
  auto scenario = LoadScenario(FixturePath("scenarios/basic"));
  ASSERT_TRUE(scenario.ok());
  for (const auto& [key, bodies] : scenario->exporter_bodies) {
    const size_t slash = key.find('/'), colon = key.rfind(':');
    server_->SetExporterBodies(key.substr(0, slash), key.substr(slash + 1, colon - slash - 1),
                               std::stoi(key.substr(colon + 1)), bodies);
  }
  Ran proxy = Once({"--scrape.path", "proxy"}, /*in_pod=*/true);
  ASSERT_EQ(proxy.code, 0) << proxy.err;
  EXPECT_THAT(proxy.err, HasSubstr("scrape_path=proxy"));
  EXPECT_GT(server_->CountRequests("proxy"), 0u);
  EXPECT_EQ(exporters_->served(), served);
  EXPECT_EQ(Comparable(direct.out), Comparable(proxy.out));  // gtest prints the diff
}

TEST_F(InClusterBinary, ClusterNameLabelsTheCluster) {
  Ran r = Once({"--cluster.name", "prod-eu"}, /*in_pod=*/true);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("gpuattr_cluster_up{cluster=\"prod-eu\"} 1\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("cluster=\"in-cluster\"")));
}

TEST_F(InClusterBinary, NoKubeconfigOutsideAPodIsTheClearError) {
  Ran r = Once({}, /*in_pod=*/false);
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("no kubeconfig: KUBECONFIG is not set and " +
                               (dir_ / "home" / ".kube" / "config").string() +
                               " does not exist (pass --kubeconfig PATH)"));
  EXPECT_TRUE(server_->Requests().empty());
}

TEST_F(InClusterBinary, AMissingTokenIsNamed) {
  fs::remove(dir_ / "sa" / "token");
  Ran r = Once({}, /*in_pod=*/true);
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr((dir_ / "sa" / "token").string()));
  EXPECT_THAT(r.err, HasSubstr("automountServiceAccountToken"));
}

TEST_F(InClusterBinary, ARotatedTokenIsPickedUpWithoutARestart) {
  Child c = SpawnChild({kBinary, "--interval", "1s", "--web.listen-address", "127.0.0.1:0",
                        "--scrape.path", "proxy", "--state.file", (dir_ / "state.json").string()},
                       Env(/*in_pod=*/true), dir_);
  ASSERT_GT(c.pid, 0);
  auto wait_for = [&](auto done, std::chrono::seconds limit) {
    for (auto end = std::chrono::steady_clock::now() + limit;
         std::chrono::steady_clock::now() < end; std::this_thread::sleep_for(50ms))
      if (done()) return true;
    return false;
  };
  auto proxied_as = [&](const std::string& user) {
    for (const RequestRecord& q : server_->Requests())
      if (q.verb == "proxy" && q.user == user && q.status == 200) return true;
    return false;
  };
  ASSERT_TRUE(wait_for([&] { return proxied_as(kUserOne); }, 30s)) << SlurpFile(c.err);

  // Rotation: the kubelet writes a new token and the apiserver stops accepting the old one.
  Write(dir_ / "sa" / "token", "sa-token-two\n");
  server_->SetTokens({{"sa-token-two", kUserTwo}});
  server_->ResetRequests();
  EXPECT_TRUE(wait_for([&] { return proxied_as(kUserTwo); }, 30s)) << SlurpFile(c.err);
  // The same process: it is still running.
  EXPECT_EQ(kill(c.pid, 0), 0);
  const std::string err = SlurpFile(c.err);
  EXPECT_THAT(err, HasSubstr("apiserver answered 401; refreshing credentials"));
  EXPECT_THAT(err, Not(HasSubstr("sa-token-")));

  ASSERT_EQ(kill(c.pid, SIGTERM), 0);
  EXPECT_EQ(WaitChild(c.pid, 10s), 0) << SlurpFile(c.err);
}

}  // namespace
}  // namespace gpuattr::testing
