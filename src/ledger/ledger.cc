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

// The namespace has a pod holding a counter at `now` (its retention counts from the last such).
void TouchNamespace(LedgerState& state, const std::string& ns, double now) {
  NamespaceRecord& n = state.namespaces[ns];
  n.last_seen_unix = std::max(n.last_seen_unix, now);
}

// Idle continues the previous run (unless a gap broke it) or starts one; busy ends it; unknown
// leaves it as it was.
void ContinueIdleRun(const std::optional<bool>& idle, const PodRecord* prev, double now,
                     double max_gap, PodRecord& rec) {
  if (idle == true) {
    const bool keep = prev && prev->idle_since_unix && *prev->idle_since_unix <= now &&
                      WithinGap(prev->last_idle_unix, now, max_gap);
    rec.idle_since_unix = keep ? *prev->idle_since_unix : now;
    rec.last_idle_unix = now;
  } else if (!idle && prev) {  // unknown: the run neither grows nor ends
    rec.idle_since_unix = prev->idle_since_unix;
    rec.last_idle_unix = prev->last_idle_unix;
  }
}

// Integrates a known power since the last known one (trapezoid, within max_gap) into the pod's
// counter; returns the joules accrued, if any.
std::optional<double> AccruePower(const std::optional<double>& power, double now, double max_gap,
                                  PodRecord& rec) {
  if (!power) return std::nullopt;
  std::optional<double> accrued;
  if (!rec.joules) rec.joules = 0;
  if (rec.last_power_watts && rec.last_power_unix && now > *rec.last_power_unix &&
      now - *rec.last_power_unix <= max_gap) {
    accrued = (*rec.last_power_watts + *power) / 2 * (now - *rec.last_power_unix);
    *rec.joules += *accrued;
  }
  rec.last_power_watts = power;
  rec.last_power_unix = now;
  return accrued;
}

// An attributed pod's record after this cycle, continuing its last one when it is the same pod;
// what it accrued goes to its namespace too.
PodRecord RecordPod(LedgerState& state, const attribution::Pod& p, const std::string& uid,
                    double now, double max_gap) {
  auto old = state.pods.find(p.id);
  const PodRecord* prev = nullptr;
  if (old != state.pods.end() && SamePod(old->second, p.node, uid)) prev = &old->second;

  PodRecord rec;
  rec.node = p.node;
  rec.uid = !uid.empty() ? uid : prev ? prev->uid : std::string();
  ContinueIdleRun(p.idle, prev, now, max_gap, rec);
  if (prev) {
    rec.joules = prev->joules;
    rec.last_power_watts = prev->last_power_watts;
    rec.last_power_unix = prev->last_power_unix;
  }
  if (std::optional<double> joules = AccruePower(p.power_watts, now, max_gap, rec))
    state.namespaces[p.id.namespace_].joules += *joules;
  if (rec.joules) TouchNamespace(state, p.id.namespace_, now);
  return rec;
}

// The view's row of attribution.pods[k] (named by its index).
AttributedPodLedger AttributedPodView(size_t k, const attribution::Pod& p, const PodRecord& rec,
                                      double now) {
  AttributedPodLedger out;
  out.pod = static_cast<uint32_t>(k);
  if (p.idle) {
    out.idle_known = true;
    out.idle = *p.idle;
    out.idle_seconds = rec.idle_since_unix ? now - *rec.idle_since_unix : 0.0;
  }
  if (rec.joules) {
    out.energy_known = true;
    out.energy_joules = *rec.joules;
  }
  return out;
}

// Pods still in the cluster (the same UID) but not attributed this cycle are unknown: their
// record stays as it was (idle run, counter, last power). The others left: dropped, their
// joules stay in the namespace.
void KeepUnattributedPods(LedgerState& state, const PodUids& in_cluster, double now,
                          std::map<kube::PodId, PodRecord>& pods, std::vector<PodLedger>& view) {
  for (auto& [id, old] : state.pods) {
    if (pods.count(id)) continue;
    auto now_there = in_cluster.find(id);
    if (now_there == in_cluster.end() ||
        (!old.uid.empty() && !now_there->second.empty() && old.uid != now_there->second))
      continue;
    if (old.joules) {
      TouchNamespace(state, id.namespace_, now);
      view.push_back(PodLedger{id, old.node, std::nullopt, std::nullopt, old.joules});
    }
    PodRecord kept = old;
    if (kept.uid.empty()) kept.uid = now_there->second;
    pods.emplace(id, std::move(kept));
  }
}

void ForgetStaleNamespaces(std::map<std::string, NamespaceRecord>& namespaces, double now,
                           double retention) {
  for (auto it = namespaces.begin(); it != namespaces.end();) {
    if (now - it->second.last_seen_unix > retention)
      it = namespaces.erase(it);
    else
      ++it;
  }
}

// Every namespace's counter and its energy over the last 24 h (its marks updated first).
std::vector<NamespaceLedger> NamespaceViews(std::map<std::string, NamespaceRecord>& namespaces,
                                            double now, double mark_every) {
  std::vector<NamespaceLedger> out;
  for (auto& [name, ns] : namespaces) {
    UpdateMarks(ns, now, mark_every);
    NamespaceLedger view{name, ns.joules};
    Energy24h(ns, now, view);
    out.push_back(std::move(view));
  }
  return out;
}

}  // namespace

Ledger::Ledger(LedgerParams params, LedgerState initial)
    : params_(params), state_(std::move(initial)) {}

LedgerView Ledger::Record(const attribution::Attribution& a, double now,
                          const PodUids* in_cluster) {
  LedgerView view;
  view.cluster = a.cluster;
  view.recorded_unix = now;
  std::map<kube::PodId, PodRecord> pods;
  view.attributed_pods.reserve(a.pods.size());
  for (size_t k = 0; k < a.pods.size(); ++k) {
    const attribution::Pod& p = a.pods[k];
    PodRecord rec = RecordPod(state_, p, UidOf(in_cluster, p.id), now, params_.max_gap_seconds);
    view.attributed_pods.push_back(AttributedPodView(k, p, rec, now));
    pods.emplace(p.id, std::move(rec));
  }
  // Kept pods come in the state's order (by id); attributed ones in the attribution's, which is
  // by id too unless a caller built it otherwise.
  if (in_cluster) KeepUnattributedPods(state_, *in_cluster, now, pods, view.other_pods);
  const auto by_id = [&](const AttributedPodLedger& x, const AttributedPodLedger& y) {
    return a.pods[x.pod].id < a.pods[y.pod].id;
  };
  if (!std::is_sorted(view.attributed_pods.begin(), view.attributed_pods.end(), by_id))
    std::sort(view.attributed_pods.begin(), view.attributed_pods.end(), by_id);
  state_.pods = std::move(pods);
  ForgetStaleNamespaces(state_.namespaces, now, params_.namespace_retention_seconds);
  view.namespaces = NamespaceViews(state_.namespaces, now, params_.energy_mark_seconds);
  state_.last_cycle_unix = now;
  return view;
}

}  // namespace gpuattr::ledger
