// One cycle's inference view from the scraped servers, the previous cycle's readings and the
// attribution; and the tracker that carries the readings from one cycle to the next.
#include <algorithm>
#include <set>

#include "gpuattr/attribution/types.h"
#include "gpuattr/inference/inference.h"

namespace gpuattr::inference {
namespace {

std::optional<double> PodPower(const attribution::Attribution* a, const ServerKey& key) {
  if (!a) return std::nullopt;
  const kube::PodId id{key.namespace_, key.pod};
  auto it =
      std::lower_bound(a->pods.begin(), a->pods.end(), id,
                       [](const attribution::Pod& p, const kube::PodId& i) { return p.id < i; });
  if (it != a->pods.end() && it->id == id) return it->power_watts;  // pods are sorted by id
  return std::nullopt;
}

}  // namespace

std::vector<std::pair<ServerKey, const sources::InferenceReading*>> KeysOf(
    const std::vector<sources::ExporterReadings>& scrapes) {
  std::vector<std::pair<ServerKey, const sources::InferenceReading*>> out;
  std::set<ServerKey> used;
  for (const sources::ExporterReadings& s : scrapes) {
    const auto* inference = std::get_if<sources::InferenceReadings>(&s.readings);
    if (!inference) continue;
    for (const sources::InferenceReading& r : inference->models) {
      ServerKey key{s.namespace_, s.pod, std::string(sources::EngineKindName(r.kind)), r.model};
      // "a/llama" and "b/llama" in one pod would share a label set: keep them apart by the full
      // name. The same model_name twice (one pod scraped on two ports) is kept once.
      if (used.count(key)) key.model = r.model_name;
      if (!used.insert(key).second) continue;
      out.emplace_back(std::move(key), &r);
    }
  }
  return out;
}

InferenceView BuildView(const std::string& cluster,
                        const std::vector<sources::ExporterReadings>& scrapes,
                        const PreviousReadings& previous, std::chrono::steady_clock::time_point now,
                        const attribution::Attribution* attribution) {
  InferenceView view;
  view.cluster = cluster;
  std::map<std::string, std::string> node_of;  // "ns/pod" → node
  for (const sources::ExporterReadings& s : scrapes)
    if (std::holds_alternative<sources::InferenceReadings>(s.readings))
      node_of.emplace(s.namespace_ + "/" + s.pod, s.node);

  for (auto& [key, reading] : KeysOf(scrapes)) {
    const sources::InferenceReading& r = *reading;
    Server srv;
    srv.key = key;
    srv.node = node_of[key.namespace_ + "/" + key.pod];
    srv.model_name = r.model_name;
    srv.engines = r.engines;
    srv.kv_cache_usage = r.kv_cache_usage;
    srv.requests_running = r.requests_running;
    srv.requests_waiting = r.requests_waiting;
    if (auto it = previous.find(key); it != previous.end()) {
      const double seconds = std::chrono::duration<double>(now - it->second.at).count();
      srv.interval_seconds = seconds;
      srv.rates = ComputeRates(it->second.reading, r, seconds);
    }
    if (!r.generation_tokens_total && r.gen_throughput)
      srv.rates.generation_tokens_per_second = r.gen_throughput;
    srv.saturated = Saturated(srv.kv_cache_usage, srv.requests_waiting);
    srv.pod_power_watts = PodPower(attribution, key);
    srv.generation_tokens_per_joule =
        TokensPerJoule(srv.rates.generation_tokens_per_second, srv.pod_power_watts);
    view.servers.push_back(std::move(srv));
  }
  std::sort(view.servers.begin(), view.servers.end(),
            [](const Server& a, const Server& b) { return a.key < b.key; });
  return view;
}

InferenceView InferenceTracker::Update(const std::string& cluster,
                                       const std::vector<sources::ExporterReadings>& scrapes,
                                       std::chrono::steady_clock::time_point now,
                                       const attribution::Attribution* attribution) {
  InferenceView view = BuildView(cluster, scrapes, previous_, now, attribution);
  PreviousReadings next;  // only this cycle's servers: the ones that vanished are dropped
  for (auto& [key, reading] : KeysOf(scrapes)) next.emplace(key, PreviousReading{*reading, now});
  previous_ = std::move(next);
  return view;
}

}  // namespace gpuattr::inference
