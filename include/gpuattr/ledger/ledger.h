// The ledger: what persists across cycles of one cluster — idle runs and energy counters
// (docs/design.md#idle and docs/design.md#metrics). Stateful, no I/O: the session feeds it each
// successful cycle's attribution with the cycle's time, and saves state() to the state file
// (state_file.h).
//
// Rules (docs/ledger.md):
// - Idle run: starts at the first cycle that finds the pod idle; idle_seconds = now − start. A
//   cycle that finds the pod busy ends it. A cycle that cannot tell (its idleness unknown, or the
//   pod missing from the attribution because its exporter did not answer) is *unknown*: it
//   neither extends nor ends the run. The next idle observation continues the run when it comes
//   within max_gap_seconds of the previous idle observation (and the clock did not go back);
//   after a longer gap nobody watched the pod meanwhile, and the run starts again.
// - Energy: pod joules += (P_last + P_now) / 2 × Δt (trapezoid), where P_last is the pod's last
//   known power and Δt the time since it was measured, when 0 < Δt ≤ max_gap_seconds; otherwise
//   the interval adds nothing (power during a long gap is unknown, and no joules are invented).
//   An unknown cycle keeps the last known power, so a blip costs no energy. A pod's counter
//   starts at 0 the first cycle its power is known. Namespace joules = Σ of what its pods
//   accrued, including pods that left, so it never goes down; it is forgotten after
//   namespace_retention_seconds without a pod holding a counter.
// - Identity: namespace, name, UID and node. Pods gone from the cluster are dropped (their
//   joules stay in the namespace); a pod still in the cluster but missing from this cycle's
//   attribution keeps its record unchanged. A pod recreated under the same name (another UID)
//   or seen on another node is a new pod.
// - Energy over the last 24 h: every namespace keeps a mark (time, counter) per hour, back to just
//   before 24 h ago. energy_24h = counter now − the counter 24 h ago, interpolated between the two
//   marks around it; with less history, counter now − the oldest mark, over a shorter window
//   (energy_window_seconds says how long). Marks newer than now (a clock that went backwards) are
//   dropped.
// Only successful cycles are recorded: a failed cycle changes nothing here.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuattr/accounting/teams.h"
#include "gpuattr/attribution/types.h"
#include "gpuattr/ledger/state.h"

namespace gpuattr::ledger {

struct LedgerParams {
  double max_gap_seconds = 300;                    // longer gaps integrate nothing
  double namespace_retention_seconds = 7 * 86400;  // drop counters of namespaces gone this long
  double energy_mark_seconds = 3600;               // one energy mark per namespace this often
  int retention_days = 400;  // daily GPU-hour totals kept (accounting.retention_days)
  // accounting.namespace_labels, recorded in the state file for the report's --group-by team.
  std::vector<std::string> namespace_labels{"team"};
};

// A pod's idle run and energy counter with its names: a pod kept but not attributed this cycle
// (LedgerView::other_pods).
struct PodLedger {
  kube::PodId id;
  std::string node;
  std::optional<bool> idle;             // as the attribution said; absent when unknown
  std::optional<double> idle_seconds;   // current idle run; 0 when busy; absent when unknown
  std::optional<double> energy_joules;  // absent until the pod's power was known once
};

// The same for a pod attributed this cycle (LedgerView::attributed_pods), named by the cycle's
// own attribution: its namespace, name and node are those of attribution.pods[pod] (16,000 pods
// at 1,000 nodes, and two views alive at once: docs/performance.md). Flags instead of optionals
// keep it at 24 bytes: they fill the index's padding.
struct AttributedPodLedger {
  uint32_t pod = 0;           // index into the cycle's attribution.pods
  bool idle_known = false;    // idle and idle_seconds are known (attribution.pods[pod].idle is)
  bool idle = false;          // as the attribution said
  bool energy_known = false;  // the pod's power was known once
  double idle_seconds = 0;    // current idle run; 0 when busy
  double energy_joules = 0;
};

// One pod's row as a reader sees it (ForEachPodLedger).
struct PodLedgerRef {
  const kube::PodId& id;
  const std::string& node;
  std::optional<bool> idle;
  std::optional<double> idle_seconds;
  std::optional<double> energy_joules;
};

struct NamespaceLedger {
  std::string name;
  double energy_joules = 0;
  double energy_24h_joules = 0;      // over the last energy_window_seconds (≤ 24 h)
  double energy_window_seconds = 0;  // 86400, or less while the ledger is younger than that
};

// GPU-hours counters (docs/accounting.md) of a pod, a namespace or a node's idle.
struct GpuHoursView {
  kube::PodId pod;   // pods only
  std::string name;  // the namespace or the node; for a pod its node
  accounting::PerBasis hours{};
  std::optional<accounting::PerBasis> cost;  // absent when none of its hours was ever priced
};

// A pod's GPU-hours counters named by the cycle's own attribution (LedgerView::pod_hours): its
// namespace, name and node are those of attribution.pods[pod], not a copy of them (16,000 pods at
// 1,000 nodes, and two views alive at once: docs/performance.md). An index, not a pointer: a
// CycleOutput may be copied.
struct AttributedPodHours {
  uint32_t pod = 0;     // index into the cycle's attribution.pods
  bool priced = false;  // its cost is LedgerView::pod_costs at the same index
  accounting::PerBasis hours{};
};

// One pod's counters as a reader sees them (ForEachPodHours).
struct PodHoursRef {
  const kube::PodId& pod;
  const std::string& node;  // the node it accrued on
  const accounting::PerBasis& hours;
  const accounting::PerBasis* cost;  // null when none of its hours was ever priced
};

// A priced card and its price per GPU-hour (gpuattr_card_price_per_hour).
struct CardPriceView {
  std::string node;
  std::string gpu;
  std::string uuid;
  std::string model;
  double per_gpu_hour = 0;
};

// GPU-hours and their cost over a window of UTC days (docs/accounting.md#on-the-status-page).
struct WindowHours {
  accounting::PerBasis hours{};
  std::optional<accounting::PerBasis> cost;  // absent when none of its hours was priced
};

// The windows of the cost summary, in days ending today (UTC, today included): today, the last 7
// days and the last 30 days.
inline constexpr std::array<int, 3> kCostWindowDays = {1, 7, 30};
using CostWindows = std::array<WindowHours, kCostWindowDays.size()>;

struct NamespaceCost {
  std::string name;
  // Its labels named in accounting.namespace_labels, as the latest day of the windows recorded.
  std::map<std::string, std::string> labels;
  CostWindows windows{};
};

// The daily totals summed over the windows, once per cycle (SummarizeDays, daily.h): the outputs
// read this instead of the days themselves.
struct CostSummary {
  UtcDay today = 0;
  std::vector<NamespaceCost> namespaces;  // by name: those with a day in the longest window
  CostWindows idle{};                     // every node's idle
  CostWindows cards{};                    // the cards' own hours (the same on every basis)
  // accounting.namespace_labels as recorded; the first one names a namespace's team.
  std::vector<std::string> namespace_labels;
};

// What to publish for one cluster after a successful cycle.
struct LedgerView {
  std::string cluster;
  double recorded_unix = 0;  // the cycle's time
  // The pods' idle runs and energy, in two lists sorted by pod (read both with
  // ForEachPodLedger): the pods attributed this cycle, by index into the attribution the ledger
  // recorded (Ledger::Record), and the pods still in the cluster but not attributed this cycle,
  // with their names.
  std::vector<AttributedPodLedger> attributed_pods;
  std::vector<PodLedger> other_pods;
  std::vector<NamespaceLedger> namespaces;  // sorted by name
  // The pods' counters, in two lists sorted by pod (read both with ForEachPodHours): those of
  // the pods attributed this cycle on the node of their record, by index into the attribution
  // given to the ledger (Ledger::RecordGpuHoursOf), and the others (a pod still in the cluster
  // whose card was not read this cycle, or every pod when no attribution was given) with their
  // names.
  std::vector<AttributedPodHours> pod_hours;
  std::vector<accounting::PerBasis> pod_costs;  // parallel to pod_hours; empty when none priced
  std::vector<GpuHoursView> other_pod_hours;
  std::vector<GpuHoursView> namespace_gpu_hours;  // sorted by name
  std::vector<GpuHoursView> node_idle_gpu_hours;  // sorted by node
  std::string currency;                           // of the cost counters
  std::vector<CardPriceView> card_prices;         // this cycle's priced cards, in card order
  CostSummary costs;                              // today, last 7 and 30 days
  // The bases published (accounting.bases); the counters keep all three.
  std::vector<accounting::Basis> bases{accounting::kAllBases.begin(), accounting::kAllBases.end()};
};

namespace detail {
// Visits two lists sorted by pod in one pod order: the `indexed` rows name their pod by `.pod`, an
// index into `pods` (a row whose index is not in `pods` is skipped), the `named` ones by
// id_of(row). on_indexed(i, pods[indexed[i].pod]) and on_named(row) are called in turn.
template <typename Indexed, typename Named, typename IdOf, typename OnIndexed, typename OnNamed>
void MergeInPodOrder(const std::vector<Indexed>& indexed, const std::vector<Named>& named,
                     const std::vector<attribution::Pod>& pods, IdOf&& id_of,
                     OnIndexed&& on_indexed, OnNamed&& on_named) {
  size_t i = 0, j = 0;
  while (i < indexed.size() || j < named.size()) {
    if (i < indexed.size() && indexed[i].pod >= pods.size()) {
      ++i;
      continue;
    }
    if (i < indexed.size() && (j == named.size() || pods[indexed[i].pod].id < id_of(named[j]))) {
      on_indexed(i, pods[indexed[i].pod]);
      ++i;
    } else {
      on_named(named[j++]);
    }
  }
}
}  // namespace detail

// Calls fn(const PodHoursRef&) for every pod's counters of `v` in pod order, `pods` being the
// attribution the view was made with (the CycleOutput's own). A row whose index is not in `pods`
// (a view paired with another attribution) is skipped.
template <typename Fn>
void ForEachPodHours(const LedgerView& v, const std::vector<attribution::Pod>& pods, Fn&& fn) {
  detail::MergeInPodOrder(
      v.pod_hours, v.other_pod_hours, pods,
      [](const GpuHoursView& r) -> const kube::PodId& { return r.pod; },
      [&](size_t i, const attribution::Pod& p) {
        const AttributedPodHours& a = v.pod_hours[i];
        fn(PodHoursRef{p.id, p.node, a.hours, a.priced ? &v.pod_costs[i] : nullptr});
      },
      [&](const GpuHoursView& r) {
        fn(PodHoursRef{r.pod, r.name, r.hours, r.cost ? &*r.cost : nullptr});
      });
}

// Calls fn(const PodLedgerRef&) for every pod's idle run and energy of `v` in pod order, `pods`
// being the attribution the view was recorded from (the CycleOutput's own). A row whose index is
// not in `pods` (a view paired with another attribution) is skipped.
template <typename Fn>
void ForEachPodLedger(const LedgerView& v, const std::vector<attribution::Pod>& pods, Fn&& fn) {
  detail::MergeInPodOrder(
      v.attributed_pods, v.other_pods, pods,
      [](const PodLedger& r) -> const kube::PodId& { return r.id; },
      [&](size_t i, const attribution::Pod& p) {
        const AttributedPodLedger& r = v.attributed_pods[i];
        fn(PodLedgerRef{p.id, p.node, r.idle_known ? std::optional<bool>(r.idle) : std::nullopt,
                        r.idle_known ? std::optional<double>(r.idle_seconds) : std::nullopt,
                        r.energy_known ? std::optional<double>(r.energy_joules) : std::nullopt});
      },
      [&](const PodLedger& r) {
        fn(PodLedgerRef{r.id, r.node, r.idle, r.idle_seconds, r.energy_joules});
      });
}

// The pods that exist in the cluster now, with their UIDs (empty when unknown).
using PodUids = std::map<kube::PodId, std::string>;

// namespace → its labels named in accounting.namespace_labels (empty map: not known this cycle).
using NamespaceLabels = accounting::NamespaceLabels;  // accounting/teams.h

class Ledger {
 public:
  explicit Ledger(LedgerParams params = {}, LedgerState initial = {});

  // Records one successful cycle at `now_unix` (wall-clock seconds, so it survives restarts).
  // `in_cluster`: the pods that exist in the cluster now and their UIDs; null means exactly the
  // attributed ones, UIDs unknown. The view's rows of attributed pods are indices into
  // `attribution.pods`: read them with that attribution (ForEachPodLedger).
  LedgerView Record(const attribution::Attribution& attribution, double now_unix,
                    const PodUids* in_cluster = nullptr);

  // GPU-hours (docs/accounting.md#counters): adds one successful cycle's shares of every card
  // (accounting::ShareCards) over the interval since the previous successful cycle, priced at
  // `prices` (per GPU-hour, parallel to `cards`; absent or missing = unpriced) in `currency`, and
  // fills the accounting part of `view`. A card or pod the previous cycle did not see accrues from
  // this cycle on (its part of the interval goes to idle, or to nothing for a new card).
  // The same hours go to the daily totals (docs/accounting.md#daily-totals) of the UTC day of
  // `now_unix`, with each namespace's `namespace_labels` as seen now; days older than
  // retention_days are dropped.
  // `attributed`: this cycle's attribution.pods (sorted by id, one per id), whose names the view's
  // pod rows then refer to rather than copy (LedgerView::pod_hours); null: every row is named.
  void RecordGpuHours(const std::vector<accounting::CardAccount>& cards,
                      const std::vector<std::optional<double>>& prices, const std::string& currency,
                      double now_unix, const PodUids* in_cluster, LedgerView& view,
                      const NamespaceLabels& namespace_labels = {},
                      const std::vector<attribution::Pod>* attributed = nullptr);
  // The same with the cards handed over one at a time: `cards` calls its sink once per card with
  // the card's price (absent: unpriced), and the card may be a buffer reused for the next one
  // (accounting::ForEachCardShare: no cycle's copy of every card exists).
  using CardSink =
      std::function<void(const accounting::CardAccount& card, const std::optional<double>& price)>;
  void RecordGpuHoursOf(const std::function<void(const CardSink&)>& cards,
                        const std::string& currency, double now_unix, const PodUids* in_cluster,
                        LedgerView& view, const NamespaceLabels& namespace_labels = {},
                        const std::vector<attribution::Pod>* attributed = nullptr);
  // A failed cycle: nothing accrues over it; the next successful cycle starts a new interval.
  void BreakInterval() { state_.accounting.last_unix.reset(); }

  const LedgerState& state() const { return state_; }
  const LedgerParams& params() const { return params_; }

 private:
  // The last accounted cycle's cards and pod records in the order it met them, as pointers
  // into state_.accounting (gpu_hours.cc): a cycle that meets them in the same order knows each
  // by one comparison instead of a tree lookup (docs/performance.md). Empty after a restart.
  // A copy of the ledger starts without it (its pointers are into this ledger's state); a move
  // keeps it (the maps' nodes move with the state).
  struct CycleOrder {
    std::vector<const std::string*> cards;
    std::vector<std::pair<const kube::PodId, PodHoursRecord>*> records;
    CycleOrder() = default;
    CycleOrder(const CycleOrder&) {}
    CycleOrder& operator=(const CycleOrder&) {
      cards.clear(), records.clear();
      return *this;
    }
    CycleOrder(CycleOrder&&) = default;
    CycleOrder& operator=(CycleOrder&&) = default;
  };

  LedgerParams params_;
  LedgerState state_;
  CycleOrder order_;
};

}  // namespace gpuattr::ledger
