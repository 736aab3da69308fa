// The inference family group: labels, absent values left out, every family reachable, and the
// rendered text clean under `promtool check metrics` (skipped when promtool is absent).
#include "gpuattr/metrics/inference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "support/paths.h"
#include "support/promtool.h"
#include "support/snapshots.h"

namespace gpuattr::metrics {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

inference::Server Busy() {
  inference::Server s;
  s.key = {"ml", "vllm-0", "vllm", "gemma-4-E4B-it"};
  s.node = "gpu-node-1";
  s.model_name = "/models/gemma-4-E4B-it";
  s.engines = 1;
  s.kv_cache_usage = 0.95;
  s.requests_running = 8;
  s.requests_waiting = 2;
  s.rates.generation_tokens_per_second = 1000;
  s.rates.prompt_tokens_per_second = 3000;
  s.rates.time_to_first_token_seconds = 0.3;
  s.rates.preemptions_per_second = 0.05;
  s.rates.request_errors_per_second = 0;
  s.saturated = true;
  s.pod_power_watts = 250;
  s.generation_tokens_per_joule = 4;
  return s;
}

// A server seen for the first time: gauges only.
inference::Server New() {
  inference::Server s;
  s.key = {"llm", "sg-0", "sglang", "Qwen2.5-72B-Instruct"};
  s.kv_cache_usage = 0.5;
  s.requests_running = 3;
  s.requests_waiting = 0;
  s.saturated = false;
  return s;
}

model::Snapshot WithView() {
  auto view = std::make_shared<inference::InferenceView>();
  view->cluster = "lab";
  view->servers = {New(), Busy()};
  model::Snapshot s;
  s.complete = true;
  model::ClusterSnapshot c;
  c.cluster = "lab";
  c.latest.up = true;
  gpuattr::testing::MutableOutput(c).inference = *view;
  s.clusters.push_back(c);
  return s;
}

TEST(MetricsInference, SeriesCarryNamespacePodEngineAndModel) {
  const std::string text = RenderText(WithView());
  const std::string busy =
      "{cluster=\"lab\",engine=\"vllm\",model=\"gemma-4-E4B-it\",namespace=\"ml\",pod=\"vllm-0\"} ";
  EXPECT_THAT(text, HasSubstr("gpuattr_inference_kv_cache_usage_ratio" + busy + "0.95\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_inference_requests_running" + busy + "8\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_inference_requests_waiting" + busy + "2\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_inference_generation_tokens_per_second" + busy + "1000\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_inference_prompt_tokens_per_second" + busy + "3000\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_inference_time_to_first_token_seconds" + busy + "0.3\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_inference_saturated" + busy + "1\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_inference_generation_tokens_per_joule" + busy + "4\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_inference_preemptions_per_second" + busy + "0.05\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_inference_request_errors_per_second" + busy + "0\n"));

  const std::string fresh =
      "{cluster=\"lab\",engine=\"sglang\",model=\"Qwen2.5-72B-Instruct\",namespace=\"llm\","
      "pod=\"sg-0\"}";
  EXPECT_THAT(text, HasSubstr("gpuattr_inference_saturated" + fresh + " 0\n"));
  EXPECT_THAT(text, HasSubstr("gpuattr_inference_requests_waiting" + fresh + " 0\n"));
  // Unknown rates are left out, never published as 0.
  for (const char* family :
       {"gpuattr_inference_generation_tokens_per_second",
        "gpuattr_inference_prompt_tokens_per_second",
        "gpuattr_inference_time_to_first_token_seconds",
        "gpuattr_inference_generation_tokens_per_joule", "gpuattr_inference_preemptions_per_second",
        "gpuattr_inference_request_errors_per_second"})
    EXPECT_THAT(text, Not(HasSubstr(std::string(family) + fresh))) << family;
}

TEST(MetricsInference, EveryFamilyOfTheGroupIsReachable) {
  const std::string text = RenderText(WithView());
  std::set<std::string> tabled;
  for (const FamilyGroup* g : FamilyGroups())
    if (g->name == "inference")
      for (const FamilySpec& f : g->families) tabled.insert(std::string(f.name));
  EXPECT_EQ(tabled.size(), 10u);
  for (const std::string& name : tabled) {
    EXPECT_TRUE(name.starts_with("gpuattr_inference_")) << name;
    EXPECT_THAT(text, HasSubstr("\n" + name + "{")) << name;
  }
}

TEST(MetricsInference, NoModelNameNoModelLabel) {
  model::Snapshot s = WithView();
  inference::InferenceView& view = gpuattr::testing::MutableOutput(s.clusters[0]).inference;
  view.servers = {New()};
  view.servers[0].key.model.clear();
  const std::string text = RenderText(s);
  EXPECT_THAT(text,
              HasSubstr("gpuattr_inference_requests_running{cluster=\"lab\",engine=\"sglang\","
                        "namespace=\"llm\",pod=\"sg-0\"} 3\n"));
  EXPECT_THAT(text, Not(HasSubstr("model=\"\"")));
}

TEST(MetricsInference, NoViewNoSeries) {
  model::Snapshot s = WithView();
  s.clusters[0].latest.output = nullptr;
  EXPECT_THAT(RenderText(s), Not(HasSubstr("gpuattr_inference_")));
}

TEST(MetricsInference, PromtoolCheckMetricsPrintsNothing) {
  auto lint = gpuattr::testing::PromtoolCheckMetrics(RenderText(WithView()));
  if (!lint.available) GTEST_SKIP() << "/usr/bin/promtool is not installed";
  EXPECT_EQ(lint.exit_code, 0) << lint.printed;
  EXPECT_EQ(lint.printed, "");
}

}  // namespace
}  // namespace gpuattr::metrics
