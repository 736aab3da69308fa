// GPU-hours counters of one cluster (docs/accounting.md#counters): each successful cycle's card
// shares over the interval since the previous successful cycle, for the cards and pods that
// cycle saw too. Pods that leave keep what they accrued in their namespace, as energy does.
#include <algorithm>

#include "gpuattr/ledger/daily.h"
#include "gpuattr/ledger/ledger.h"

namespace gpuattr::ledger {
namespace {

using accounting::kBases;
using accounting::PerBasis;

std::string CardKey(const accounting::CardAccount& c) {
  return c.node + "/" + (c.uuid.empty() ? c.gpu : c.uuid);
}

std::string PodKey(const accounting::PodAccount& p) { return p.uid.empty() ? p.pod.Text() : p.uid; }

// Adds `value` × `hours` GPU-hours (and their cost at `price`, when priced) to `into`.
void Accrue(GpuHours& into, const PerBasis& value, double hours,
            const std::optional<double>& price) {
  for (size_t b = 0; b < kBases; ++b) {
    into.hours[b] += value[b] * hours;
    if (price) into.cost[b] += value[b] * hours * *price;
  }
  if (price) into.priced = true;
}

// The pod's record this cycle: already made (a pod on several cards), continued from the last
// one when it is the same pod (node and UID agree; an unknown UID agrees with any), or new at 0.
PodHoursRecord& ContinuePod(std::map<kube::PodId, PodHoursRecord>& now,
                            const std::map<kube::PodId, PodHoursRecord>& before,
                            const accounting::PodAccount& p, const std::string& node) {
  auto made = now.find(p.pod);
  if (made != now.end()) return made->second;
  PodHoursRecord rec{p.uid, node, {}};
  auto old = before.find(p.pod);
  if (old != before.end() && old->second.node == node &&
      (old->second.uid.empty() || p.uid.empty() || old->second.uid == p.uid)) {
    rec.total = old->second.total;
    if (rec.uid.empty()) rec.uid = old->second.uid;
  }
  return now.emplace(p.pod, std::move(rec)).first->second;
}

// Pods still in the cluster (the same UID) but on no card this cycle keep their record; the
// others left, and what they accrued stays in their namespace.
void KeepPodsStillThere(const std::map<kube::PodId, PodHoursRecord>& before,
                        const PodUids* in_cluster, std::map<kube::PodId, PodHoursRecord>& now) {
  if (in_cluster == nullptr) return;
  for (const auto& [id, old] : before) {
    if (now.count(id)) continue;
    auto there = in_cluster->find(id);
    if (there == in_cluster->end() ||
        (!old.uid.empty() && !there->second.empty() && old.uid != there->second))
      continue;
    now.emplace(id, old);
  }
}

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
void AccrueCard(AccountingState& s, const accounting::CardAccount& c,
                const std::optional<double>& price, const Interval& in,
                std::map<kube::PodId, PodHoursRecord>& pods, std::set<std::string>& pods_now) {
  const bool card_accrues = in.accrues && s.cards.count(CardKey(c)) > 0;
  PerBasis idle = c.idle;
  for (const accounting::PodAccount& p : c.pods) {
    pods_now.insert(PodKey(p));
    PodHoursRecord& rec = ContinuePod(pods, s.pod_hours, p, c.node);
    NamespaceHoursRecord& ns = s.namespace_hours[p.pod.namespace_];
    GpuHours& day = in.day->namespaces[p.pod.namespace_].total;
    ns.last_seen_unix = in.now;
    if (card_accrues && s.pods.count(PodKey(p))) {
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
  std::set<std::string> cards_now, pods_now;
  std::map<kube::PodId, PodHoursRecord> pods;
  for (size_t ci = 0; ci < cards.size(); ++ci) {
    const accounting::CardAccount& c = cards[ci];
    const std::optional<double> price = ci < prices.size() ? prices[ci] : std::nullopt;
    if (price) view.card_prices.push_back({c.node, c.gpu, c.uuid, c.model, *price});
    cards_now.insert(CardKey(c));
    AccrueCard(s, c, price, in, pods, pods_now);
  }
  if (in.day) RecordDayLabels(*in.day, namespace_labels);
  KeepDays(s.days, DayOf(now), params_.retention_days);
  KeepPodsStillThere(s.pod_hours, in_cluster, pods);
  for (const auto& [id, rec] : pods) s.namespace_hours[id.namespace_].last_seen_unix = now;
  s.pod_hours = std::move(pods);
  ForgetStale(s.namespace_hours, now, params_.namespace_retention_seconds);
  ForgetStale(s.node_idle, now, params_.namespace_retention_seconds);
  s.cards = std::move(cards_now);
  s.pods = std::move(pods_now);
  s.last_unix = now;

  view.currency = s.currency;
  for (const auto& [id, r] : s.pod_hours) view.pod_gpu_hours.push_back(View(r.total, r.node, id));
  for (const auto& [name, r] : s.namespace_hours)
    view.namespace_gpu_hours.push_back(View(r.total, name));
  for (const auto& [name, r] : s.node_idle) view.node_idle_gpu_hours.push_back(View(r.total, name));
  view.costs = SummarizeDays(s, DayOf(now));
}

}  // namespace gpuattr::ledger
