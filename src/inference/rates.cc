// The pure part of the inference series: counter increases, rates, saturation, tokens per joule.
#include <cmath>

#include "gpuattr/inference/inference.h"

namespace gpuattr::inference {
namespace {

std::optional<double> PerSecond(const std::optional<double>& previous,
                                const std::optional<double>& current, double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds)) return std::nullopt;
  auto increase = CounterIncrease(previous, current);
  if (!increase) return std::nullopt;
  return *increase / seconds;
}

std::optional<double> ErrorsOf(const sources::InferenceReading& r) {
  auto it = r.request_success_total.find("error");
  if (it == r.request_success_total.end()) return std::nullopt;
  return it->second;
}

}  // namespace

std::optional<double> CounterIncrease(const std::optional<double>& previous,
                                      const std::optional<double>& current) {
  if (!previous || !current) return std::nullopt;
  if (!std::isfinite(*previous) || !std::isfinite(*current)) return std::nullopt;
  if (*current < *previous) return std::nullopt;  // reset: the increase since is unknown
  return *current - *previous;
}

IntervalRates ComputeRates(const sources::InferenceReading& previous,
                           const sources::InferenceReading& current, double seconds) {
  IntervalRates r;
  r.generation_tokens_per_second =
      PerSecond(previous.generation_tokens_total, current.generation_tokens_total, seconds);
  r.prompt_tokens_per_second =
      PerSecond(previous.prompt_tokens_total, current.prompt_tokens_total, seconds);
  r.preemptions_per_second =
      PerSecond(previous.preemptions_total, current.preemptions_total, seconds);
  r.request_errors_per_second = PerSecond(ErrorsOf(previous), ErrorsOf(current), seconds);
  // Both halves of the histogram must have grown consistently: a reset of either makes the mean
  // of the interval unknown.
  auto sum = CounterIncrease(previous.ttft_seconds_sum, current.ttft_seconds_sum);
  auto count = CounterIncrease(previous.ttft_count, current.ttft_count);
  if (sum && count && *count > 0) r.time_to_first_token_seconds = *sum / *count;
  return r;
}

std::optional<bool> Saturated(const std::optional<double>& kv_cache_usage,
                              const std::optional<double>& requests_waiting) {
  const bool waiting_known = requests_waiting.has_value();
  const bool kv_known = kv_cache_usage.has_value();
  if (waiting_known && !(*requests_waiting > 0)) return false;
  if (kv_known && !(*kv_cache_usage >= kSaturatedKvCacheUsage)) return false;
  if (waiting_known && kv_known) return true;
  return std::nullopt;
}

std::optional<double> TokensPerJoule(const std::optional<double>& tokens_per_second,
                                     const std::optional<double>& power_watts) {
  if (!tokens_per_second || !power_watts) return std::nullopt;
  if (!(*power_watts > 0) || !std::isfinite(*power_watts)) return std::nullopt;
  return *tokens_per_second / *power_watts;  // (tokens/s) / (J/s)
}

}  // namespace gpuattr::inference
