// Idle runs and energy counters of one cluster; the rules are in ledger.h and docs/ledger.md.
#include "gpuattr/ledger/ledger.h"

#include <algorithm>
#include <utility>

namespace gpuattr::ledger {
namespace {

// Whether `now` follows `then` closely enough to treat the time between as watched.
bool WithinGap(const std::optional<double>& then, double now, double max_gap) {
  return then && now >= *then && now - *then <= max_gap;
}

// The pod's UID as the cluster has it now ("" when unknown).
std::string UidOf(const PodUids* in_cluster, const kube::PodId& id) {
  if (in_cluster == nullptr) return {};
  auto it = in_cluster->find(id);
  return it == in_cluster->end() ? std::string() : it->second;
}

// A record belongs to the same pod when node and UID agree (an unknown UID agrees with any).
bool SamePod(const PodRecord& old, const std::string& node, const std::string& uid) {
  return old.node == node && (old.uid.empty() || uid.empty() || old.uid == uid);
}

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
                          const PodUids* in_cluster) {
  const double max_gap = params_.max_gap_seconds;
  LedgerView view;
  view.cluster = a.cluster;
  view.recorded_unix = now;
  auto touch_namespace = [&](const std::string& ns) {
    NamespaceRecord& n = state_.namespaces[ns];
    n.last_seen_unix = std::max(n.last_seen_unix, now);
  };

  std::map<kube::PodId, PodRecord> pods;
  for (const attribution::Pod& p : a.pods) {
    const std::string uid = UidOf(in_cluster, p.id);
    auto old = state_.pods.find(p.id);
    const PodRecord* prev = nullptr;
    if (old != state_.pods.end() && SamePod(old->second, p.node, uid)) prev = &old->second;

    PodRecord rec;
    rec.node = p.node;
    rec.uid = !uid.empty() ? uid : prev ? prev->uid : std::string();
    if (p.idle == true) {
      const bool keep = prev && prev->idle_since_unix && *prev->idle_since_unix <= now &&
                        WithinGap(prev->last_idle_unix, now, max_gap);
      rec.idle_since_unix = keep ? *prev->idle_since_unix : now;
      rec.last_idle_unix = now;
    } else if (!p.idle && prev) {  // unknown: the run neither grows nor ends
      rec.idle_since_unix = prev->idle_since_unix;
      rec.last_idle_unix = prev->last_idle_unix;
    }
    if (prev) {
      rec.joules = prev->joules;
      rec.last_power_watts = prev->last_power_watts;
      rec.last_power_unix = prev->last_power_unix;
    }
    if (p.power_watts) {
      if (!rec.joules) rec.joules = 0;
      if (rec.last_power_watts && rec.last_power_unix && now > *rec.last_power_unix &&
          now - *rec.last_power_unix <= max_gap) {
        const double joules =
            (*rec.last_power_watts + *p.power_watts) / 2 * (now - *rec.last_power_unix);
        *rec.joules += joules;
        state_.namespaces[p.id.namespace_].joules += joules;
      }
      rec.last_power_watts = p.power_watts;
      rec.last_power_unix = now;
    }
    if (rec.joules) touch_namespace(p.id.namespace_);

    PodLedger out;
    out.id = p.id;
    out.node = p.node;
    out.idle = p.idle;
    if (p.idle) out.idle_seconds = rec.idle_since_unix ? now - *rec.idle_since_unix : 0.0;
    out.energy_joules = rec.joules;
    view.pods.push_back(std::move(out));
    pods.emplace(p.id, std::move(rec));
  }
  // Pods still in the cluster (the same UID) but not attributed this cycle are unknown: their
  // record stays as it was (idle run, counter, last power). The others left: dropped, their
  // joules stay in the namespace.
  if (in_cluster) {
    for (auto& [id, old] : state_.pods) {
      if (pods.count(id)) continue;
      auto now_there = in_cluster->find(id);
      if (now_there == in_cluster->end() ||
          (!old.uid.empty() && !now_there->second.empty() && old.uid != now_there->second))
        continue;
      if (old.joules) {
        touch_namespace(id.namespace_);
        view.pods.push_back(PodLedger{id, old.node, std::nullopt, std::nullopt, old.joules});
      }
      PodRecord kept = old;
      if (kept.uid.empty()) kept.uid = now_there->second;
      pods.emplace(id, std::move(kept));
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
