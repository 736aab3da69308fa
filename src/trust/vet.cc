#include "gpuattr/trust/vet.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <variant>

#include "gpuattr/trust/capacity.h"

namespace gpuattr::trust {
namespace {

using sources::DcgmReadings;
using sources::ExporterReadings;
using sources::InferenceReadings;
using sources::ProcessReadings;

// Ratios computed from counters may land a rounding error above 1; that is still 1.
constexpr double kRatioSlack = 1e-6;

bool IsRatio(double v) { return v >= 0 && v <= 1 + kRatioSlack; }
bool NonNegative(double v) { return v >= 0; }
bool CardPower(double v) { return v >= 0 && v <= kMaxCardWatts; }

void Count(sources::ReadStats& stats, std::string_view reason, uint64_t lines) {
  if (lines > 0) stats.rejected[std::string(reason)] += lines;
}

// Drops the value when `ok` says no; 1 when it did.
template <typename Ok>
uint64_t Check(std::optional<double>& slot, Ok ok) {
  if (!slot || ok(*slot)) return 0;
  slot.reset();
  return 1;
}

uint64_t CheckUsedBelowTotal(std::optional<double>& used, const std::optional<double>& total) {
  if (!used || !total || *used <= *total) return 0;
  used.reset();
  return 1;
}

uint64_t VetValues(sources::DcgmValues& v) {
  uint64_t n = 0;
  for (auto* r : {&v.gpu_util, &v.gr_engine_active, &v.sm_active, &v.sm_occupancy, &v.tensor_active,
                  &v.dram_active})
    n += Check(*r, IsRatio);
  for (auto* m : {&v.memory_used_bytes, &v.memory_free_bytes, &v.memory_total_bytes,
                  &v.memory_reserved_bytes})
    n += Check(*m, NonNegative);
  n += Check(v.power_watts, CardPower);
  n += CheckUsedBelowTotal(v.memory_used_bytes, v.memory_total_bytes);
  return n;
}

// Samples behind a record: one per value it holds (at least the one line that named it).
uint64_t Lines(const sources::DcgmRecord& r) {
  const sources::DcgmValues& v = r.values;
  const std::optional<double>* fields[] = {&v.gpu_util,
                                           &v.gr_engine_active,
                                           &v.sm_active,
                                           &v.sm_occupancy,
                                           &v.tensor_active,
                                           &v.dram_active,
                                           &v.memory_used_bytes,
                                           &v.memory_free_bytes,
                                           &v.memory_total_bytes,
                                           &v.memory_reserved_bytes,
                                           &v.power_watts,
                                           &v.energy_joules,
                                           &v.temperature_celsius,
                                           &v.last_xid,
                                           &v.ecc_dbe_volatile,
                                           &v.row_remap_failure,
                                           &v.uncorrectable_remapped_rows,
                                           &v.row_remap_pending,
                                           &v.clocks_event_reasons,
                                           &v.health_status};
  uint64_t n = r.xid_error_counts.size();
  for (const auto* f : fields) n += f->has_value() ? 1 : 0;
  return std::max<uint64_t>(n, 1);
}

uint64_t Lines(const sources::ProcessReading& p) {
  return std::max<uint64_t>((p.memory_bytes ? 1 : 0) + (p.utilization ? 1 : 0), 1);
}

uint64_t Lines(const sources::ProcessDeviceReading& d) {
  return std::max<uint64_t>((d.memory_total_bytes ? 1 : 0) + (d.utilization ? 1 : 0) +
                                (d.power_watts ? 1 : 0) + (d.temperature_celsius ? 1 : 0),
                            1);
}

// Why a pod label may not stand: "" when the pod exists and runs on `node`.
std::string_view PodVerdict(const sources::PodLabels& p, const std::string& node,
                            const kube::ClusterObjects& objects) {
  const kube::Pod* pod = objects.FindPod(p.id.namespace_, p.id.name);
  if (pod == nullptr) return kUnknownPod;
  if (pod->node_name != node) return kPodOnOtherNode;
  return {};
}

// Values, then per-pod labels, of one exporter's readings.
struct ExporterVetter {
  const kube::ClusterObjects& objects;
  const std::string& node;

  void operator()(DcgmReadings& d) const {
    for (sources::DcgmRecord& r : d.records) {
      Count(d.stats, kBadValue, VetValues(r.values));
      if (!r.pod) continue;
      if (std::string_view why = PodVerdict(*r.pod, node, objects); !why.empty()) {
        Count(d.stats, why, Lines(r));
        r.pod.reset();
      }
    }
  }

  void operator()(ProcessReadings& p) const {
    for (sources::ProcessReading& r : p.processes) {
      uint64_t bad = Check(r.memory_bytes, NonNegative) + Check(r.utilization, IsRatio);
      Count(p.stats, kBadValue, bad);
      if (!r.pod) continue;
      if (std::string_view why = PodVerdict(*r.pod, node, objects); !why.empty()) {
        Count(p.stats, why, Lines(r));
        r.pod.reset();
      }
    }
    for (sources::ProcessDeviceReading& d : p.devices) {
      uint64_t bad = Check(d.memory_total_bytes, NonNegative) + Check(d.utilization, IsRatio) +
                     Check(d.power_watts, CardPower);
      Count(p.stats, kBadValue, bad);
    }
  }

  // An inference server speaks for itself: its series carry no pod to check.
  void operator()(InferenceReadings& i) const {
    for (sources::InferenceReading& m : i.models)
      Count(i.stats, kBadValue, Check(m.kv_cache_usage, IsRatio));
  }
};

// A query API's readings for a node the cluster does not have: dropped whole.
void DropUnknownNode(ExporterReadings& e) {
  std::visit(
      [](auto& r) {
        using T = std::decay_t<decltype(r)>;
        uint64_t n = 0;
        if constexpr (std::is_same_v<T, DcgmReadings>) {
          for (const auto& rec : r.records) n += Lines(rec);
          r.records.clear();
        } else if constexpr (std::is_same_v<T, ProcessReadings>) {
          for (const auto& p : r.processes) n += Lines(p);
          for (const auto& d : r.devices) n += Lines(d);
          r.processes.clear();
          r.devices.clear();
        } else {
          n = r.models.size();
          r.models.clear();
        }
        Count(r.stats, kUnknownNode, n);
      },
      e.readings);
}

// What a line claims to be: its device's UUID (a MIG slice's is its card's) and its GPU index
// (with the MIG instance) on the exporter's node. Two exporters of one kind claiming either
// describe one device twice.
std::vector<std::string> Claims(const std::string& node, const std::string& uuid,
                                const std::string& gpu,
                                const std::optional<std::string>& instance) {
  std::vector<std::string> out;
  if (!uuid.empty()) out.push_back("u" + uuid);
  if (!gpu.empty()) {
    std::string k = "n" + node;
    k += '\0';
    k += gpu;
    if (instance) {
      k += '\0';
      k += *instance;
    }
    out.push_back(std::move(k));
  }
  return out;
}

// Drops the items of one exporter whose claims another exporter owns, then claims the rest.
template <typename Item, typename ClaimsOf>
uint64_t TakeDevices(std::vector<Item>& items, size_t self, size_t kind, ClaimsOf claims_of,
                     std::map<std::pair<size_t, std::string>, size_t>& owner) {
  uint64_t dropped = 0;
  std::erase_if(items, [&](const Item& item) {
    for (const std::string& c : claims_of(item)) {
      auto it = owner.find({kind, c});
      if (it != owner.end() && it->second != self) {
        dropped += Lines(item);
        return true;
      }
    }
    return false;
  });
  for (const Item& item : items)
    for (std::string& c : claims_of(item)) owner.try_emplace({kind, std::move(c)}, self);
  return dropped;
}

// The exporters in the order they are believed (docs/design.md#trust): pinned, then trust rules,
// then DaemonSets in exporter namespaces; within a rank the first by namespace/name (then node: a
// query API answers per node).
std::vector<size_t> TrustOrder(const std::vector<ExporterReadings>& readings) {
  std::vector<size_t> order(readings.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const ExporterReadings &x = readings[a], &y = readings[b];
    const uint8_t x_rank = x.pinned ? 0 : x.rank, y_rank = y.pinned ? 0 : y.rank;
    return std::tie(x_rank, x.namespace_, x.pod, x.node) <
           std::tie(y_rank, y.namespace_, y.pod, y.node);
  });
  return order;
}

// Two exporters of one kind reporting one device: the first in trust order keeps it.
void DropDuplicateDevices(std::vector<ExporterReadings>& readings,
                          const std::vector<size_t>& order) {
  std::map<std::pair<size_t, std::string>, size_t> owner;  // (kind, claim) → exporter
  for (size_t i : order) {
    ExporterReadings& e = readings[i];
    const size_t kind = e.readings.index();
    const std::string& node = e.node;
    if (auto* d = std::get_if<DcgmReadings>(&e.readings)) {
      Count(d->stats, kDuplicateDevice,
            TakeDevices(
                d->records, i, kind,
                [&](const sources::DcgmRecord& r) {
                  return Claims(node, r.device.uuid, r.device.gpu, r.device.gpu_instance);
                },
                owner));
    } else if (auto* p = std::get_if<ProcessReadings>(&e.readings)) {
      auto claims = [&](const auto& r) { return Claims(node, r.uuid, r.gpu, std::nullopt); };
      uint64_t n = TakeDevices(p->processes, i, kind, claims, owner);
      n += TakeDevices(p->devices, i, kind, claims, owner);
      Count(p->stats, kDuplicateDevice, n);
    }
  }
}

// The card a line names on its node: its GPU index, else its UUID.
std::string CardOf(const std::string& uuid, const std::string& gpu) {
  return gpu.empty() ? "u" + uuid : "g" + gpu;
}

// Cards in the order a node's budget admits them: by GPU index (numerically), then by UUID.
bool Digits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

bool CardBefore(const std::string& a, const std::string& b) {
  if (a[0] != b[0]) return a[0] == 'g';
  const std::string_view x = std::string_view(a).substr(1), y = std::string_view(b).substr(1);
  if (a[0] == 'g' && x.size() != y.size() && Digits(x) && Digits(y)) return x.size() < y.size();
  return a < b;
}

template <typename Item>
void AddCards(const std::vector<Item>& items, std::vector<std::string>& cards) {
  for (const Item& i : items) {
    if constexpr (std::is_same_v<Item, sources::DcgmRecord>)
      cards.push_back(CardOf(i.device.uuid, i.device.gpu));
    else
      cards.push_back(CardOf(i.uuid, i.gpu));
  }
}

// Drops the items on the `over` cards; the lines dropped.
template <typename Item>
uint64_t DropCards(std::vector<Item>& items, const std::set<std::string>& over) {
  uint64_t dropped = 0;
  std::erase_if(items, [&](const Item& i) {
    std::string card;
    if constexpr (std::is_same_v<Item, sources::DcgmRecord>)
      card = CardOf(i.device.uuid, i.device.gpu);
    else
      card = CardOf(i.uuid, i.gpu);
    if (over.count(card) == 0) return false;
    dropped += Lines(i);
    return true;
  });
  return dropped;
}

// Cards beyond what a node advertises: admitted per node and kind in trust order, the rest
// dropped as over_capacity. A pinned exporter is outside the rule: its cards are neither limited
// nor counted (the operator vouched for it).
void DropOverCapacity(std::vector<ExporterReadings>& readings, const std::vector<size_t>& order,
                      const kube::ClusterObjects& objects) {
  std::map<std::string, std::optional<int64_t>> bounds;                // node → cards advertised
  std::map<std::pair<size_t, std::string>, std::set<std::string>> in;  // (kind, node) → cards
  for (size_t i : order) {
    ExporterReadings& e = readings[i];
    auto* d = std::get_if<DcgmReadings>(&e.readings);
    auto* p = std::get_if<ProcessReadings>(&e.readings);
    if ((!d && !p) || e.pinned) continue;
    auto bound = bounds.find(e.node);
    if (bound == bounds.end())
      bound = bounds.emplace(e.node, AdvertisedCards(objects, e.node)).first;
    if (!bound->second) continue;
    std::vector<std::string> cards;
    if (d) AddCards(d->records, cards);
    if (p) {
      AddCards(p->devices, cards);
      AddCards(p->processes, cards);
    }
    std::sort(cards.begin(), cards.end(), CardBefore);
    cards.erase(std::unique(cards.begin(), cards.end()), cards.end());
    std::set<std::string>& have = in[{e.readings.index(), e.node}];
    std::set<std::string> over;
    for (std::string& c : cards) {
      if (have.count(c)) continue;
      if (static_cast<int64_t>(have.size()) < *bound->second)
        have.insert(std::move(c));
      else
        over.insert(std::move(c));
    }
    if (over.empty()) continue;
    if (d) Count(d->stats, kOverCapacity, DropCards(d->records, over));
    if (p)
      Count(p->stats, kOverCapacity, DropCards(p->devices, over) + DropCards(p->processes, over));
  }
}

}  // namespace

// Each dropped line is counted once, under the first reason that drops it: whole readings of an
// unknown node, then devices another exporter owns, then cards beyond what the node advertises,
// then values and pod labels of what is left.
void VetReadings(std::vector<ExporterReadings>& readings, const kube::ClusterObjects& objects) {
  for (ExporterReadings& e : readings) {
    if (e.from_query_api) {
      if (e.node.empty() || objects.FindNode(e.node) == nullptr) DropUnknownNode(e);
    } else if (e.node.empty()) {
      if (const kube::Pod* p = objects.FindPod(e.namespace_, e.pod)) e.node = p->node_name;
    }
  }
  const std::vector<size_t> order = TrustOrder(readings);
  DropDuplicateDevices(readings, order);
  DropOverCapacity(readings, order, objects);
  for (ExporterReadings& e : readings) std::visit(ExporterVetter{objects, e.node}, e.readings);
}

}  // namespace gpuattr::trust
