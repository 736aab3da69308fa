// The shared setup of the session end-to-end tests: the fake apiserver serving a scenario and an
// app::KubeClusterSession talking to it over HTTPS through a real kubeconfig, on a FakeClock.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gpuattr/app/kube_session.h"
#include "gpuattr/util/clock.h"
#include "support/fake_apiserver.h"
#include "support/fake_clock.h"
#include "support/scenario.h"

namespace gpuattr::testing {

// One cycle as a test sees it: what the session returned, and the input its stages ran on.
struct SessionCycle {
  bool up = false;
  std::vector<std::string> errors;
  discovery::DiscoveryReport report;  // empty when the cycle did not get as far as discovery
  app::CycleInput input;              // likewise
  model::CycleResult result;
};

struct SessionHarness {
  std::unique_ptr<FakeApiServer> server;
  std::filesystem::path dir;  // temporary: the kubeconfig; removed with the harness
  FakeClock clock;
  std::unique_ptr<app::KubeClusterSession> session;

  // Starts the server and a session named "fake". On top of `options`: the fake clock (also the
  // API client's unless `real_api_clock`, for tests whose waits must really wait) and a 20 s
  // first-sync timeout. Which kinds are watched stays the caller's choice (options.cache).
  ::testing::AssertionResult Start(Scenario scenario, app::KubeSessionOptions options = {},
                                   bool real_api_clock = false);
  // The same for fixtures/scenarios/<name>.
  ::testing::AssertionResult Start(const std::string& scenario_name,
                                   app::KubeSessionOptions options = {});

  // One cycle; the session's view of it.
  std::shared_ptr<const SessionCycle> Cycle();
  // Waits (bounded, real time) until every listed kind's watch is streaming. A test that moves the
  // fake clock past 2 intervals between cycles needs it: a watch still (re)connecting at that
  // moment makes its kind out of sync, as it would be after that long in real time.
  bool WaitForWatches(std::chrono::milliseconds limit = std::chrono::seconds(10));
  // The input of the latest cycle that got as far as the stages (also after session->RunCycle()).
  std::shared_ptr<const app::CycleInput> LastInput() const { return last_input_; }

 private:
  std::shared_ptr<const app::CycleInput> last_input_;

 public:
  ~SessionHarness();
};

}  // namespace gpuattr::testing
