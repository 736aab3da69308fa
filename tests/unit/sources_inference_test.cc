#include "gpuattr/sources/inference.h"

#include <gtest/gtest.h>

#include <string>

namespace gpuattr::sources {
namespace {

struct Read {
  explicit Read(std::string text) : body(std::move(text)) {
    expo::Parse(body, exposition);
    readings = ReadInference(exposition);
  }
  std::string body;
  expo::Exposition exposition;
  InferenceReadings readings;
};

TEST(SourcesInference, ModelIsTheLastPathSegment) {
  EXPECT_EQ(ModelFromModelName("/models/gemma-4-E4B-it"), "gemma-4-E4B-it");
  EXPECT_EQ(ModelFromModelName("meta-llama/Llama-3.1-8B-Instruct"), "Llama-3.1-8B-Instruct");
  EXPECT_EQ(ModelFromModelName("/mnt/models/x//"), "x");
  EXPECT_EQ(ModelFromModelName("plain"), "plain");
  EXPECT_EQ(ModelFromModelName(""), "");
  EXPECT_EQ(ModelFromModelName("/"), "");
}

TEST(SourcesInference, SumsOverEnginesKvCacheTakesTheMax) {
  Read r(
      "vllm:num_requests_running{engine=\"0\",model_name=\"m/a\"} 3\n"
      "vllm:num_requests_running{engine=\"1\",model_name=\"m/a\"} 4\n"
      "vllm:num_requests_waiting{engine=\"0\",model_name=\"m/a\"} 1\n"
      "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m/a\"} 0.5\n"
      "vllm:gpu_cache_usage_perc{engine=\"1\",model_name=\"m/a\"} 0.95\n"
      "vllm:generation_tokens_total{engine=\"0\",model_name=\"m/a\"} 100\n"
      "vllm:generation_tokens_total{engine=\"1\",model_name=\"m/a\"} 50\n"
      "vllm:request_success_total{engine=\"0\",finished_reason=\"stop\",model_name=\"m/a\"} 7\n"
      "vllm:request_success_total{engine=\"1\",finished_reason=\"stop\",model_name=\"m/a\"} 3\n"
      "vllm:request_success_total{engine=\"1\",finished_reason=\"abort\",model_name=\"m/a\"} 1\n"
      "vllm:time_to_first_token_seconds_sum{engine=\"0\",model_name=\"m/a\"} 1.5\n"
      "vllm:time_to_first_token_seconds_sum{engine=\"1\",model_name=\"m/a\"} 0.5\n"
      "vllm:time_to_first_token_seconds_count{engine=\"0\",model_name=\"m/a\"} 10\n"
      "vllm:time_to_first_token_seconds_count{engine=\"1\",model_name=\"m/a\"} 5\n");
  ASSERT_EQ(r.readings.models.size(), 1u);
  const InferenceReading& m = r.readings.models[0];
  EXPECT_EQ(m.kind, EngineKind::kVllm);
  EXPECT_EQ(m.model, "a");
  EXPECT_EQ(m.model_name, "m/a");
  EXPECT_EQ(m.engines, 2u);
  EXPECT_DOUBLE_EQ(*m.requests_running, 7);
  EXPECT_DOUBLE_EQ(*m.requests_waiting, 1);
  EXPECT_DOUBLE_EQ(*m.kv_cache_usage, 0.95);
  EXPECT_DOUBLE_EQ(*m.generation_tokens_total, 150);
  EXPECT_FALSE(m.prompt_tokens_total.has_value());  // not exported stays absent
  EXPECT_DOUBLE_EQ(m.request_success_total.at("stop"), 10);
  EXPECT_DOUBLE_EQ(m.request_success_total.at("abort"), 1);
  EXPECT_DOUBLE_EQ(*m.ttft_seconds_sum, 2.0);
  EXPECT_DOUBLE_EQ(*m.ttft_count, 15);
}

TEST(SourcesInference, TwoModelsTwoReadings) {
  Read r(
      "vllm:num_requests_running{model_name=\"a\"} 1\n"
      "vllm:num_requests_running{model_name=\"b\"} 2\n");
  ASSERT_EQ(r.readings.models.size(), 2u);
  EXPECT_EQ(r.readings.models[0].model, "a");
  EXPECT_EQ(r.readings.models[1].model, "b");
  EXPECT_EQ(r.readings.models[0].engines, 1u);  // unlabelled: one engine
}

TEST(SourcesInference, SglangTensorParallelRanksAreNotAdded) {
  Read r(
      "sglang:num_running_reqs{model_name=\"q\",tp_rank=\"0\"} 4\n"
      "sglang:num_running_reqs{model_name=\"q\",tp_rank=\"1\"} 4\n"
      "sglang:num_queue_reqs{model_name=\"q\",dp_rank=\"0\"} 1\n"
      "sglang:num_queue_reqs{model_name=\"q\",dp_rank=\"1\"} 2\n"
      "sglang:token_usage{model_name=\"q\"} 0.3\n"
      "sglang:gen_throughput{model_name=\"q\"} 512.5\n");
  ASSERT_EQ(r.readings.models.size(), 1u);
  const InferenceReading& m = r.readings.models[0];
  EXPECT_EQ(m.kind, EngineKind::kSglang);
  EXPECT_DOUBLE_EQ(*m.requests_running, 4);  // tp ranks repeat one engine
  EXPECT_DOUBLE_EQ(*m.requests_waiting, 3);  // dp ranks are engines: summed
  EXPECT_DOUBLE_EQ(*m.kv_cache_usage, 0.3);
  EXPECT_DOUBLE_EQ(*m.gen_throughput, 512.5);
  EXPECT_EQ(r.readings.stats.duplicate_samples, 1u);
}

TEST(SourcesInference, NonFiniteValuesAreAbsent) {
  Read r("vllm:kv_cache_usage_perc{model_name=\"a\"} NaN\n");
  ASSERT_EQ(r.readings.models.size(), 1u);
  EXPECT_FALSE(r.readings.models[0].kv_cache_usage.has_value());
  EXPECT_EQ(r.readings.stats.invalid_values, 1u);
}

}  // namespace
}  // namespace gpuattr::sources
