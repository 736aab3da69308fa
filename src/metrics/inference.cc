// Inference group: one series set per model served by a pod (labels namespace, pod, engine,
// model). Every value is published only when known: a server seen for the first time, or whose
// counters were reset, has gauges but no rates.
#include "gpuattr/metrics/inference.h"

#include "gpuattr/metrics/attribution_labels.h"

namespace gpuattr::metrics {
namespace {

constexpr FamilySpec kKvCache{
    "gpuattr_inference_kv_cache_usage_ratio", MetricType::kGauge,
    "KV-cache usage 0..1 (vllm:kv_cache_usage_perc, v0 vllm:gpu_cache_usage_perc, "
    "sglang:token_usage); with data-parallel engines the fullest engine's."};
constexpr FamilySpec kRunning{
    "gpuattr_inference_requests_running", MetricType::kGauge,
    "Requests being processed (vllm:num_requests_running, sglang:num_running_reqs), summed over "
    "data-parallel engines."};
constexpr FamilySpec kWaiting{
    "gpuattr_inference_requests_waiting", MetricType::kGauge,
    "Requests queued (vllm:num_requests_waiting, sglang:num_queue_reqs), summed over "
    "data-parallel engines."};
constexpr FamilySpec kGenTps{
    "gpuattr_inference_generation_tokens_per_second", MetricType::kGauge,
    "Generated tokens per second over the last cycle interval (increase of "
    "generation_tokens_total / seconds; SGLang without that counter: sglang:gen_throughput). "
    "Absent on a server's first cycle and after a counter reset."};
constexpr FamilySpec kPromptTps{
    "gpuattr_inference_prompt_tokens_per_second", MetricType::kGauge,
    "Prompt (prefill) tokens per second over the last cycle interval (increase of "
    "prompt_tokens_total / seconds). Absent on a server's first cycle and after a counter reset."};
constexpr FamilySpec kTtft{
    "gpuattr_inference_time_to_first_token_seconds", MetricType::kGauge,
    "Mean time to first token of the requests started in the last cycle interval: increase of "
    "time_to_first_token_seconds_sum / increase of _count. Absent when no request started."};
constexpr FamilySpec kSaturated{
    "gpuattr_inference_saturated", MetricType::kGauge,
    "1 when requests are waiting and the KV cache is at least 90% full (requests queue for "
    "cache), else 0."};
constexpr FamilySpec kTokensPerJoule{
    "gpuattr_inference_generation_tokens_per_joule", MetricType::kGauge,
    "Generated tokens per joule: gpuattr_inference_generation_tokens_per_second / the serving "
    "pod's gpuattr_pod_power_watts (the whole pod's power for each model it serves). Absent when "
    "the power is unknown or 0."};
constexpr FamilySpec kPreemptions{
    "gpuattr_inference_preemptions_per_second", MetricType::kGauge,
    "Requests preempted per second over the last cycle interval (vllm:num_preemptions_total): "
    "the KV cache ran out and running requests were evicted."};
constexpr FamilySpec kErrors{
    "gpuattr_inference_request_errors_per_second", MetricType::kGauge,
    "Requests per second that ended in an engine error over the last cycle interval "
    "(vllm:request_success_total{finished_reason=\"error\"})."};

constexpr FamilySpec kFamilies[] = {kKvCache, kRunning,   kWaiting,        kGenTps,      kPromptTps,
                                    kTtft,    kSaturated, kTokensPerJoule, kPreemptions, kErrors};

void Build(const model::Snapshot& s, FamilyWriter& w) {
  for (const model::ClusterSnapshot& c : s.clusters)
    if (c.latest.output) WriteInference(c.latest.output->inference, w);
}

// A server that exports no model_name gets no `model` label (absent, not "").
Labels ServerLabels(const std::string& cluster, const inference::ServerKey& k) {
  Labels l{{"cluster", cluster}, {"namespace", k.namespace_}, {"pod", k.pod}, {"engine", k.engine}};
  if (!k.model.empty()) l.emplace("model", k.model);
  return l;
}

std::optional<double> AsNumber(const std::optional<bool>& b) {
  if (!b) return std::nullopt;
  return *b ? 1.0 : 0.0;
}

}  // namespace

void WriteInference(const inference::InferenceView& v, FamilyWriter& w) {
  // One family at a time, so each family's series come out together in key order.
  struct Column {
    const FamilySpec& spec;
    std::optional<double> (*value)(const inference::Server&);
  };
  static constexpr Column kColumns[] = {
      {kKvCache, [](const inference::Server& s) { return s.kv_cache_usage; }},
      {kRunning, [](const inference::Server& s) { return s.requests_running; }},
      {kWaiting, [](const inference::Server& s) { return s.requests_waiting; }},
      {kGenTps, [](const inference::Server& s) { return s.rates.generation_tokens_per_second; }},
      {kPromptTps, [](const inference::Server& s) { return s.rates.prompt_tokens_per_second; }},
      {kTtft, [](const inference::Server& s) { return s.rates.time_to_first_token_seconds; }},
      {kSaturated, [](const inference::Server& s) { return AsNumber(s.saturated); }},
      {kTokensPerJoule, [](const inference::Server& s) { return s.generation_tokens_per_joule; }},
      {kPreemptions, [](const inference::Server& s) { return s.rates.preemptions_per_second; }},
      {kErrors, [](const inference::Server& s) { return s.rates.request_errors_per_second; }},
  };
  for (const Column& c : kColumns)
    for (const inference::Server& s : v.servers)
      AddKnown(w, c.spec, ServerLabels(v.cluster, s.key), c.value(s));
}

constinit const FamilyGroup kInferenceGroup{"inference", kFamilies, &Build};

}  // namespace gpuattr::metrics
