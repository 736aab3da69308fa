// Inference series: rates from counter deltas between two readings, mean TTFT of the interval,
// saturation, tokens per joule joined to the serving pod's attributed power, and the tracker that
// carries readings from one cycle to the next.
#include "gpuattr/inference/inference.h"

#include <gtest/gtest.h>

#include <string>

#include "gpuattr/attribution/types.h"
#include "gpuattr/expo/parser.h"
#include "gpuattr/sources/inference.h"
#include "support/paths.h"

namespace gpuattr::inference {
namespace {

using std::chrono::seconds;
using TimePoint = std::chrono::steady_clock::time_point;

const TimePoint kT0{};

sources::InferenceReadings ReadBody(const std::string& body) {
  expo::Exposition e;
  expo::Parse(body, e);
  return sources::ReadInference(e);
}

sources::ExporterReadings Scrape(const std::string& body, std::string ns = "ml",
                                 std::string pod = "vllm-0") {
  return {std::move(ns), std::move(pod), "gpu-node-1", ReadBody(body)};
}

// The body with the value of the first sample line starting with `prefix` raised by `delta`
// (the line's value is its last space-separated field).
std::string Raise(std::string body, const std::string& prefix, double delta) {
  size_t at = body.find("\n" + prefix);
  EXPECT_NE(at, std::string::npos) << prefix;
  if (at == std::string::npos) return body;
  const size_t end = body.find('\n', at + 1);
  const size_t space = body.rfind(' ', end);
  const double value = std::stod(body.substr(space + 1, end - space - 1));
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value + delta);
  return body.replace(space + 1, end - space - 1, text);
}

Server Only(const InferenceView& v) {
  EXPECT_EQ(v.servers.size(), 1u);
  return v.servers.empty() ? Server{} : v.servers.front();
}

// Acceptance numbers of ../shared/fixtures-real/README.md: the real idle vLLM V1 capture, then a
// body 20 s later with +20,000 generation tokens, +60,000 prompt tokens and TTFT +30 s over +100
// requests.
TEST(InferenceRates, RealVllmIdleCaptureAndOneTwentySecondsLater) {
  auto dir = gpuattr::testing::RealFixturesDir();
  if (!dir) GTEST_SKIP() << "../shared/fixtures-real is absent";
  const std::string first = gpuattr::testing::ReadFile(*dir / "vllm_v1_idle.prom");
  std::string second = Raise(first, "vllm:generation_tokens_total{", 20000);
  second = Raise(second, "vllm:prompt_tokens_total{", 60000);
  second = Raise(second, "vllm:time_to_first_token_seconds_sum{", 30);
  second = Raise(second, "vllm:time_to_first_token_seconds_count{", 100);

  InferenceTracker tracker;
  InferenceView v1 = tracker.Update("lab", {Scrape(first)}, kT0, nullptr);
  const Server s1 = Only(v1);
  EXPECT_EQ(s1.key, (ServerKey{"ml", "vllm-0", "vllm", "gemma-4-E4B-it"}));
  EXPECT_EQ(s1.model_name, "/models/gemma-4-E4B-it");
  EXPECT_EQ(s1.kv_cache_usage, 0.0);
  EXPECT_EQ(s1.requests_running, 0.0);
  EXPECT_EQ(s1.requests_waiting, 0.0);
  EXPECT_EQ(s1.saturated, false);
  // First sight: no earlier reading, so no rate (absent, not 0).
  EXPECT_FALSE(s1.rates.generation_tokens_per_second);
  EXPECT_FALSE(s1.rates.prompt_tokens_per_second);
  EXPECT_FALSE(s1.rates.time_to_first_token_seconds);
  EXPECT_FALSE(s1.interval_seconds);

  InferenceView v2 = tracker.Update("lab", {Scrape(second)}, kT0 + seconds(20), nullptr);
  const Server s2 = Only(v2);
  ASSERT_TRUE(s2.interval_seconds);
  EXPECT_DOUBLE_EQ(*s2.interval_seconds, 20);
  ASSERT_TRUE(s2.rates.generation_tokens_per_second);
  EXPECT_NEAR(*s2.rates.generation_tokens_per_second, 1000, 1e-9);
  ASSERT_TRUE(s2.rates.prompt_tokens_per_second);
  EXPECT_NEAR(*s2.rates.prompt_tokens_per_second, 3000, 1e-9);
  ASSERT_TRUE(s2.rates.time_to_first_token_seconds);
  EXPECT_NEAR(*s2.rates.time_to_first_token_seconds, 0.300, 1e-9);
  // Counters that did not move give a real 0 rate: known, and nothing happened.
  EXPECT_EQ(s2.rates.preemptions_per_second, 0.0);
  EXPECT_EQ(s2.rates.request_errors_per_second, 0.0);
}

TEST(InferenceRates, V0BodyWithTwoEnginesTakesTheFullerCacheAndSumsRequests) {
  const std::string body = gpuattr::testing::ReadFile(
      gpuattr::testing::FixturePath("exporters/vllm-v0-two-engines-saturated.prom"));
  InferenceTracker tracker;
  const Server s = Only(tracker.Update("lab", {Scrape(body)}, kT0, nullptr));
  EXPECT_EQ(s.key.model, "Qwen2.5-7B-Instruct");
  EXPECT_EQ(s.key.engine, "vllm");
  EXPECT_EQ(s.engines, 2u);
  EXPECT_EQ(s.kv_cache_usage, 0.95);
  EXPECT_EQ(s.requests_running, 8.0);
  EXPECT_EQ(s.requests_waiting, 4.0);
  EXPECT_EQ(s.saturated, true);  // waiting > 0 and the fuller engine ≥ 0.9
}

TEST(InferenceRates, TwoEnginesRatesAreOverTheSumOfTheirCounters) {
  const std::string first = gpuattr::testing::ReadFile(
      gpuattr::testing::FixturePath("exporters/vllm-v0-two-engines-saturated.prom"));
  // Each engine generates 5,000 tokens in 10 s; engine 1 had 2 preemptions.
  std::string second = Raise(first, "vllm:generation_tokens_total{engine=\"0\"", 5000);
  second = Raise(second, "vllm:generation_tokens_total{engine=\"1\"", 5000);
  second = Raise(second, "vllm:num_preemptions_total{engine=\"1\"", 2);
  second = Raise(second, "vllm:time_to_first_token_seconds_sum{engine=\"0\"", 4);
  second = Raise(second, "vllm:time_to_first_token_seconds_count{engine=\"0\"", 10);
  second = Raise(second, "vllm:time_to_first_token_seconds_count{engine=\"1\"", 10);
  const auto a = ReadBody(first), b = ReadBody(second);
  ASSERT_EQ(a.models.size(), 1u);
  ASSERT_EQ(b.models.size(), 1u);
  IntervalRates r = ComputeRates(a.models[0], b.models[0], 10);
  EXPECT_NEAR(*r.generation_tokens_per_second, 1000, 1e-9);
  EXPECT_NEAR(*r.prompt_tokens_per_second, 0, 1e-12);
  EXPECT_NEAR(*r.preemptions_per_second, 0.2, 1e-12);
  EXPECT_NEAR(*r.time_to_first_token_seconds, 0.2, 1e-12);  // 4 s over 20 requests
  EXPECT_FALSE(r.request_errors_per_second);                // v0 exports no finished_reason="error"
}

TEST(InferenceRates, CounterResetGivesNoRate) {
  sources::InferenceReading before, after;
  before.generation_tokens_total = 1'000'000;
  after.generation_tokens_total = 12'000;  // the server restarted
  before.prompt_tokens_total = 5'000;
  after.prompt_tokens_total = 9'000;  // not reset: its rate is still known
  before.ttft_seconds_sum = 100;
  after.ttft_seconds_sum = 2;
  before.ttft_count = 400;
  after.ttft_count = 10;
  before.preemptions_total = 7;
  after.preemptions_total = 0;
  before.request_success_total["error"] = 3;
  after.request_success_total["error"] = 1;
  IntervalRates r = ComputeRates(before, after, 20);
  EXPECT_FALSE(r.generation_tokens_per_second);
  EXPECT_FALSE(r.time_to_first_token_seconds);
  EXPECT_FALSE(r.preemptions_per_second);
  EXPECT_FALSE(r.request_errors_per_second);
  ASSERT_TRUE(r.prompt_tokens_per_second);
  EXPECT_DOUBLE_EQ(*r.prompt_tokens_per_second, 200);

  EXPECT_FALSE(CounterIncrease(10.0, 9.0));
  EXPECT_EQ(CounterIncrease(9.0, 10.0), 1.0);
  EXPECT_EQ(CounterIncrease(9.0, 9.0), 0.0);
  EXPECT_FALSE(CounterIncrease(std::nullopt, 9.0));
  EXPECT_FALSE(CounterIncrease(9.0, std::nullopt));
}

TEST(InferenceRates, MeanTtftNeedsARequestInTheIntervalAndTimeMustPass) {
  sources::InferenceReading before, after;
  before.ttft_seconds_sum = after.ttft_seconds_sum = 50;
  before.ttft_count = after.ttft_count = 200;
  before.generation_tokens_total = 10;
  after.generation_tokens_total = 30;
  IntervalRates r = ComputeRates(before, after, 20);
  EXPECT_FALSE(r.time_to_first_token_seconds);  // Δcount = 0: no request started
  EXPECT_EQ(r.generation_tokens_per_second, 1.0);
  // A TTFT sum that moved while the count reset is no mean either.
  after.ttft_seconds_sum = 51;
  after.ttft_count = 1;
  EXPECT_FALSE(ComputeRates(before, after, 20).time_to_first_token_seconds);
  // No elapsed time: no rate at all.
  EXPECT_FALSE(ComputeRates(before, after, 0).generation_tokens_per_second);
  EXPECT_FALSE(ComputeRates(before, after, -5).generation_tokens_per_second);
}

TEST(InferenceRates, SaturatedNeedsWaitingRequestsAndANearlyFullCache) {
  EXPECT_EQ(Saturated(0.9, 1.0), true);  // the boundary counts
  EXPECT_EQ(Saturated(0.99, 12.0), true);
  EXPECT_EQ(Saturated(0.99, 0.0), false);
  EXPECT_EQ(Saturated(0.89, 5.0), false);
  EXPECT_EQ(Saturated(std::nullopt, 0.0), false);  // nothing waits: known not saturated
  EXPECT_EQ(Saturated(0.2, std::nullopt), false);  // cache has room: known not saturated
  EXPECT_EQ(Saturated(0.95, std::nullopt), std::nullopt);
  EXPECT_EQ(Saturated(std::nullopt, 3.0), std::nullopt);
  EXPECT_EQ(Saturated(std::nullopt, std::nullopt), std::nullopt);
}

attribution::Attribution WithPodPower(const std::string& ns, const std::string& pod,
                                      std::optional<double> watts) {
  attribution::Attribution a;
  a.cluster = "lab";
  attribution::Pod p;
  p.id = {ns, pod};
  p.node = "gpu-node-1";
  p.power_watts = watts;
  a.pods.push_back(p);
  return a;
}

TEST(InferenceRates, TokensPerJouleJoinsTheServingPodsAttributedPower) {
  const std::string first =
      "vllm:generation_tokens_total{engine=\"0\",model_name=\"/m/llama\"} 1000\n";
  const std::string second =
      "vllm:generation_tokens_total{engine=\"0\",model_name=\"/m/llama\"} 21000\n";
  const attribution::Attribution a = WithPodPower("ml", "vllm-0", 250.0);
  InferenceTracker tracker;
  const Server s1 = Only(tracker.Update("lab", {Scrape(first)}, kT0, &a));
  EXPECT_EQ(s1.pod_power_watts, 250.0);
  EXPECT_FALSE(s1.generation_tokens_per_joule);  // no rate yet
  InferenceView v = tracker.Update("lab", {Scrape(second)}, kT0 + seconds(20), &a);
  const Server s2 = Only(v);
  ASSERT_TRUE(s2.generation_tokens_per_joule);
  EXPECT_NEAR(*s2.generation_tokens_per_joule, 4.0, 1e-12);  // 1,000 tokens/s ÷ 250 W

  EXPECT_EQ(TokensPerJoule(1000.0, 250.0), 4.0);
  EXPECT_FALSE(TokensPerJoule(1000.0, 0.0));  // no power known to divide by
  EXPECT_FALSE(TokensPerJoule(1000.0, std::nullopt));
  EXPECT_FALSE(TokensPerJoule(std::nullopt, 250.0));
}

TEST(InferenceRates, TokensPerJouleIsAbsentWithoutTheSamePodsPower) {
  const std::string first = "vllm:generation_tokens_total{model_name=\"x\"} 0\n";
  const std::string second = "vllm:generation_tokens_total{model_name=\"x\"} 500\n";
  for (const attribution::Attribution& a :
       {WithPodPower("ml", "vllm-0", std::nullopt), WithPodPower("ml", "vllm-0", 0.0),
        WithPodPower("other", "vllm-0", 300.0), WithPodPower("ml", "vllm-1", 300.0)}) {
    InferenceTracker tracker;
    tracker.Update("lab", {Scrape(first)}, kT0, &a);
    const Server s = Only(tracker.Update("lab", {Scrape(second)}, kT0 + seconds(10), &a));
    EXPECT_EQ(s.rates.generation_tokens_per_second, 50.0);
    EXPECT_FALSE(s.generation_tokens_per_joule)
        << a.pods[0].id.namespace_ << "/" << a.pods[0].id.name;
  }
}

TEST(InferenceTracker, ServersThatVanishAreDroppedAndStartAfreshWithoutARate) {
  const std::string a0 = "vllm:generation_tokens_total{model_name=\"a\"} 100\n";
  const std::string a1 = "vllm:generation_tokens_total{model_name=\"a\"} 300\n";
  const std::string a2 = "vllm:generation_tokens_total{model_name=\"a\"} 700\n";
  InferenceTracker tracker;
  tracker.Update("lab", {Scrape(a0, "ml", "p"), Scrape(a0, "ml", "q")}, kT0, nullptr);
  EXPECT_EQ(tracker.tracked(), 2u);
  // q's scrape failed (or the pod left): it is forgotten.
  InferenceView v = tracker.Update("lab", {Scrape(a1, "ml", "p")}, kT0 + seconds(10), nullptr);
  EXPECT_EQ(tracker.tracked(), 1u);
  ASSERT_EQ(v.servers.size(), 1u);
  EXPECT_EQ(v.servers[0].rates.generation_tokens_per_second, 20.0);
  // q is back: its rate is not computed over the 20 s gap from a reading it no longer has.
  v = tracker.Update("lab", {Scrape(a2, "ml", "p"), Scrape(a2, "ml", "q")}, kT0 + seconds(20),
                     nullptr);
  ASSERT_EQ(v.servers.size(), 2u);
  EXPECT_EQ(v.servers[0].key.pod, "p");
  EXPECT_EQ(v.servers[0].rates.generation_tokens_per_second, 40.0);
  EXPECT_EQ(v.servers[1].key.pod, "q");
  EXPECT_FALSE(v.servers[1].rates.generation_tokens_per_second);
}

TEST(InferenceTracker, EveryModelOfAPodIsItsOwnSeries) {
  const std::string body =
      "vllm:num_requests_running{model_name=\"/models/llama\"} 2\n"
      "vllm:num_requests_running{model_name=\"/models/qwen\"} 5\n"
      "vllm:num_requests_running{model_name=\"/mirror/llama\"} 1\n";
  InferenceTracker tracker;
  InferenceView v = tracker.Update("lab", {Scrape(body)}, kT0, nullptr);
  ASSERT_EQ(v.servers.size(), 3u);
  // Sorted by key; the second "llama" keeps its full name so the label sets stay distinct.
  EXPECT_EQ(v.servers[0].key.model, "/mirror/llama");
  EXPECT_EQ(v.servers[0].requests_running, 1.0);
  EXPECT_EQ(v.servers[1].key.model, "llama");
  EXPECT_EQ(v.servers[1].requests_running, 2.0);
  EXPECT_EQ(v.servers[2].key.model, "qwen");
  EXPECT_EQ(v.servers[2].requests_running, 5.0);
  EXPECT_EQ(tracker.tracked(), 3u);
}

TEST(InferenceTracker, SglangWithoutATokenCounterUsesItsOwnThroughput) {
  const std::string gauge_only =
      "sglang:gen_throughput{model_name=\"Qwen/Qwen2.5-72B-Instruct\",tp_rank=\"0\"} 812.5\n"
      "sglang:token_usage{model_name=\"Qwen/Qwen2.5-72B-Instruct\",tp_rank=\"0\"} 0.93\n"
      "sglang:num_queue_reqs{model_name=\"Qwen/Qwen2.5-72B-Instruct\",tp_rank=\"0\"} 2\n";
  InferenceTracker tracker;
  const Server s = Only(tracker.Update("lab", {Scrape(gauge_only, "llm", "sg-0")}, kT0, nullptr));
  EXPECT_EQ(s.key.engine, "sglang");
  EXPECT_EQ(s.key.model, "Qwen2.5-72B-Instruct");
  EXPECT_EQ(s.rates.generation_tokens_per_second, 812.5);
  EXPECT_EQ(s.saturated, true);

  // With the counter, its increase wins and the first cycle has no rate.
  const std::string body =
      gpuattr::testing::ReadFile(gpuattr::testing::FixturePath("exporters/sglang-tp2.prom"));
  InferenceTracker t2;
  const Server first = Only(t2.Update("lab", {Scrape(body, "llm", "sg-0")}, kT0, nullptr));
  EXPECT_FALSE(first.rates.generation_tokens_per_second);
  EXPECT_EQ(first.kv_cache_usage, 0.91);
  EXPECT_EQ(first.requests_waiting, 5.0);  // tp ranks repeat the numbers: not added
  EXPECT_EQ(first.saturated, true);
}

}  // namespace
}  // namespace gpuattr::inference
