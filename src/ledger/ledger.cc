// Idle runs and energy counters of one cluster; the rules are in ledger.h and docs/ledger.md.
#include "gpuattr/ledger/ledger.h"

#include <algorithm>
#include <utility>

namespace gpuattr::ledger {

Ledger::Ledger(LedgerParams params, LedgerState initial)
    : params_(params), state_(std::move(initial)) {}

LedgerView Ledger::Record(const attribution::Attribution& a, double now,
                          const std::set<kube::PodId>* in_cluster) {
  // The interval since the last successful cycle, when it may be integrated over.
  std::optional<double> dt;
  bool continuous = false;  // the previous cycle watched these pods recently enough
  if (state_.last_cycle_unix) {
    const double gap = now - *state_.last_cycle_unix;
    continuous = gap >= 0 && gap <= params_.max_gap_seconds;
    if (continuous && gap > 0) dt = gap;
  }

  LedgerView view;
  view.cluster = a.cluster;
  view.recorded_unix = now;
  std::map<kube::PodId, PodRecord> pods;
  for (const attribution::Pod& p : a.pods) {
    auto old = state_.pods.find(p.id);
    const PodRecord* prev = nullptr;
    if (old != state_.pods.end() && old->second.node == p.node) prev = &old->second;

    PodRecord rec;
    rec.node = p.node;
    if (p.idle.value_or(false)) {
      const bool keep =
          continuous && prev && prev->idle_since_unix && *prev->idle_since_unix <= now;
      rec.idle_since_unix = keep ? *prev->idle_since_unix : now;
    }
    if (prev) rec.joules = prev->joules;
    if (p.power_watts) {
      if (!rec.joules) rec.joules = 0;
      if (dt && prev && prev->last_power_watts) {
        const double joules = (*prev->last_power_watts + *p.power_watts) / 2 * *dt;
        *rec.joules += joules;
        state_.namespaces[p.id.namespace_].joules += joules;
      }
    }
    rec.last_power_watts = p.power_watts;
    if (rec.joules) {
      NamespaceRecord& ns = state_.namespaces[p.id.namespace_];
      ns.last_seen_unix = std::max(ns.last_seen_unix, now);
    }

    PodLedger out;
    out.id = p.id;
    out.node = p.node;
    out.idle = p.idle;
    if (p.idle) out.idle_seconds = rec.idle_since_unix ? now - *rec.idle_since_unix : 0.0;
    out.energy_joules = rec.joules;
    view.pods.push_back(std::move(out));
    pods.emplace(p.id, std::move(rec));
  }
  // Pods still in the cluster but not attributed this cycle keep their counter (no joules for
  // this interval: their power is unknown) and lose their idle run. The others left: dropped,
  // their joules stay in the namespace.
  if (in_cluster) {
    for (auto& [id, old] : state_.pods) {
      if (pods.count(id) || !in_cluster->count(id)) continue;
      PodRecord rec;
      rec.node = old.node;
      rec.joules = old.joules;
      if (rec.joules) {
        NamespaceRecord& ns = state_.namespaces[id.namespace_];
        ns.last_seen_unix = std::max(ns.last_seen_unix, now);
        view.pods.push_back(PodLedger{id, rec.node, std::nullopt, std::nullopt, rec.joules});
      }
      pods.emplace(id, std::move(rec));
    }
  }
  std::sort(view.pods.begin(), view.pods.end(),
            [](const PodLedger& x, const PodLedger& y) { return x.id < y.id; });
  state_.pods = std::move(pods);

  for (auto it = state_.namespaces.begin(); it != state_.namespaces.end();) {
    if (now - it->second.last_seen_unix > params_.namespace_retention_seconds)
      it = state_.namespaces.erase(it);
    else
      ++it;
  }
  for (const auto& [name, ns] : state_.namespaces) view.namespaces.push_back({name, ns.joules});
  state_.last_cycle_unix = now;
  return view;
}

}  // namespace gpuattr::ledger
