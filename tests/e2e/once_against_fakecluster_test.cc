// The binary end to end: `gpuattr --once` against the fake apiserver over TLS,
// with a good token, a rejected token, and promtool on the output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/fake_apiserver.h"
#include "support/paths.h"
#include "support/promtool.h"
#include "support/scenario.h"
#include "test_paths.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

struct Ran {
  int code = -1;
  std::string out, err;
};

class OnceAgainstFakeCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuattr-once-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    auto scenario = LoadScenario(FixturePath("scenarios/basic"));
    ASSERT_TRUE(scenario.ok()) << scenario.error().message;
    server_ = std::make_unique<FakeApiServer>(std::move(*scenario));
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    if (server_) server_->Stop();
    fs::remove_all(dir_);
  }

  // Runs the binary with stdout and stderr in files; `timeout` bounds it (coreutils).
  Ran RunOnce(const fs::path& kubeconfig, const std::string& context) {
    const fs::path out = dir_ / "out.txt", err = dir_ / "err.txt";
    std::string cmd = "timeout 60 " + DaemonBinary() + " --once --log.level warn" +
                      std::string(" --kubeconfig ") + kubeconfig.string() + " --context " +
                      context + " >" + out.string() + " 2>" + err.string();
    int status = std::system(cmd.c_str());
    Ran r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = ReadFile(out);
    r.err = ReadFile(err);
    return r;
  }

  static KubeconfigOptions Options(std::string context, std::string token) {
    KubeconfigOptions o;
    o.context = std::move(context);
    o.token = std::move(token);  // "" = the token the server accepts
    return o;
  }

  fs::path dir_;
  std::unique_ptr<FakeApiServer> server_;
};

TEST_F(OnceAgainstFakeCluster, PrintsAttributedExpositionAndExitsZero) {
  const fs::path kc = dir_ / "kubeconfig";
  ASSERT_TRUE(server_->WriteKubeconfig(kc, Options("lab", "")).ok());
  Ran r = RunOnce(kc, "lab");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("gpuattr_cluster_up{cluster=\"lab\"} 1\n"));
  EXPECT_THAT(r.out, HasSubstr("gpuattr_build_info{cluster=\"lab\""));
  EXPECT_THAT(r.out, HasSubstr("gpuattr_apiserver_requests_total{cluster=\"lab\",code=\"200\","
                               "resource=\"pods\",verb=\"list\"} 1\n"));
  // Discovery found both dcgm-exporters; attribution published devices, pods and namespaces.
  EXPECT_THAT(r.out, HasSubstr("gpuattr_exporter_up{cluster=\"lab\",kind=\"dcgm\""));
  EXPECT_THAT(r.out, HasSubstr("gpuattr_card_power_watts{cluster=\"lab\""));
  EXPECT_THAT(r.out, HasSubstr("gpuattr_pod_power_watts{cluster=\"lab\""));
  EXPECT_THAT(r.out, HasSubstr("gpuattr_namespace_power_watts{cluster=\"lab\""));
  // Allocation (the scheduler view) is computed in the same cycle.
  EXPECT_THAT(r.out, HasSubstr("gpuattr_node_devices_capacity{cluster=\"lab\",node=\"gpu-node-1\"} "
                               "4\n"));
  EXPECT_THAT(r.out, HasSubstr("gpuattr_pod_requested_devices{cluster=\"lab\",namespace=\"ml\","
                               "pod=\"llm-serve-0\",resource=\"nvidia.com/gpu\"} 2\n"));
  // GPU workload pods probed as possible inference servers answer 503 (nothing listens): they
  // count as failed probes, not as exporters that are down. The ones that declare no port (the
  // trainer; the device plugin, an exporter by keyword) are never probed.
  EXPECT_THAT(r.out,
              HasSubstr("gpuattr_discovery_candidates{cluster=\"lab\",outcome=\"error\"} 2\n"));
  EXPECT_THAT(r.out,
              HasSubstr("gpuattr_discovery_candidates{cluster=\"lab\",outcome=\"no_port\"} 2\n"));
  EXPECT_EQ(server_->CountRequests("proxy", "/api/v1/namespaces/ml/pods/train-resnet-"), 0u);
  EXPECT_THAT(r.out, Not(HasSubstr("gpuattr_exporter_up{cluster=\"lab\",kind=\"unknown\","
                                   "namespace=\"ml\"")));
  // The static control-plane pods on gpu-node-1 are never probed.
  EXPECT_EQ(server_->CountRequests("proxy", "/api/v1/namespaces/kube-system/"), 0u);

  auto lint = gpuattr::testing::PromtoolCheckMetrics(r.out);
  if (!lint.available) GTEST_SKIP() << "/usr/bin/promtool is not installed";
  EXPECT_EQ(lint.exit_code, 0) << lint.printed;
  EXPECT_EQ(lint.printed, "");
}

TEST_F(OnceAgainstFakeCluster, RejectedTokenExitsNonZeroNamingClusterAnd401) {
  const fs::path kc = dir_ / "kubeconfig";
  ASSERT_TRUE(server_->WriteKubeconfig(kc, Options("lab", "not-the-token")).ok());
  Ran r = RunOnce(kc, "lab");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("cluster \"lab\""));
  EXPECT_THAT(r.err, HasSubstr("401"));
  EXPECT_THAT(r.err, Not(HasSubstr("not-the-token")));  // secrets never reach a message
  EXPECT_THAT(r.out, HasSubstr("gpuattr_cluster_up{cluster=\"lab\"} 0\n"));
}

}  // namespace
}  // namespace gpuattr::testing
