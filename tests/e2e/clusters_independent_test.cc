// docs/design.md#clusters-are-independent: two clusters served by two fake apiservers, run
// by the daemon's loop (CycleLoop::RunUntilShutdown) with real sessions. One cluster has an
// exporter that hangs 30 s before answering (a dead target); the healthy cluster's data keeps its
// interval meanwhile, and a shutdown does not wait for the hanging GET.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <thread>

#include "gpuattr/app/kube_session.h"
#include "gpuattr/app/run.h"
#include "gpuattr/app/shutdown.h"
#include "gpuattr/kube/http_transport.h"
#include "gpuattr/kube/kubeconfig.h"
#include "support/fake_apiserver.h"
#include "support/paths.h"
#include "support/scenario.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct Cluster {
  std::unique_ptr<FakeApiServer> server;
  std::unique_ptr<app::ClusterSession> session;
};

::testing::AssertionResult StartCluster(const std::string& name, const fs::path& dir, Cluster& c,
                                        const std::function<void(FakeApiServer&)>& tweak) {
  auto scenario = LoadScenario(FixturePath("scenarios/basic"));
  if (!scenario.ok()) return ::testing::AssertionFailure() << scenario.error().message;
  c.server = std::make_unique<FakeApiServer>(std::move(*scenario));
  if (Status s = c.server->Start(); !s.ok()) return ::testing::AssertionFailure() << s.message();
  tweak(*c.server);
  KubeconfigOptions ko;
  ko.context = name;
  const fs::path kubeconfig = dir / (name + ".kubeconfig");
  if (Status s = c.server->WriteKubeconfig(kubeconfig, ko); !s.ok())
    return ::testing::AssertionFailure() << s.message();
  kube::KubeconfigSource src;
  src.explicit_path = kubeconfig.string();
  auto conns = kube::LoadConnections(src, {name});
  if (!conns.ok()) return ::testing::AssertionFailure() << conns.error().message;
  auto transport = kube::MakeTransport(conns->front());
  if (!transport.ok()) return ::testing::AssertionFailure() << transport.error().message;
  app::KubeSessionOptions o;
  o.interval = 1s;
  // A target may take 30 s: probes and scrapes wait that long for it.
  o.discovery.probe_timeout = 30s;
  o.discovery.scrape.timeout = 30s;
  c.session = std::make_unique<app::KubeClusterSession>(
      name, std::shared_ptr<kube::Transport>(std::move(*transport)), o);
  return ::testing::AssertionSuccess();
}

TEST(ClustersIndependent, ADeadTargetInOneClusterNeverDelaysTheOther) {
  app::Shutdown::Instance().Reset();
  const fs::path dir = fs::temp_directory_path() / ("gpuattr-two-" + std::to_string(getpid()));
  fs::create_directories(dir);
  Cluster healthy, slow;
  ASSERT_TRUE(StartCluster("healthy", dir, healthy, [](FakeApiServer&) {}));
  ASSERT_TRUE(StartCluster("slow", dir, slow, [](FakeApiServer& s) {
    FaultRule hang;  // one of the two dcgm-exporters answers after 30 s
    hang.path_regex = "nvidia-dcgm-exporter-q9d4m:9400/proxy/metrics$";
    hang.delay = 30s;
    s.AddFault(hang);
  }));
  app::SessionList sessions;
  sessions.push_back(std::move(healthy.session));
  sessions.push_back(std::move(slow.session));
  auto store = std::make_shared<metrics::SnapshotStore>();
  app::CycleLoop loop(std::move(sessions), store);
  auto done = std::async(std::launch::async, [&] { loop.RunUntilShutdown(1s); });

  // Watch the published snapshots: when did the healthy cluster's data change?
  std::vector<double> published;  // seconds since start, one per new healthy cycle
  uint64_t last = 0;
  const auto start = std::chrono::steady_clock::now();
  std::shared_ptr<const model::Snapshot> snap;
  while (std::chrono::steady_clock::now() - start < 8s) {
    snap = store->Get();
    const model::ClusterSnapshot& h = snap->clusters[0];
    if (h.cycles != last) {
      last = h.cycles;
      published.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      EXPECT_TRUE(h.latest.up) << (h.latest.errors.empty() ? "" : h.latest.errors.front());
      EXPECT_TRUE(h.latest.output);
    }
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(snap->clusters[1].cluster, "slow");
  EXPECT_EQ(snap->clusters[1].cycles, 0u) << "the slow cluster's first cycle should still hang";
  // The healthy cluster published every interval: ~7 cycles after its first (which also waits for
  // the first LISTs) in 8 s; allow a loaded machine some slack, never the slow cluster's 30 s.
  ASSERT_GE(published.size(), 4u);
  std::vector<double> gaps;
  for (size_t i = 2; i < published.size(); ++i) gaps.push_back(published[i] - published[i - 1]);
  std::sort(gaps.begin(), gaps.end());
  EXPECT_LT(gaps[gaps.size() / 2], 1.5);
  EXPECT_LT(gaps.back(), 3.0);
  ASSERT_TRUE(snap->clusters[0].latest.output);
  EXPECT_FALSE(snap->clusters[0].latest.output->attribution.pods.empty());

  // Shutdown while the slow cluster's GET still hangs: the loop ends within 2 s.
  const auto stop_at = std::chrono::steady_clock::now();
  app::Shutdown::Instance().Request();
  ASSERT_EQ(done.wait_for(10s), std::future_status::ready);
  EXPECT_LT(std::chrono::steady_clock::now() - stop_at, 2s);
  app::Shutdown::Instance().Reset();
  healthy.server->Stop();
  slow.server->Stop();
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace gpuattr::testing
