// GPU-hours counters of one cluster (docs/accounting.md#counters): each successful cycle's card
// shares over the interval since the previous successful cycle, for the cards and pods that
// cycle saw too. Pods that leave keep what they accrued in their namespace, as energy does.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string_view>
#include <unordered_map>

#include "gpuattr/ledger/daily.h"
#include "gpuattr/ledger/ledger.h"

namespace gpuattr::ledger {
namespace {

using accounting::kBases;
using accounting::PerBasis;

// A card's key "node/uuid" (else "node/gpu"), built into `buffer` (one buffer for every card).
std::string_view CardKey(const accounting::CardAccount& c, std::string& buffer) {
  buffer.assign(c.node).append("/").append(c.uuid.empty() ? c.gpu : c.uuid);
  return buffer;
}

// How far ahead of where it stands a cycle looks in the last cycle's order before it looks the
// key up: a few cards or pods that left are stepped over without a lookup.
constexpr size_t kLookahead = 4;

// One cycle's keys met against a KeySet that ends holding exactly them (the cards this cycle
// saw): Meet says whether the set held the key (the last accounted cycle saw it). It tries
// the last cycle's order first (a few comparisons: the steady state meets every key in the same
// order), then the set. Keys new this cycle are added at Finish, so a key is new however often
// this cycle meets it.
class KeyPass {
 public:
  KeyPass(KeySet& set, std::vector<const std::string*>& order)
      : set_(set), order_(order), last_(std::move(order)) {
    next_.reserve(last_.size());
  }

  bool Meet(std::string_view key) {
    for (size_t k = cursor_; k < last_.size() && k < cursor_ + kLookahead; ++k)
      if (*last_[k] == key) {
        in_order_ += k == cursor_;
        cursor_ = k + 1;
        next_.push_back(last_[k]);
        return true;
      }
    if (auto it = set_.find(key); it != set_.end()) {
      next_.push_back(&*it);
      return true;
    }
    added_.emplace_back(next_.size(), std::string(key));
    next_.push_back(nullptr);
    return false;
  }

  // The set becomes the keys met (unchanged when every key came in the last cycle's order, or
  // the last cycle's order is not known and nothing was met of a set already empty), and the
  // order of this cycle is kept for the next.
  void Finish() {
    const bool same = added_.empty() && in_order_ == next_.size() && next_.size() == last_.size() &&
                      (!last_.empty() || set_.empty());
    if (!same) {
      std::vector<const std::string*> met;
      met.reserve(next_.size());
      for (const std::string* k : next_)
        if (k != nullptr) met.push_back(k);
      std::sort(met.begin(), met.end(), std::less<>());
      for (auto it = set_.begin(); it != set_.end();)
        it = std::binary_search(met.begin(), met.end(), &*it, std::less<>()) ? std::next(it)
                                                                             : set_.erase(it);
      for (auto& [at, key] : added_) next_[at] = &*set_.insert(std::move(key)).first;
    }
    order_ = std::move(next_);
  }

 private:
  KeySet& set_;
  std::vector<const std::string*>& order_;
  std::vector<const std::string*> last_, next_;
  std::vector<std::pair<size_t, std::string>> added_;  // (place in next_, key)
  size_t cursor_ = 0;                                  // in last_
  size_t in_order_ = 0;                                // keys met at the cursor
};

using RecordEntry = std::pair<const kube::PodId, PodHoursRecord>;

// The records claimed this cycle: a set of addresses in one array (open addressing), as 16,000
// node allocations a cycle were a tenth of the accounting's instructions. Each claim keeps its
// first answer to "seen by the last cycle" for the pod's other cards.
struct Claim {
  const PodHoursRecord* record = nullptr;
  bool seen = false;
};

class ClaimedSet {
 public:
  explicit ClaimedSet(size_t expected) {
    size_t n = 64;
    while (n < 2 * expected) n *= 2;
    slots_.assign(n, Claim{});
  }
  // The claim of `r`; `added` says whether it is new (its `seen` then for the caller to set).
  Claim& Insert(const PodHoursRecord* r, bool& added) {
    if (2 * (size_ + 1) > slots_.size()) Grow();
    Claim& slot = Slot(r);
    added = slot.record != r;
    if (added) {
      slot = {r, false};
      ++size_;
    }
    return slot;
  }
  bool Contains(const PodHoursRecord* r) const { return Slot(r).record == r; }

 private:
  size_t Hash(const PodHoursRecord* r) const {
    return (reinterpret_cast<uintptr_t>(r) >> 4) * 0x9E3779B97F4A7C15ull & (slots_.size() - 1);
  }
  // The slot holding `r`, else the empty one where it would go.
  Claim& Slot(const PodHoursRecord* r) {
    size_t i = Hash(r);
    while (slots_[i].record != nullptr && slots_[i].record != r) i = (i + 1) & (slots_.size() - 1);
    return slots_[i];
  }
  const Claim& Slot(const PodHoursRecord* r) const {
    return const_cast<ClaimedSet*>(this)->Slot(r);
  }
  void Grow() {
    std::vector<Claim> old(slots_.size() * 2);
    old.swap(slots_);
    size_ = 0;
    bool added = false;
    for (const Claim& c : old)
      if (c.record != nullptr) Insert(c.record, added).seen = c.seen;
  }
  std::vector<Claim> slots_;
  size_t size_ = 0;
};

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
// `seen` says whether the last accounted cycle saw the pod under the key it has now (its UID, else
// its name): the first claim this cycle decides, for every card the pod is on.
// The records come in the last cycle's order when nothing changed (`order`: tried first, from
// `cursor`); the record claimed is appended to `next`.
PodHoursRecord& ClaimPod(std::map<kube::PodId, PodHoursRecord>& records,
                         const std::vector<RecordEntry*>& order, size_t& cursor,
                         std::vector<RecordEntry*>& next, ClaimedSet& claimed,
                         const accounting::PodAccount& p, const std::string& node, bool& seen) {
  RecordEntry* entry = nullptr;
  bool added = false;
  for (size_t k = cursor; k < order.size() && k < cursor + kLookahead; ++k)
    if (order[k]->first == p.pod) {
      entry = order[k];
      cursor = k + 1;
      break;
    }
  if (entry == nullptr) {
    auto [it, was_added] = records.try_emplace(p.pod);
    entry = &*it;
    added = was_added;
  }
  next.push_back(entry);
  PodHoursRecord& rec = entry->second;
  bool first = false;
  Claim& claim = claimed.Insert(&rec, first);
  if (!first) {
    seen = claim.seen;
    return rec;
  }
  const SeenAs key = p.uid.empty() ? SeenAs::kName : SeenAs::kUid;
  seen = claim.seen = !added && rec.seen == key && (p.uid.empty() || rec.uid == p.uid);
  const bool same =
      !added && rec.node == node && (rec.uid.empty() || p.uid.empty() || rec.uid == p.uid);
  if (!same) {
    rec = PodHoursRecord{p.uid, node, {}};
  } else if (!p.uid.empty() && rec.uid != p.uid) {
    rec.uid = p.uid;
  }
  rec.seen = key;  // for the next cycle
  return rec;
}

// Records no card claimed this cycle: kept while their pod is still in the cluster (the same
// UID), as not seen by this cycle, else dropped: what they accrued stays in their namespace.
void DropDepartedPods(std::map<kube::PodId, PodHoursRecord>& records, const ClaimedSet& claimed,
                      const PodUids* in_cluster) {
  for (auto it = records.begin(); it != records.end();) {
    PodHoursRecord& rec = it->second;
    if (claimed.Contains(&rec)) {
      ++it;
      continue;
    }
    auto there = in_cluster ? in_cluster->find(it->first) : PodUids::const_iterator{};
    const bool gone = in_cluster == nullptr || there == in_cluster->end() ||
                      (!rec.uid.empty() && !there->second.empty() && rec.uid != there->second);
    if (gone) {
      it = records.erase(it);
    } else {
      rec.seen = SeenAs::kNo;
      ++it;
    }
  }
}

// A namespace's counters this cycle, found once per namespace rather than once per pod. Keyed by
// the namespace_hours map's own key: the cards come through one reused buffer
// (accounting::ForEachCardShare), so a view of a card's strings would dangle on the next card.
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

// The view's pod rows: by index into `attributed` for a record of an attributed pod on the
// same node (both sorted by pod: one merge), else with the record's own names.
void ViewPods(const std::map<kube::PodId, PodHoursRecord>& records,
              const std::vector<attribution::Pod>* attributed, LedgerView& view) {
  static const std::vector<attribution::Pod> kNone;
  const std::vector<attribution::Pod>& pods = attributed ? *attributed : kNone;
  view.pod_hours.reserve(std::min(records.size(), pods.size()));
  size_t k = 0;
  bool costs = false;  // a row was priced: every row from then on has a cost (0 when unpriced)
  for (const auto& [id, r] : records) {
    while (k < pods.size() && pods[k].id < id) ++k;
    if (k < pods.size() && pods[k].id == id && pods[k].node == r.node) {
      if (r.total.priced && !costs) {
        view.pod_costs.resize(view.pod_hours.size());
        costs = true;
      }
      view.pod_hours.push_back({static_cast<uint32_t>(k), r.total.priced, r.total.hours});
      if (costs) view.pod_costs.push_back(r.total.cost);
    } else {
      view.other_pod_hours.push_back(View(r.total, r.node, id));
    }
  }
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
// One cycle's pass over the ledger's keys and records (Ledger::CycleOrder).
struct CyclePass {
  CyclePass(AccountingState& s, std::vector<const std::string*>& card_order,
            const std::vector<RecordEntry*>& records_order)
      : cards(s.cards, card_order), record_order(records_order), claimed(s.pod_hours.size()) {
    records.reserve(record_order.size());
  }
  KeyPass cards;
  const std::vector<RecordEntry*>& record_order;
  size_t record_cursor = 0;
  std::vector<RecordEntry*> records;  // claimed this cycle, in order (with repeats)
  ClaimedSet claimed;
};

void AccrueCard(AccountingState& s, const accounting::CardAccount& c, bool card_seen,
                const std::optional<double>& price, const Interval& in, CyclePass& pass,
                NamespacesSeen& namespaces) {
  const bool card_accrues = in.accrues && card_seen;
  PerBasis idle = c.idle;
  for (const accounting::PodAccount& p : c.pods) {
    bool pod_seen = false;
    PodHoursRecord& rec = ClaimPod(s.pod_hours, pass.record_order, pass.record_cursor, pass.records,
                                   pass.claimed, p, c.node, pod_seen);
    auto it = namespaces.find(p.pod.namespace_);
    if (it == namespaces.end()) {
      auto& [name, record] = *s.namespace_hours.try_emplace(p.pod.namespace_).first;
      it = namespaces.emplace(name, NamespaceCounters{&record, &in.day->namespaces[name].total})
               .first;
    }
    const NamespaceCounters& counters = it->second;
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
                            LedgerView& view, const NamespaceLabels& namespace_labels,
                            const std::vector<attribution::Pod>* attributed) {
  RecordGpuHoursOf(
      [&](const CardSink& sink) {
        for (size_t ci = 0; ci < cards.size(); ++ci)
          sink(cards[ci], ci < prices.size() ? prices[ci] : std::nullopt);
      },
      currency, now, in_cluster, view, namespace_labels, attributed);
}

void Ledger::RecordGpuHoursOf(const std::function<void(const CardSink&)>& cards,
                              const std::string& currency, double now, const PodUids* in_cluster,
                              LedgerView& view, const NamespaceLabels& namespace_labels,
                              const std::vector<attribution::Pod>* attributed) {
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
  CyclePass pass(s, order_.cards, order_.records);
  std::string card_key;
  NamespacesSeen namespaces;
  cards([&](const accounting::CardAccount& c, const std::optional<double>& price) {
    if (in.day == nullptr) in.day = &s.days[DayOf(now)];  // a cycle with a card has a day
    if (price) view.card_prices.push_back({c.node, c.gpu, c.uuid, c.model, *price});
    const bool card_seen = pass.cards.Meet(CardKey(c, card_key));
    AccrueCard(s, c, card_seen, price, in, pass, namespaces);
  });
  if (in.day) RecordDayLabels(*in.day, namespace_labels);
  KeepDays(s.days, DayOf(now), params_.retention_days);
  DropDepartedPods(s.pod_hours, pass.claimed, in_cluster);
  order_.records = std::move(pass.records);  // every one claimed: none was dropped
  // Records are sorted by namespace first: one lookup per namespace, not per pod.
  const std::string* last_namespace = nullptr;
  for (const auto& [id, rec] : s.pod_hours)
    if (last_namespace == nullptr || *last_namespace != id.namespace_) {
      s.namespace_hours[id.namespace_].last_seen_unix = now;
      last_namespace = &id.namespace_;
    }
  ForgetStale(s.namespace_hours, now, params_.namespace_retention_seconds);
  ForgetStale(s.node_idle, now, params_.namespace_retention_seconds);
  pass.cards.Finish();
  s.last_unix = now;

  view.currency = s.currency;
  ViewPods(s.pod_hours, attributed, view);
  for (const auto& [name, r] : s.namespace_hours)
    view.namespace_gpu_hours.push_back(View(r.total, name));
  for (const auto& [name, r] : s.node_idle) view.node_idle_gpu_hours.push_back(View(r.total, name));
  view.costs = SummarizeDays(s, DayOf(now));
}

}  // namespace gpuattr::ledger
