// Idle runs and energy counters of one cluster; the rules are in ledger.h and docs/ledger.md.
#include "gpuattr/ledger/ledger.h"

#include <algorithm>
#include <utility>

namespace gpuattr::ledger {
namespace {

constexpr double kDay = 86400;

// One mark per `every` seconds, back to the last one at or before 24 h ago (the left end of the
// interpolation); marks from the future (the clock went backwards) are dropped.
void UpdateMarks(NamespaceRecord& ns, double now, double every) {
  std::vector<EnergyMark>& m = ns.marks;
  while (!m.empty() && m.back().unix > now) m.pop_back();
  if (m.empty() || now - m.back().unix >= every) m.push_back({now, ns.joules});
  while (m.size() >= 2 && m[1].unix <= now - kDay) m.erase(m.begin());
}

// The counter now minus the counter 24 h ago (interpolated between the marks around it), or minus
// the oldest mark when the history is shorter. `m` is not empty (UpdateMarks ran).
void Energy24h(const NamespaceRecord& ns, double now, NamespaceLedger& out) {
  const std::vector<EnergyMark>& m = ns.marks;
  const double from = now - kDay;
  double base = m.front().joules;
  out.energy_window_seconds = now - m.front().unix;
  if (m.size() >= 2 && m[0].unix <= from && m[1].unix > m[0].unix) {
    const double f = (from - m[0].unix) / (m[1].unix - m[0].unix);
    base = m[0].joules + (m[1].joules - m[0].joules) * f;
    out.energy_window_seconds = kDay;
  }
  out.energy_24h_joules = std::max(0.0, ns.joules - base);
}

}  // namespace

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
  for (auto& [name, ns] : state_.namespaces) {
    UpdateMarks(ns, now, params_.energy_mark_seconds);
    NamespaceLedger out{name, ns.joules};
    Energy24h(ns, now, out);
    view.namespaces.push_back(std::move(out));
  }
  state_.last_cycle_unix = now;
  return view;
}

}  // namespace gpuattr::ledger
