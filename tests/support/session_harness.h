// The shared setup of the session end-to-end tests: the fake apiserver serving a scenario and a
// discovery::KubeClusterSession talking to it over HTTPS through a real kubeconfig, on a FakeClock.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "gpuattr/discovery/session.h"
#include "gpuattr/util/clock.h"
#include "support/fake_apiserver.h"
#include "support/scenario.h"

namespace gpuattr::testing {

struct SessionHarness {
  std::unique_ptr<FakeApiServer> server;
  std::filesystem::path dir;  // temporary: the kubeconfig; removed with the harness
  FakeClock clock;
  std::unique_ptr<discovery::KubeClusterSession> session;

  // Starts the server and a session named "fake". On top of `options`: the fake clock (also the
  // API client's unless `real_api_clock`, for tests whose waits must really wait) and a 20 s
  // first-sync timeout. Which kinds are watched stays the caller's choice (options.cache).
  ::testing::AssertionResult Start(Scenario scenario, discovery::KubeSessionOptions options = {},
                                   bool real_api_clock = false);
  // The same for fixtures/scenarios/<name>.
  ::testing::AssertionResult Start(const std::string& scenario_name,
                                   discovery::KubeSessionOptions options = {});

  // One cycle; the session's view of it.
  std::shared_ptr<const discovery::SessionCycle> Cycle();

  ~SessionHarness();
};

}  // namespace gpuattr::testing
