// GPU-hours counters of one cluster (docs/accounting.md#counters): each successful cycle's card
// shares over the interval since the previous successful cycle, for the cards and pods that
// cycle saw too. Pods that leave keep what they accrued in their namespace, as energy does.
#include <algorithm>

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

}  // namespace

void Ledger::RecordGpuHours(const std::vector<accounting::CardAccount>& cards,
                            const std::vector<std::optional<double>>& prices,
                            const std::string& currency, double now, const PodUids* in_cluster,
                            LedgerView& view) {
  AccountingState& s = state_.accounting;
  const bool accrue =
      s.last_unix && now > *s.last_unix && now - *s.last_unix <= params_.max_gap_seconds;
  const double hours = accrue ? (now - *s.last_unix) / 3600 : 0;
  if (!currency.empty() && s.currency != currency) {
    // Costs in another currency are not converted: the cost counters start again.
    for (auto& [id, r] : s.pod_hours) r.total.cost = {}, r.total.priced = false;
    for (auto& [n, r] : s.namespace_hours) r.total.cost = {}, r.total.priced = false;
    for (auto& [n, r] : s.node_idle) r.total.cost = {}, r.total.priced = false;
    s.currency = currency;
  }
  std::set<std::string> cards_now, pods_now;
  std::map<kube::PodId, PodHoursRecord> pods;
  for (size_t ci = 0; ci < cards.size(); ++ci) {
    const accounting::CardAccount& c = cards[ci];
    const std::optional<double> price = ci < prices.size() ? prices[ci] : std::nullopt;
    const bool card_accrues = accrue && s.cards.count(CardKey(c)) > 0;
    if (price) view.card_prices.push_back({c.node, c.gpu, c.uuid, c.model, *price});
    cards_now.insert(CardKey(c));
    PerBasis idle = c.idle;
    for (const accounting::PodAccount& p : c.pods) {
      pods_now.insert(PodKey(p));
      PodHoursRecord& rec = ContinuePod(pods, s.pod_hours, p, c.node);
      NamespaceHoursRecord& ns = s.namespace_hours[p.pod.namespace_];
      ns.last_seen_unix = now;
      if (card_accrues && s.pods.count(PodKey(p))) {
        Accrue(rec.total, p.value, hours, price);
        Accrue(ns.total, p.value, hours, price);
      } else {  // new on this card's interval: that part was nobody's
        for (size_t b = 0; b < kBases; ++b) idle[b] += p.value[b];
        if (price) rec.total.priced = ns.total.priced = true;
      }
    }
    NodeIdleRecord& node = s.node_idle[c.node];
    node.last_seen_unix = now;
    if (card_accrues)
      Accrue(node.total, idle, hours, price);
    else if (price)
      node.total.priced = true;
  }
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
}

}  // namespace gpuattr::ledger
