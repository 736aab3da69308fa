#include "gpuattr/sources/inference.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "family_tally.h"
#include "gpuattr/sources/labels.h"

namespace gpuattr::sources {
namespace {

void Add(std::optional<double>& slot, double v) { slot = slot.value_or(0.0) + v; }
void Max(std::optional<double>& slot, double v) { slot = slot ? std::max(*slot, v) : v; }

// One sample's value into its model: counters and gauges summed over engines, the KV cache's
// fullest engine, successes by finish reason.
void Apply(InferenceReading& r, InferenceMetric metric, double v, std::string_view reason) {
  switch (metric) {
    case InferenceMetric::kKvCacheUsage:
      Max(r.kv_cache_usage, v);  // each engine has its own cache: the fullest one saturates
      break;
    case InferenceMetric::kRequestsRunning:
      Add(r.requests_running, v);
      break;
    case InferenceMetric::kRequestsWaiting:
      Add(r.requests_waiting, v);
      break;
    case InferenceMetric::kGenThroughput:
      Add(r.gen_throughput, v);
      break;
    case InferenceMetric::kPromptTokens:
      Add(r.prompt_tokens_total, v);
      break;
    case InferenceMetric::kGenerationTokens:
      Add(r.generation_tokens_total, v);
      break;
    case InferenceMetric::kPreemptions:
      Add(r.preemptions_total, v);
      break;
    case InferenceMetric::kPrefixCacheHits:
      Add(r.prefix_cache_hits_total, v);
      break;
    case InferenceMetric::kPrefixCacheQueries:
      Add(r.prefix_cache_queries_total, v);
      break;
    case InferenceMetric::kRequestSuccess:
      r.request_success_total[reason.empty() ? std::string("unknown") : std::string(reason)] += v;
      break;
    case InferenceMetric::kTtftSum:
      Add(r.ttft_seconds_sum, v);
      break;
    case InferenceMetric::kTtftCount:
      Add(r.ttft_count, v);
      break;
  }
}

struct ModelState {
  std::set<std::string> engines;
  std::unordered_set<std::string> seen;  // metric/engine/reason already counted
};

}  // namespace

std::string_view ModelFromModelName(std::string_view model_name) {
  while (!model_name.empty() && model_name.back() == '/') model_name.remove_suffix(1);
  auto slash = model_name.rfind('/');
  return slash == std::string_view::npos ? model_name : model_name.substr(slash + 1);
}

InferenceReadings ReadInference(const expo::Exposition& exposition, const BodyLimits& limits,
                                LimitBreach* breach) {
  InferenceReadings out;
  ReadStats& stats = out.stats;
  FamilyTally tally(stats);
  std::unordered_map<std::string, size_t> index;  // kind + model_name → models position
  std::vector<ModelState> state;

  for (const expo::Sample& s : exposition.samples) {
    ++stats.samples;
    auto alias = LookupInferenceMetric(s.name);
    if (!alias) {
      if (s.name.starts_with("vllm:") || s.name.starts_with("sglang:")) {
        tally.Ignored(s.name);
      } else {
        tally.Unknown(s.name);
      }
      continue;
    }
    ResolvedLabels labels(exposition.LabelsOf(s));
    const std::string_view model_name = labels.Get(LabelKey::kModelName);
    std::string key(EngineKindName(alias->engine));
    AppendKeyPart(key, model_name);
    auto [it, inserted] = index.try_emplace(std::move(key), out.models.size());
    if (inserted) {
      if (out.models.size() >= limits.models_per_server) {
        if (breach)
          *breach = {"models_per_server", limits.models_per_server, out.models.size() + 1, ""};
        break;
      }
      InferenceReading r;
      r.kind = alias->engine;
      r.model_name = model_name;
      r.model = ModelFromModelName(model_name);
      out.models.push_back(std::move(r));
      state.emplace_back();
    }
    InferenceReading& r = out.models[it->second];
    ModelState& st = state[it->second];
    // vLLM labels engines `engine`, SGLang `dp_rank`; an unlabelled server is one engine. Lines
    // of one engine that differ only by tensor-parallel rank (SGLang `tp_rank`) repeat the same
    // numbers: the first is kept (counted as duplicates).
    const std::string_view engine = labels.Get(LabelKey::kEngine);
    if (st.engines.emplace(engine).second) r.engines = st.engines.size();

    if (!std::isfinite(s.value)) {
      ++stats.invalid_values;
      continue;
    }
    const std::string_view reason = labels.Get(LabelKey::kFinishedReason);
    std::string seen_key(s.name);
    AppendKeyPart(seen_key, engine);
    AppendKeyPart(seen_key, reason);
    if (!st.seen.insert(std::move(seen_key)).second) {
      ++stats.duplicate_samples;
      continue;
    }
    Apply(r, alias->metric, ToBaseUnit(alias->unit, s.value), reason);
    ++stats.samples_used;
  }
  return out;
}

}  // namespace gpuattr::sources
