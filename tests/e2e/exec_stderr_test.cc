// docs/design.md#process-hygiene: an exec plugin's stderr (a login plugin may print a device-login
// code there) goes to the log only, never into a cycle's errors or onto the unauthenticated status
// page.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>

#include "gpuattr/app/kube_session.h"
#include "gpuattr/kube/http_transport.h"
#include "gpuattr/kube/kubeconfig.h"
#include "gpuattr/report/status_page.h"
#include "gpuattr/util/log.h"
#include "support/fake_apiserver.h"
#include "support/paths.h"
#include "support/scenario.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(ExecPluginStderr, ReachesTheLogButNeitherErrorsNorTheStatusPage) {
  auto scenario = LoadScenario(FixturePath("scenarios/basic"));
  ASSERT_TRUE(scenario.ok());
  FakeApiServer server(std::move(*scenario));
  ASSERT_TRUE(server.Start().ok());
  const fs::path dir = fs::temp_directory_path() / ("gpuattr-execerr-" + std::to_string(getpid()));
  fs::create_directories(dir);
  ASSERT_TRUE(server.WriteKubeconfig(dir / "server.kubeconfig").ok());
  // The server's kubeconfig, with the user replaced by a login plugin that needs a human.
  const fs::path plugin = dir / "login-plugin";
  std::ofstream(plugin) << "#!/bin/sh\n"
                           "echo 'To sign in, open https://login.example/device and enter the "
                           "code QXZ7-PLMK' >&2\nexit 1\n";
  fs::permissions(plugin, fs::perms::owner_all);
  std::string text = ReadFile(dir / "server.kubeconfig");
  const size_t users = text.find("users:");
  const size_t contexts = text.find("contexts:");
  ASSERT_NE(users, std::string::npos);
  text = text.substr(0, users) +
         "users:\n- name: \"fake-token\"\n  user:\n    exec:\n"
         "      apiVersion: client.authentication.k8s.io/v1\n      command: " +
         plugin.string() + "\n      interactiveMode: Never\n" + text.substr(contexts);
  std::ofstream(dir / "kubeconfig") << text;

  std::mutex mu;
  std::string logs;
  log::SetSink([&](std::string_view line) {
    std::lock_guard<std::mutex> lock(mu);
    logs.append(line).append("\n");
  });
  kube::KubeconfigSource src;
  src.explicit_path = (dir / "kubeconfig").string();
  auto conns = kube::LoadConnections(src, {"fake"});
  ASSERT_TRUE(conns.ok()) << conns.error().message;
  auto transport = kube::MakeTransport(conns->front());
  ASSERT_TRUE(transport.ok()) << transport.error().message;
  app::KubeSessionOptions o;
  o.sync_timeout = std::chrono::seconds(10);
  app::KubeClusterSession session("fake", std::shared_ptr<kube::Transport>(std::move(*transport)),
                                  o);
  model::Snapshot snap;
  snap.complete = true;
  model::ClusterSnapshot c;
  c.cluster = "fake";
  c.latest = session.RunCycle();
  c.cycles = 1;
  snap.clusters.push_back(c);
  session.Cancel();
  log::ResetSink();

  EXPECT_FALSE(c.latest.up);
  ASSERT_FALSE(c.latest.errors.empty());
  bool names_the_plugin = false;
  for (const std::string& e : c.latest.errors) {
    EXPECT_THAT(e, Not(HasSubstr("QXZ7-PLMK")));
    names_the_plugin |=
        e.find("exited with code 1 (its stderr is in gpuattr's log)") != std::string::npos;
  }
  EXPECT_TRUE(names_the_plugin) << c.latest.errors.front();
  const std::string page = report::RenderStatusPage(snap, 0);
  EXPECT_THAT(page, Not(HasSubstr("QXZ7-PLMK")));
  EXPECT_THAT(page, HasSubstr("its stderr is in gpuattr"));
  EXPECT_THAT(logs, HasSubstr("QXZ7-PLMK"));  // the user can still find the code
  server.Stop();
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace gpuattr::testing
