// Inference series end to end: the fake apiserver serves a vLLM pod (a body sequence, one per
// cycle) and a dcgm-exporter; two session cycles 20 s apart (fake clock) give rates, saturation
// and tokens per joule joined to the pod's attributed power, rendered through the family table.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gpuattr/app/kube_session.h"
#include "gpuattr/attribution/types.h"
#include "gpuattr/inference/inference.h"
#include "gpuattr/kube/http_transport.h"
#include "gpuattr/kube/kubeconfig.h"
#include "gpuattr/metrics/families.h"
#include "support/fake_apiserver.h"
#include "support/fake_clock.h"
#include "support/paths.h"
#include "support/promtool.h"
#include "support/snapshots.h"
#include "test_paths.h"

namespace gpuattr::discovery {
namespace {

using app::KubeClusterSession;
using app::KubeSessionOptions;

namespace fs = std::filesystem;
using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::Not;

class InferenceSession : public ::testing::Test {
 protected:
  void SetUp() override {
    auto sc = testing::LoadScenario(testing::FixturePath("scenarios/inference"));
    ASSERT_TRUE(sc.ok()) << sc.error().message;
    server_ = std::make_unique<testing::FakeApiServer>(std::move(*sc));
    ASSERT_TRUE(server_->Start().ok());
    dir_ = fs::temp_directory_path() / ("gpuattr-inference-" + std::to_string(server_->port()));
    fs::create_directories(dir_);
    const fs::path kubeconfig = dir_ / "kubeconfig";
    ASSERT_TRUE(server_->WriteKubeconfig(kubeconfig).ok());
    kube::KubeconfigSource src;
    src.explicit_path = kubeconfig.string();
    auto conns = kube::LoadConnections(src, {});
    ASSERT_TRUE(conns.ok()) << conns.error().message;
    auto transport = kube::MakeTransport(conns->front());
    ASSERT_TRUE(transport.ok()) << transport.error().message;
    KubeSessionOptions options;
    options.clock = &clock_;
    options.api.clock = &clock_;
    options.sync_timeout = seconds(20);
    options.cache.services = false;
    session_ = std::make_unique<KubeClusterSession>(
        "lab", std::shared_ptr<kube::Transport>(std::move(*transport)), std::move(options));
  }
  void TearDown() override {
    session_.reset();
    if (server_) server_->Stop();
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  static std::string Render(const model::CycleResult& r) {
    return metrics::RenderText(testing::SnapshotOf("lab", r));
  }

  FakeClock clock_;
  std::unique_ptr<testing::FakeApiServer> server_;
  std::unique_ptr<KubeClusterSession> session_;
  fs::path dir_;
};

constexpr char kLabels[] =
    "{cluster=\"lab\",engine=\"vllm\",model=\"Llama-3.1-8B-Instruct\",namespace=\"ml\","
    "pod=\"vllm-llama-0\"} ";

TEST_F(InferenceSession, TwoCyclesGiveRatesSaturationAndTokensPerJoule) {
  model::CycleResult first = session_->RunCycle();
  ASSERT_TRUE(first.up) << ::testing::PrintToString(first.errors);
  ASSERT_TRUE(first.output);
  ASSERT_EQ(first.output->inference.servers.size(), 1u);
  const inference::Server& s1 = first.output->inference.servers[0];
  EXPECT_EQ(s1.key, (inference::ServerKey{"ml", "vllm-llama-0", "vllm", "Llama-3.1-8B-Instruct"}));
  EXPECT_EQ(s1.node, "gpu-l40s-a");
  EXPECT_EQ(s1.kv_cache_usage, 0.41);
  EXPECT_EQ(s1.saturated, false);
  EXPECT_FALSE(s1.rates.generation_tokens_per_second);  // first sight: no rate
  EXPECT_EQ(s1.pod_power_watts, 250.0);                 // from the dcgm-exporter, same cycle
  const std::string text1 = Render(first);
  EXPECT_THAT(text1,
              HasSubstr(std::string("gpuattr_inference_requests_running") + kLabels + "6\n"));
  EXPECT_THAT(text1, Not(HasSubstr("gpuattr_inference_generation_tokens_per_second{")));

  clock_.Advance(seconds(20));
  model::CycleResult second = session_->RunCycle();
  ASSERT_TRUE(second.up);
  ASSERT_TRUE(second.output);
  ASSERT_EQ(second.output->inference.servers.size(), 1u);
  const inference::Server& s2 = second.output->inference.servers[0];
  ASSERT_TRUE(s2.rates.generation_tokens_per_second);
  EXPECT_NEAR(*s2.rates.generation_tokens_per_second, 1000, 1e-9);
  EXPECT_NEAR(*s2.rates.prompt_tokens_per_second, 3000, 1e-9);
  EXPECT_NEAR(*s2.rates.time_to_first_token_seconds, 0.3, 1e-9);
  EXPECT_NEAR(*s2.rates.preemptions_per_second, 0.1, 1e-12);
  EXPECT_EQ(s2.rates.request_errors_per_second, 0.0);
  EXPECT_EQ(s2.saturated, true);
  ASSERT_TRUE(s2.generation_tokens_per_joule);
  EXPECT_NEAR(*s2.generation_tokens_per_joule, 4.0, 1e-9);  // 1,000 tokens/s ÷ 250 W

  // One GET of the vLLM pod per cycle (the probe's body serves the first cycle).
  EXPECT_EQ(server_->CountRequests("proxy", "/api/v1/namespaces/ml/pods/vllm-llama-0"), 2u);

  const std::string text = Render(second);
  EXPECT_THAT(text, HasSubstr(std::string("gpuattr_inference_generation_tokens_per_second") +
                              kLabels + "1000\n"));
  EXPECT_THAT(text, HasSubstr(std::string("gpuattr_inference_saturated") + kLabels + "1\n"));
  EXPECT_THAT(text, HasSubstr(std::string("gpuattr_inference_generation_tokens_per_joule") +
                              kLabels + "4\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_pod_power_watts{cluster=\"lab\",namespace=\"ml\","
                              "node=\"gpu-l40s-a\",pod=\"vllm-llama-0\"} 250\n"));

  auto lint = gpuattr::testing::PromtoolCheckMetrics(text);
  if (!lint.available) GTEST_SKIP() << "/usr/bin/promtool is not installed";
  EXPECT_EQ(lint.exit_code, 0) << lint.printed;
  EXPECT_EQ(lint.printed, "");
}

// The binary: `gpuattr --once` runs one cycle, so the inference gauges appear and no rate does
// (a rate needs two readings).
TEST_F(InferenceSession, OnceBinaryPrintsTheGaugesAndNoRate) {
  const fs::path kc = dir_ / "kubeconfig-once";
  testing::KubeconfigOptions o;
  o.context = "lab";
  ASSERT_TRUE(server_->WriteKubeconfig(kc, o).ok());
  const fs::path out = dir_ / "once.txt", err = dir_ / "once-err.txt";
  const std::string cmd = "timeout 60 " + testing::DaemonBinary() +
                          " --once --log.level warn --kubeconfig " + kc.string() +
                          " --context lab >" + out.string() + " 2>" + err.string();
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << testing::ReadFile(err);
  const std::string text = testing::ReadFile(out);
  EXPECT_THAT(
      text, HasSubstr(std::string("gpuattr_inference_kv_cache_usage_ratio") + kLabels + "0.41\n"));
  EXPECT_THAT(text, HasSubstr(std::string("gpuattr_inference_requests_waiting") + kLabels + "0\n"));
  EXPECT_THAT(text, HasSubstr(std::string("gpuattr_inference_saturated") + kLabels + "0\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_exporter_up{cluster=\"lab\",kind=\"vllm\","
                              "namespace=\"ml\",node=\"gpu-l40s-a\",pod=\"vllm-llama-0\"} 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("gpuattr_inference_generation_tokens_per_second{")));
  EXPECT_THAT(text, Not(HasSubstr("gpuattr_inference_generation_tokens_per_joule{")));
}

}  // namespace
}  // namespace gpuattr::discovery
