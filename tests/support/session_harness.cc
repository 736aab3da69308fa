#include "support/session_harness.h"

#include <chrono>
#include <system_error>

#include "gpuattr/kube/http_transport.h"
#include "gpuattr/kube/kubeconfig.h"
#include "support/paths.h"

namespace gpuattr::testing {

::testing::AssertionResult SessionHarness::Start(Scenario scenario,
                                                 discovery::KubeSessionOptions options,
                                                 bool real_api_clock) {
  server = std::make_unique<FakeApiServer>(std::move(scenario));
  if (Status s = server->Start(); !s.ok()) return ::testing::AssertionFailure() << s.message();
  dir = std::filesystem::temp_directory_path() /
        ("gpuattr-session-" + std::to_string(server->port()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path kubeconfig = dir / "kubeconfig";
  if (Status s = server->WriteKubeconfig(kubeconfig); !s.ok())
    return ::testing::AssertionFailure() << s.message();
  kube::KubeconfigSource src;
  src.explicit_path = kubeconfig.string();
  auto conns = kube::LoadConnections(src, {});
  if (!conns.ok()) return ::testing::AssertionFailure() << conns.error().message;
  auto transport = kube::MakeTransport(conns->front());
  if (!transport.ok()) return ::testing::AssertionFailure() << transport.error().message;
  options.clock = &clock;
  options.api.clock = real_api_clock ? nullptr : &clock;
  options.sync_timeout = std::chrono::seconds(20);
  session = std::make_unique<discovery::KubeClusterSession>(
      "fake", std::shared_ptr<kube::Transport>(std::move(*transport)), std::move(options));
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult SessionHarness::Start(const std::string& scenario_name,
                                                 discovery::KubeSessionOptions options) {
  auto sc = LoadScenario(FixturePath("scenarios/" + scenario_name));
  if (!sc.ok()) return ::testing::AssertionFailure() << sc.error().message;
  return Start(std::move(*sc), std::move(options));
}

std::shared_ptr<const discovery::SessionCycle> SessionHarness::Cycle() {
  session->RunCycle();
  return session->LastCycle();
}

SessionHarness::~SessionHarness() {
  session.reset();
  if (server) server->Stop();
  std::error_code ec;
  if (!dir.empty()) std::filesystem::remove_all(dir, ec);
}

}  // namespace gpuattr::testing
