// GPU-hours counters of one cluster (docs/accounting.md#counters): each successful cycle's card
// shares over the interval since the previous successful cycle, for the cards and pods that
// cycle saw too. Pods that leave keep what they accrued in their namespace, as energy does.
#include <algorithm>
#include <deque>
#include <iterator>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "gpuattr/ledger/daily.h"
#include "gpuattr/ledger/ledger.h"

namespace gpuattr::ledger {
namespace {

using accounting::kBases;
using accounting::PerBasis;

std::string CardKey(const accounting::CardAccount& c) {
  return c.node + "/" + (c.uuid.empty() ? c.gpu : c.uuid);
}

// Adds `value` × `hours` GPU-hours (and their cost at `price`, when priced) to `into`.
void Accrue(GpuHours& into, const PerBasis& value, double hours,
            const std::optional<double>& price) {
  for (size_t b = 0; b < kBases; ++b) {
    into.hours[b] += value[b] * hours;
    if (price) into.cost[b] += value[b] * hours * *price;
  }
  if (price) into.priced = true;
}

// The pod's record this cycle, updated in place (16,000 pods a cycle: no new map,
// docs/performance.md): already claimed this cycle (a pod on several cards), continued when it
// is the same pod as last cycle's record (node and UID agree; an unknown UID agrees with any), or
// started again at 0.
// `first` says whether this is the record's first claim this cycle.
PodHoursRecord& ClaimPod(std::map<kube::PodId, PodHoursRecord>& records,
                         std::unordered_set<const PodHoursRecord*>& claimed,
                         const accounting::PodAccount& p, const std::string& node, bool& first) {
  auto [it, added] = records.try_emplace(p.pod);
  PodHoursRecord& rec = it->second;
  first = claimed.insert(&rec).second;
  if (!first) return rec;
  const bool same =
      !added && rec.node == node && (rec.uid.empty() || p.uid.empty() || rec.uid == p.uid);
  if (!same) {
    rec = PodHoursRecord{p.uid, node, {}};
  } else if (!p.uid.empty()) {
    rec.uid = p.uid;
  }
  return rec;
}

// Records no card claimed this cycle: kept while their pod is still in the cluster (the same
// UID), else dropped: what they accrued stays in their namespace.
void DropDepartedPods(std::map<kube::PodId, PodHoursRecord>& records,
                      const std::unordered_set<const PodHoursRecord*>& claimed,
                      const PodUids* in_cluster) {
  std::erase_if(records, [&](const auto& kv) {
    const auto& [id, rec] = kv;
    if (claimed.count(&rec)) return false;
    if (in_cluster == nullptr) return true;
    auto there = in_cluster->find(id);
    return there == in_cluster->end() ||
           (!rec.uid.empty() && !there->second.empty() && rec.uid != there->second);
  });
}

// One cycle's keys (cards' "node/uuid", pods' UIDs) as views, and how many of them the last
// cycle's set held (counted for the pods only: the cards always sort). A view is of a string the
// cycle's cards hold (a pod's UID) or of one kept in `owned` (built keys): 16,000 UIDs a cycle
// are not copied unless the set changes (docs/performance.md).
struct CycleKeys {
  std::vector<std::string_view> keys;
  std::deque<std::string> owned;  // a deque: views of its strings stay valid as it grows
  size_t known = 0;
  std::string_view Own(std::string key) { return owned.emplace_back(std::move(key)); }
};

// A pod's key: its UID, else "namespace/name".
std::string_view PodKey(const accounting::PodAccount& p, CycleKeys& keys) {
  return p.uid.empty() ? keys.Own(p.pod.Text()) : std::string_view(p.uid);
}

// The cycle's keys as the set, reusing `set` when it holds the same strings already: when the
// keys are `distinct`, every one of them was known and there are as many, nothing changed (the
// steady state: no sort, no new set).
void AssignSorted(KeySet& set, CycleKeys&& cycle, bool distinct) {
  std::vector<std::string_view>& now = cycle.keys;
  if (distinct && cycle.known == now.size() && now.size() == set.size()) return;
  std::sort(now.begin(), now.end());
  now.erase(std::unique(now.begin(), now.end()), now.end());
  if (set.size() == now.size() && std::equal(now.begin(), now.end(), set.begin())) return;
  set = KeySet(now.begin(), now.end());
}

// A namespace's counters this cycle, found once per namespace rather than once per pod.
struct NamespaceCounters {
  NamespaceHoursRecord* total = nullptr;
  GpuHours* day = nullptr;
};
using NamespacesSeen = std::unordered_map<std::string_view, NamespaceCounters>;

template <typename Record>
void ForgetStale(std::map<std::string, Record>& records, double now, double retention) {
  std::erase_if(records,
                [&](const auto& kv) { return now - kv.second.last_seen_unix > retention; });
}

GpuHoursView View(const GpuHours& g, std::string name, kube::PodId pod = {}) {
  GpuHoursView v{std::move(pod), std::move(name), g.hours, std::nullopt};
  if (g.priced) v.cost = g.cost;
  return v;
}

// One cycle's accrual: the interval, its hours, and the day its totals go to.
struct Interval {
  bool accrues = false;
  double hours = 0;
  double now = 0;
  DayTotals* day = nullptr;  // null when the cycle saw no card
};

// One card's shares over the interval: to its pods (this cycle's records in `pods`), their
// namespaces and the node's idle, in the counters and in the day's totals.
void AccrueCard(AccountingState& s, const accounting::CardAccount& c, std::string_view card_key,
                const std::optional<double>& price, const Interval& in,
                std::unordered_set<const PodHoursRecord*>& claimed, CycleKeys& pods_now,
                NamespacesSeen& namespaces) {
  const bool card_accrues = in.accrues && s.cards.find(card_key) != s.cards.end();
  PerBasis idle = c.idle;
  for (const accounting::PodAccount& p : c.pods) {
    bool first = false;
    PodHoursRecord& rec = ClaimPod(s.pod_hours, claimed, p, c.node, first);
    const std::string_view key = PodKey(p, pods_now);
    const bool pod_seen = s.pods.find(key) != s.pods.end();
    if (first) {  // one key per pod, however many cards it is on
      pods_now.known += pod_seen;
      pods_now.keys.push_back(key);
    }
    NamespaceCounters& counters = namespaces[p.pod.namespace_];
    if (counters.total == nullptr) {
      counters.total = &s.namespace_hours[p.pod.namespace_];
      counters.day = &in.day->namespaces[p.pod.namespace_].total;
    }
    NamespaceHoursRecord& ns = *counters.total;
    GpuHours& day = *counters.day;
    ns.last_seen_unix = in.now;
    if (card_accrues && pod_seen) {
      Accrue(rec.total, p.value, in.hours, price);
      Accrue(ns.total, p.value, in.hours, price);
      Accrue(day, p.value, in.hours, price);
    } else {  // new on this card's interval: that part was nobody's
      for (size_t b = 0; b < kBases; ++b) idle[b] += p.value[b];
      if (price) rec.total.priced = ns.total.priced = day.priced = true;
    }
  }
  NodeIdleRecord& node = s.node_idle[c.node];
  node.last_seen_unix = in.now;
  if (card_accrues) {
    Accrue(node.total, idle, in.hours, price);
    Accrue(in.day->idle, idle, in.hours, price);
    Accrue(in.day->cards, PerBasis{1, 1, 1}, in.hours, price);
  } else if (price) {
    node.total.priced = in.day->idle.priced = in.day->cards.priced = true;
  }
}

void ForgetCosts(GpuHours& g) { g.cost = {}, g.priced = false; }

}  // namespace

void Ledger::RecordGpuHours(const std::vector<accounting::CardAccount>& cards,
                            const std::vector<std::optional<double>>& prices,
                            const std::string& currency, double now, const PodUids* in_cluster,
                            LedgerView& view, const NamespaceLabels& namespace_labels) {
  AccountingState& s = state_.accounting;
  Interval in;
  in.accrues = s.last_unix && now > *s.last_unix && now - *s.last_unix <= params_.max_gap_seconds;
  in.hours = in.accrues ? (now - *s.last_unix) / 3600 : 0;
  in.now = now;
  if (!currency.empty() && s.currency != currency) {
    // Costs in another currency are not converted: the cost counters start again.
    for (auto& [id, r] : s.pod_hours) ForgetCosts(r.total);
    for (auto& [n, r] : s.namespace_hours) ForgetCosts(r.total);
    for (auto& [n, r] : s.node_idle) ForgetCosts(r.total);
    ForgetDayCosts(s.days);
    s.currency = currency;
  }
  s.namespace_labels = params_.namespace_labels;
  if (!cards.empty()) in.day = &s.days[DayOf(now)];
  CycleKeys cards_now, pods_now;
  cards_now.keys.reserve(cards.size());
  pods_now.keys.reserve(s.pod_hours.size());
  std::unordered_set<const PodHoursRecord*> claimed;
  claimed.reserve(s.pod_hours.size());
  NamespacesSeen namespaces;
  for (size_t ci = 0; ci < cards.size(); ++ci) {
    const accounting::CardAccount& c = cards[ci];
    const std::optional<double> price = ci < prices.size() ? prices[ci] : std::nullopt;
    if (price) view.card_prices.push_back({c.node, c.gpu, c.uuid, c.model, *price});
    cards_now.keys.push_back(cards_now.Own(CardKey(c)));
    AccrueCard(s, c, cards_now.keys.back(), price, in, claimed, pods_now, namespaces);
  }
  if (in.day) RecordDayLabels(*in.day, namespace_labels);
  KeepDays(s.days, DayOf(now), params_.retention_days);
  DropDepartedPods(s.pod_hours, claimed, in_cluster);
  // Records are sorted by namespace first: one lookup per namespace, not per pod.
  const std::string* last_namespace = nullptr;
  for (const auto& [id, rec] : s.pod_hours)
    if (last_namespace == nullptr || *last_namespace != id.namespace_) {
      s.namespace_hours[id.namespace_].last_seen_unix = now;
      last_namespace = &id.namespace_;
    }
  ForgetStale(s.namespace_hours, now, params_.namespace_retention_seconds);
  ForgetStale(s.node_idle, now, params_.namespace_retention_seconds);
  // A pod's key is its UID (unique in a cluster) and there is one per claimed record: distinct.
  // Two cards could share a key only through a duplicated UUID: the cards always sort.
  AssignSorted(s.cards, std::move(cards_now), /*distinct=*/false);
  AssignSorted(s.pods, std::move(pods_now), /*distinct=*/true);
  s.last_unix = now;

  view.currency = s.currency;
  view.pod_gpu_hours.reserve(s.pod_hours.size());
  for (const auto& [id, r] : s.pod_hours) view.pod_gpu_hours.push_back(View(r.total, r.node, id));
  for (const auto& [name, r] : s.namespace_hours)
    view.namespace_gpu_hours.push_back(View(r.total, name));
  for (const auto& [name, r] : s.node_idle) view.node_idle_gpu_hours.push_back(View(r.total, name));
  view.costs = SummarizeDays(s, DayOf(now));
}

}  // namespace gpuattr::ledger
