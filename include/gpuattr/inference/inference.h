// Inference servers (vLLM, SGLang): per-model gauges, rates from counter deltas between cycles,
// saturation and generation tokens per joule of the serving pod's attributed power
// (docs/design.md#inference-servers and docs/design.md#inference). The rate and join functions are
// pure; InferenceTracker keeps the previous readings of every server between cycles and nothing
// else.
#pragma once

#include <chrono>
#include <compare>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuattr/sources/readings.h"

namespace gpuattr::attribution {
struct Attribution;
}  // namespace gpuattr::attribution

namespace gpuattr::inference {

// One published series set: a model served by one pod. `engine` is the server kind ("vllm",
// "sglang"); `model` the last path segment of model_name (the `model` label).
struct ServerKey {
  std::string namespace_;
  std::string pod;
  std::string engine;
  std::string model;
  auto operator<=>(const ServerKey&) const = default;
  bool operator==(const ServerKey&) const = default;
};

// Counter-derived figures over one interval. Each is absent when it cannot be known: no earlier
// reading, a counter missing from either reading, a counter reset (current < previous), or no
// elapsed time. Never negative, never a made-up 0.
struct IntervalRates {
  std::optional<double> generation_tokens_per_second;
  std::optional<double> prompt_tokens_per_second;
  // Mean time to first token of the requests that got their first token in the interval:
  // Δsum / Δcount of the TTFT histogram; absent when Δcount = 0 (no request started).
  std::optional<double> time_to_first_token_seconds;
  std::optional<double> preemptions_per_second;  // vllm:num_preemptions_total
  // vllm:request_success_total{finished_reason="error"}: requests the engine ended with an error.
  std::optional<double> request_errors_per_second;
};

// The pure rate computation: `previous` and `current` are two readings of one server taken
// `seconds` apart.
IntervalRates ComputeRates(const sources::InferenceReading& previous,
                           const sources::InferenceReading& current, double seconds);

// The increase of a counter between two readings; absent when either is absent or it went down
// (a restart reset it: the increase since is unknown).
std::optional<double> CounterIncrease(const std::optional<double>& previous,
                                      const std::optional<double>& current);

// Waiting requests while the fullest engine's KV cache is ≥ 90 % full: new requests queue for
// cache. False when either condition is known to be false; absent when it cannot be decided.
inline constexpr double kSaturatedKvCacheUsage = 0.9;
std::optional<bool> Saturated(const std::optional<double>& kv_cache_usage,
                              const std::optional<double>& requests_waiting);

// Generation tokens/s ÷ watts = tokens per joule; absent when either is unknown or the power is
// not positive.
std::optional<double> TokensPerJoule(const std::optional<double>& tokens_per_second,
                                     const std::optional<double>& power_watts);

struct Server {
  ServerKey key;
  std::string node;
  std::string model_name;  // as exported
  size_t engines = 0;      // data-parallel engines summed into this series
  // Gauges as read (request counts summed over engines, KV cache the max over engines).
  std::optional<double> kv_cache_usage;
  std::optional<double> requests_running;
  std::optional<double> requests_waiting;
  IntervalRates rates;
  std::optional<double> interval_seconds;  // since the previous reading; absent on the first
  std::optional<bool> saturated;
  std::optional<double> pod_power_watts;  // the serving pod's attributed power, when known
  std::optional<double> generation_tokens_per_joule;
};

struct InferenceView {
  std::string cluster;
  std::vector<Server> servers;  // sorted by key
};

// A server's reading of the previous cycle and when it was taken (monotonic clock).
struct PreviousReading {
  sources::InferenceReading reading;
  std::chrono::steady_clock::time_point at;
};
using PreviousReadings = std::map<ServerKey, PreviousReading>;

// Builds the view of one cycle taken at `now` (pure). `attribution` (may be null: no power known)
// gives the serving pods' power for tokens per joule. SGLang servers that export no generation
// token counter get sglang:gen_throughput (the server's own recent estimate) as their rate.
InferenceView BuildView(const std::string& cluster,
                        const std::vector<sources::ExporterReadings>& scrapes,
                        const PreviousReadings& previous, std::chrono::steady_clock::time_point now,
                        const attribution::Attribution* attribution);

// The readings of every server from the previous cycle. Servers absent from a cycle (pod gone,
// scrape failed) are dropped: their next reading starts afresh, with no rate.
class InferenceTracker {
 public:
  InferenceView Update(const std::string& cluster,
                       const std::vector<sources::ExporterReadings>& scrapes,
                       std::chrono::steady_clock::time_point now,
                       const attribution::Attribution* attribution);
  size_t tracked() const { return previous_.size(); }

 private:
  PreviousReadings previous_;
};

// The series key of every model in `scrapes`, in order: one per (namespace, pod, engine, model).
// Two model_names with the same last segment in one pod keep their full model_name as `model`,
// so their series stay apart. Exposed for tests.
std::vector<std::pair<ServerKey, const sources::InferenceReading*>> KeysOf(
    const std::vector<sources::ExporterReadings>& scrapes);

}  // namespace gpuattr::inference
