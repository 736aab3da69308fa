#include "support/session_harness.h"

#include <chrono>
#include <system_error>
#include <thread>

#include "gpuattr/kube/http_transport.h"
#include "gpuattr/kube/kubeconfig.h"
#include "support/paths.h"

namespace gpuattr::testing {

::testing::AssertionResult SessionHarness::Start(Scenario scenario, app::KubeSessionOptions options,
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
  options.observe_input = [this](const app::CycleInput& in) {
    last_input_ = std::make_shared<const app::CycleInput>(in);
  };
  session = std::make_unique<app::KubeClusterSession>(
      "fake", std::shared_ptr<kube::Transport>(std::move(*transport)), std::move(options));
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult SessionHarness::Start(const std::string& scenario_name,
                                                 app::KubeSessionOptions options) {
  auto sc = LoadScenario(FixturePath("scenarios/" + scenario_name));
  if (!sc.ok()) return ::testing::AssertionFailure() << sc.error().message;
  return Start(std::move(*sc), std::move(options));
}

std::shared_ptr<const SessionCycle> SessionHarness::Cycle() {
  last_input_.reset();
  auto c = std::make_shared<SessionCycle>();
  c->result = session->RunCycle();
  c->up = c->result.up;
  c->errors = c->result.errors;
  if (c->result.discovery) c->report = *c->result.discovery;
  if (last_input_) c->input = *last_input_;
  return c;
}

bool SessionHarness::WaitForWatches(std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  for (;;) {
    bool streaming = true;
    for (const kube::KindStatus& k : session->object_cache().SyncStatuses())
      streaming = streaming && k.synced && k.streaming;
    if (streaming) return true;
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

SessionHarness::~SessionHarness() {
  session.reset();
  if (server) server->Stop();
  std::error_code ec;
  if (!dir.empty()) std::filesystem::remove_all(dir, ec);
}

}  // namespace gpuattr::testing
