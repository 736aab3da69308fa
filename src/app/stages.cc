#include "gpuattr/app/stages.h"

#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <variant>

#include "gpuattr/accounting/accounting.h"
#include "gpuattr/accounting/prices.h"
#include "gpuattr/accounting/teams.h"
#include "gpuattr/allocation/allocation.h"
#include "gpuattr/health/health.h"
#include "gpuattr/rightsizing/workload.h"
#include "gpuattr/util/platform.h"

namespace gpuattr::app {

std::vector<sources::ExporterReadings> OwnedReadings(std::vector<sources::ExporterReadings> all,
                                                     const kube::Shard& shard) {
  if (!shard.sharded()) return all;
  std::vector<sources::ExporterReadings> out;
  for (sources::ExporterReadings& r : all)
    if (kube::OwnsNode(shard, r.node)) out.push_back(std::move(r));
  return out;
}

CycleInput ShardInput(const CycleInput& whole, const kube::Shard& shard) {
  CycleInput in = whole;
  in.shard = shard;
  if (!shard.sharded()) return in;
  in.cluster_objects = whole.objects;
  in.objects =
      std::make_shared<const kube::ClusterObjects>(kube::ShardObjects(*whole.objects, shard));
  in.readings = OwnedReadings(whole.readings, shard);
  return in;
}

std::vector<model::PodIdentity> PodIdentities(const attribution::Attribution& a,
                                              const kube::ClusterObjects& objects) {
  std::vector<model::PodIdentity> out;
  out.reserve(a.pods.size());
  for (const attribution::Pod& p : a.pods) {
    model::PodIdentity id{p.id, p.node, {}, std::nullopt};
    if (auto it = objects.pods.find(p.id.Text()); it != objects.pods.end()) {
      id.uid = it->second.uid;
      id.workload = rightsizing::WorkloadOf(it->second);
    }
    out.push_back(std::move(id));
  }
  return out;
}

namespace {

// The stages that read the exporters' readings: attribution, allocation, health, inference.
// `gpu_readings_read` (may be empty) is called once attribution has read the dcgm and
// per-process readings, which nothing after it reads.
model::CycleOutput ReadingStages(const CycleInput& input, StageState& state,
                                 const StageParams& params,
                                 const std::function<void()>& gpu_readings_read = {}) {
  const kube::ClusterObjects& objects = *input.objects;
  model::CycleOutput out;
  out.attribution = attribution::Attribute(
      {input.cluster, objects, input.readings, params.attribution}, gpu_readings_read);
  allocation::AllocationInput alloc{input.cluster, objects, out.attribution, input.now_unix};
  if (input.shard.sharded() && input.cluster_objects) {
    alloc.offer_objects = input.cluster_objects.get();
    alloc.idle_scope = "shard " + std::to_string(input.shard.index) + "'s nodes";
  }
  out.allocation = allocation::Allocate(alloc);
  out.pod_identities = PodIdentities(out.attribution, objects);

  std::vector<health::DeviceState> states;
  states.reserve(out.attribution.devices.size());
  for (const attribution::Device& d : out.attribution.devices)
    states.push_back({d.id.node, d.health.state});
  out.node_health = health::AssessNodes(states, objects.nodes);

  out.inference =
      state.inference.Update(input.cluster, input.readings, input.now, &out.attribution);
  return out;
}

// The stages over their results (the readings are not read): ledger, accounting, rightsizing.
void LedgerStages(const CycleInput& input, StageState& state, const StageParams& params,
                  model::CycleOutput& out) {
  const kube::ClusterObjects& objects = *input.objects;

  ledger::PodUids in_cluster;
  for (const auto& [key, pod] : objects.pods) in_cluster.emplace(pod.Id(), pod.uid);
  out.ledger = state.ledger.Record(out.attribution, input.now_unix, &in_cluster);
  // GPU-hours of every card since the previous successful cycle (docs/accounting.md), the cards'
  // shares handed from accounting to the ledger one at a time (no copy of every card is made).
  const std::vector<attribution::Card>& card_list = out.attribution.cards;
  const std::vector<std::optional<double>> prices =
      params.prices ? accounting::PriceCards(*params.prices, card_list, objects)
                    : std::vector<std::optional<double>>{};
  // The namespaces' team labels, recorded with the daily totals (empty: namespaces not listed).
  accounting::NamespaceLabels teams =
      accounting::TeamLabelsOf(objects.namespaces, params.namespace_labels);
  state.ledger.RecordGpuHoursOf(
      [&](const ledger::Ledger::CardSink& sink) {
        accounting::ForEachCardShare({out.attribution, out.allocation, objects},
                                     [&](size_t ci, const accounting::CardAccount& card) {
                                       sink(card, ci < prices.size() ? prices[ci] : std::nullopt);
                                     });
      },
      params.currency, input.now_unix, &in_cluster, out.ledger, teams, &out.attribution.pods);
  out.ledger.bases = params.bases;
  // Each device's card price, for the reclaimable cost
  // (docs/rightsizing.md#reading-a-recommendation).
  std::vector<std::optional<double>> device_prices;
  if (!prices.empty()) {
    std::map<std::pair<std::string_view, std::string_view>, double> by_card;
    for (size_t i = 0; i < card_list.size() && i < prices.size(); ++i)
      if (prices[i])  // views of the cards' own strings (a std::pair{...} would copy them)
        by_card.emplace(
            std::pair<std::string_view, std::string_view>(card_list[i].node, card_list[i].gpu),
            *prices[i]);
    for (const attribution::Device& d : out.attribution.devices) {
      auto it = by_card.find({d.id.node, d.id.gpu});
      device_prices.push_back(it == by_card.end() ? std::nullopt : std::optional(it->second));
    }
  }
  out.rightsizing = state.rightsizing.Record(out.attribution, objects, input.now_unix,
                                             prices.empty() ? nullptr : &device_prices);
  out.rightsizing.currency = params.currency;
  // Every shard sees every namespace: shard 0 alone publishes them, so that a join on
  // (cluster, namespace) finds one series.
  if (!input.shard.sharded() || input.shard.index == 0) out.namespace_labels = std::move(teams);
}

}  // namespace

model::CycleOutput RunStages(const CycleInput& input, StageState& state,
                             const StageParams& params) {
  model::CycleOutput out = ReadingStages(input, state, params);
  LedgerStages(input, state, params, out);
  return out;
}

model::CycleOutput RunStages(CycleInput&& input, StageState& state, const StageParams& params) {
  // The GPU readings go as soon as attribution has read them, before it builds its output (the
  // cycle's memory peak, docs/performance.md#peak-rss-at-1000-nodes); inference's stay until
  // inference has read them.
  const auto free_gpu_readings = [&input] {
    for (sources::ExporterReadings& e : input.readings)
      if (!std::holds_alternative<sources::InferenceReadings>(e.readings))
        e.readings = sources::Readings{};
    // Their pages back to the system: they were filled by the scrape threads, in arenas that
    // this thread's allocations would not reuse.
    platform::ReleaseFreeMemory();
  };
  model::CycleOutput out = ReadingStages(input, state, params, free_gpu_readings);
  std::vector<sources::ExporterReadings>().swap(input.readings);
  LedgerStages(input, state, params, out);
  return out;
}

}  // namespace gpuattr::app
