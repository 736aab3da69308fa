// Snapshot → StatusView (view.h): the rows every human-facing output renders. Pure.
#include "gpuattr/report/view.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "gpuattr/accounting/teams.h"
#include "gpuattr/allocation/resources.h"

namespace gpuattr::report {
namespace {

void AddTo(std::optional<double>& sum, const std::optional<double>& v) {
  if (v) sum = sum.value_or(0) + *v;
}

// Descending by an optional number (unknown last), then ascending by key.
template <typename Row, typename Num, typename Key>
void SortDesc(std::vector<Row>& rows, Num num, Key key) {
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    const std::optional<double> x = num(a), y = num(b);
    if (x.has_value() != y.has_value()) return x.has_value();
    if (x && y && *x != *y) return *x > *y;
    return key(a) < key(b);
  });
}

ClusterRow MakeClusterRow(const model::ClusterSnapshot& c, double now) {
  ClusterRow r;
  r.cluster = c.cluster;
  r.state = c.cycles == 0 ? "pending" : (c.latest.up ? "up" : "down");
  r.last_success_unix = c.last_success_unix_seconds;
  r.last_attempt_unix = c.last_attempt_unix_seconds;
  if (c.last_success_unix_seconds)
    r.data_age_seconds = std::max(0.0, now - *c.last_success_unix_seconds);
  if (c.cycles) r.cycle_duration_seconds = c.cycle_duration_seconds;
  r.cycles = c.cycles;
  r.errors = c.latest.errors;
  r.notes = c.latest.notes;
  // Node shapes gpuattr counts only as their resources say (docs/design.md#node-shapes).
  if (c.latest.output)
    for (const std::string& n : c.latest.output->allocation.shape_notes) r.notes.push_back(n);
  return r;
}

void AddNamespaces(const std::string& cluster, const model::CycleOutput& out, StatusView& v) {
  std::map<std::string, NamespaceRow> rows;
  auto row = [&](const std::string& name) -> NamespaceRow& {
    NamespaceRow& r = rows[name];
    r.cluster = cluster;
    r.name = name;
    return r;
  };
  for (const attribution::Namespace& n : out.attribution.namespaces) {
    NamespaceRow& r = row(n.name);
    r.gpu_equivalents = n.gpu_equivalents;
    r.devices_in_use = n.devices_in_use;
    r.utilization = n.utilization;
    r.memory_used_bytes = n.memory_used_bytes;
    r.memory_idle_bytes = n.memory_idle_bytes;
    r.power_watts = n.power_watts;
    r.gpu_pods = n.gpu_pods;
    r.idle_pods = n.idle_pods;
  }
  for (const allocation::NamespaceAllocation& n : out.allocation.namespaces) {
    NamespaceRow& r = row(n.name);
    // `requested` names every resource as Kubernetes does (replicas too); the two sums never mix.
    r.requested = n.requested;
    r.requested.insert(n.replicas.begin(), n.replicas.end());
    r.requested_devices = 0;
    for (const auto& [resource, count] : n.requested) r.requested_devices += count;
    for (const auto& [resource, count] : n.replicas) r.requested_replicas += count;
    r.pending_pods = n.pending_pods;
  }
  // Energy only for namespaces that use or want GPUs now (the ledger also keeps those that left).
  for (const ledger::NamespaceLedger& n : out.ledger.namespaces) {
    auto it = rows.find(n.name);
    if (it == rows.end()) continue;
    it->second.energy_24h_joules = n.energy_24h_joules;
    it->second.energy_window_seconds = n.energy_window_seconds;
  }
  for (auto& [name, r] : rows) v.namespaces.push_back(std::move(r));
}

void AddPods(const std::string& cluster, const model::CycleOutput& out, StatusView& v) {
  // The ledger's row of each pod by id; its names live in `out` (attribution.pods or the view).
  struct LedgerRow {
    const std::string* node;
    std::optional<double> idle_seconds, energy_joules;
  };
  std::map<std::reference_wrapper<const kube::PodId>, LedgerRow, std::less<kube::PodId>> rows;
  ledger::ForEachPodLedger(out.ledger, out.attribution.pods, [&](const ledger::PodLedgerRef& l) {
    rows.insert_or_assign(std::cref(l.id), LedgerRow{&l.node, l.idle_seconds, l.energy_joules});
  });
  for (const attribution::Pod& p : out.attribution.pods) {
    PodRow r{cluster, &p, std::nullopt, std::nullopt};
    if (auto it = rows.find(p.id); it != rows.end() && *it->second.node == p.node) {
      r.idle_seconds = it->second.idle_seconds;
      r.energy_joules = it->second.energy_joules;
    }
    v.pods.push_back(std::move(r));
  }
}

// Instances sort as numbers ("2" before "10"), then as text.
bool InstanceLess(const DeviceRow& a, const DeviceRow& b) {
  const std::string x = a.device->id.gpu_instance.value_or("");
  const std::string y = b.device->id.gpu_instance.value_or("");
  return std::make_tuple(x.size(), x) < std::make_tuple(y.size(), y);
}

bool GpuLess(const std::string& a, const std::string& b) {
  return std::make_tuple(a.size(), a) < std::make_tuple(b.size(), b);
}

// A card and its devices (a whole GPU, or its MIG slices by instance), with the card's sums.
CardRow MakeCardRow(const attribution::Attribution& a, const attribution::Card& c,
                    const std::vector<std::vector<std::string>>& device_pods) {
  CardRow card;
  card.card = &c;
  std::optional<double> util_weighted, weight;
  for (size_t i : c.devices) {
    if (i >= a.devices.size()) continue;
    const attribution::Device& d = a.devices[i];
    card.devices.push_back({&d, device_pods[i]});
    card.mig |= d.id.gpu_instance.has_value();
    card.slices += d.id.gpu_instance.has_value();
    card.health = d.health.state;  // slices share their card's health
    AddTo(card.memory_used_bytes, d.memory_used_bytes);
    AddTo(card.memory_total_bytes, d.memory_total_bytes);
    if (d.utilization) {
      AddTo(util_weighted, *d.utilization * d.gpu_equivalents);
      AddTo(weight, d.gpu_equivalents);
    }
    if (d.temperature_celsius)
      card.temperature_celsius =
          std::max(card.temperature_celsius.value_or(-1e9), *d.temperature_celsius);
  }
  if (util_weighted && weight && *weight > 0) card.utilization = *util_weighted / *weight;
  std::sort(card.devices.begin(), card.devices.end(), InstanceLess);
  return card;
}

void AddNodes(const std::string& cluster, const model::CycleOutput& out, StatusView& v) {
  const attribution::Attribution& a = out.attribution;
  std::vector<std::vector<std::string>> device_pods(a.devices.size());
  for (const attribution::PodDevice& pd : a.pod_devices)
    if (pd.device < device_pods.size()) device_pods[pd.device].push_back(pd.pod.Text());

  std::map<std::string, NodeRow> nodes;
  auto node = [&](const std::string& name) -> NodeRow& {
    NodeRow& n = nodes[name];
    n.cluster = cluster;
    n.node = name;
    return n;
  };
  for (const attribution::NodePower& n : a.nodes) {
    NodeRow& r = node(n.node);
    r.power_watts = n.power_watts;
    r.unattributed_power_watts = n.unattributed_power_watts;
  }
  for (const allocation::NodeAllocation& n : out.allocation.nodes) {
    NodeRow& r = node(n.node);
    r.capacity = n.capacity;
    r.allocatable = n.allocatable;
    r.requested = n.requested;
  }
  for (const health::NodeHealth& n : out.node_health) node(n.node).health = n.state;
  for (const attribution::Card& c : a.cards)
    node(c.node).cards.push_back(MakeCardRow(a, c, device_pods));
  for (auto& [name, n] : nodes) {
    std::sort(n.cards.begin(), n.cards.end(),
              [](const CardRow& x, const CardRow& y) { return GpuLess(x.card->gpu, y.card->gpu); });
    v.nodes.push_back(std::move(n));
  }
}

void AddHealth(const std::string& cluster, const model::CycleOutput& out, StatusView& v) {
  const attribution::Attribution& a = out.attribution;
  for (const health::NodeHealth& n : out.node_health) {
    // A node line only for what no card line says: withdrawn devices, the reasons written as
    // "nvidia.com/gpu: capacity 8, allocatable 7" (health::WithdrawnGpuResources).
    std::vector<std::string> reasons;
    for (const std::string& r : n.reasons)
      if (r.find(": capacity ") != std::string::npos) reasons.push_back(r);
    if (reasons.empty()) continue;
    HealthRow h;
    h.cluster = cluster;
    h.node = n.node;
    h.state = n.state;
    h.reasons = std::move(reasons);
    v.health.push_back(std::move(h));
  }
  for (const attribution::Card& c : a.cards) {
    HealthRow h;
    h.cluster = cluster;
    h.node = c.node;
    h.gpu = c.gpu;
    h.model = c.model;
    std::set<health::Issue> issues;
    for (size_t i : c.devices) {
      if (i >= a.devices.size()) continue;
      const attribution::Device& d = a.devices[i];
      if (d.id.gpu_instance) ++h.slices;
      h.state = d.health.state;
      issues.insert(d.health.issues.begin(), d.health.issues.end());
    }
    switch (h.state) {
      case health::State::kCritical:
        ++v.totals.cards_critical;
        break;
      case health::State::kWarning:
        ++v.totals.cards_warning;
        break;
      case health::State::kOk:
        ++v.totals.cards_ok;
        break;
      case health::State::kUnknown:
        ++v.totals.cards_unknown;
        break;
    }
    if (issues.empty()) continue;
    h.issues.assign(issues.begin(), issues.end());
    std::stable_sort(h.issues.begin(), h.issues.end(),
                     [](const health::Issue& x, const health::Issue& y) {
                       return x.severity == health::Severity::kCritical &&
                              y.severity != health::Severity::kCritical;
                     });
    v.health.push_back(std::move(h));
  }
}

int StateRank(health::State s) {
  switch (s) {
    case health::State::kCritical:
      return 0;
    case health::State::kWarning:
      return 1;
    case health::State::kUnknown:
      return 2;
    case health::State::kOk:
      return 3;
  }
  return 4;
}

void AddPending(const std::string& cluster, const model::CycleOutput& out, StatusView& v) {
  for (const allocation::PendingPod& p : out.allocation.pending) v.pending.push_back({cluster, &p});
}

void AddDiscovery(const std::string& cluster, const discovery::DiscoveryReport& r, StatusView& v) {
  DiscoveryRow d{cluster,         &r, v.exporters.size(), r.exporters.size(), 0, v.probes.size(),
                 r.probes.size(), 0};
  for (const discovery::ExporterStatus& e : r.exporters) {
    uint64_t rejected = 0;
    for (const auto& [reason, n] : e.rejected) rejected += n;
    v.exporters.push_back({cluster, &e, rejected});
    d.exporters_up += e.up;
  }
  for (const discovery::ProbeRecord& p : r.probes)
    v.probes.push_back(
        {cluster, &p, p.candidate.Key(), std::string(discovery::OutcomeName(p.verdict.outcome))});
  if (auto it = r.outcome_counts.find("untrusted"); it != r.outcome_counts.end())
    d.untrusted = it->second;
  v.discovery.push_back(std::move(d));
}

void AddTotals(StatusView& v) {
  Totals& t = v.totals;
  t.clusters = v.clusters.size();
  for (const ClusterRow& c : v.clusters) t.clusters_up += c.state == "up";
  for (const NodeRow& n : v.nodes) {
    ++t.nodes;
    t.cards += n.cards.size();
    for (const CardRow& c : n.cards) {
      t.devices += c.devices.size();
      AddTo(t.power_watts, c.card->power_watts);
    }
  }
  for (const NamespaceRow& n : v.namespaces) {
    t.gpu_equivalents_in_use += n.gpu_equivalents;
    t.gpu_pods += n.gpu_pods;
    t.pending_pods += n.pending_pods;
  }
  for (const PodRow& p : v.pods) {
    AddTo(t.attributed_power_watts, p.pod->power_watts);
    AddTo(t.memory_used_bytes, p.pod->memory_used_bytes);
  }
  t.idle_pods = v.idle.size();
  for (const PodRow& p : v.idle) AddTo(t.idle_memory_bytes, p.pod->memory_used_bytes);
}

std::string PodKey(const PodRow& p) { return p.cluster + "\n" + p.pod->id.Text(); }

// The idle holders and the top pods by power and memory, from every pod.
void ListPods(StatusView& v, const ViewOptions& options) {
  for (const PodRow& p : v.pods)
    if (p.pod->idle.value_or(false)) v.idle.push_back(p);
  SortDesc(
      v.idle, [](const PodRow& p) { return p.pod->memory_used_bytes; },
      [](const PodRow& p) { return std::make_tuple(-p.idle_seconds.value_or(0), PodKey(p)); });
  for (const PodRow& p : v.pods) {
    if (p.pod->power_watts) v.top_by_power.push_back(p);
    if (p.pod->memory_used_bytes) v.top_by_memory.push_back(p);
  }
  SortDesc(
      v.top_by_power, [](const PodRow& p) { return p.pod->power_watts; }, PodKey);
  SortDesc(
      v.top_by_memory, [](const PodRow& p) { return p.pod->memory_used_bytes; }, PodKey);
  if (v.top_by_power.size() > options.top_pods) v.top_by_power.resize(options.top_pods);
  if (v.top_by_memory.size() > options.top_pods) v.top_by_memory.resize(options.top_pods);
}

// "What it costs" of one cluster: its namespaces, teams, idle and cards from the ledger's summary,
// and the cards no price rule matched.
void AddCosts(const std::string& cluster, const model::CycleOutput& out, StatusView& v) {
  const ledger::LedgerView& l = out.ledger;
  const ledger::CostSummary& s = l.costs;
  CostsView& c = v.costs;
  if (c.currency.empty()) c.currency = l.currency;
  if (c.bases.empty()) c.bases = l.bases;
  if (c.today == 0) c.today = s.today;
  const std::string team_label = s.namespace_labels.empty() ? "" : s.namespace_labels.front();
  if (c.team_label.empty()) c.team_label = team_label;
  std::map<std::string, CostRow> teams;
  bool any_team = false;
  for (const ledger::NamespaceCost& n : s.namespaces) {
    CostRow row{cluster, n.name, std::nullopt, {}, n.windows};
    if (!team_label.empty()) {
      const std::string team = accounting::TeamOf(n.labels, team_label);
      if (team != accounting::kNoTeam) {
        row.team = team;
        any_team = true;
      }
      CostRow& t = teams[team];
      t.namespaces.push_back(n.name);  // the summary lists namespaces by name
      for (size_t w = 0; w < t.windows.size(); ++w) {
        ledger::WindowHours& into = t.windows[w];
        const ledger::WindowHours& add = n.windows[w];
        for (size_t b = 0; b < accounting::kBases; ++b) into.hours[b] += add.hours[b];
        if (add.cost) {
          if (!into.cost) into.cost = accounting::PerBasis{};
          for (size_t b = 0; b < accounting::kBases; ++b) (*into.cost)[b] += (*add.cost)[b];
        }
      }
    }
    c.namespaces.push_back(std::move(row));
  }
  if (any_team) {
    for (auto& [name, t] : teams) {
      t.cluster = cluster;
      t.name = name;
      if (name != accounting::kNoTeam) c.teams.push_back(std::move(t));
    }
    if (auto it = teams.find(std::string(accounting::kNoTeam)); it != teams.end())
      c.teams.push_back(std::move(it->second));
  }
  c.idle.push_back({cluster, "idle", std::nullopt, {}, s.idle});
  c.cards.push_back({cluster, "all cards", std::nullopt, {}, s.cards});
  std::set<std::pair<std::string_view, std::string_view>> priced;
  for (const ledger::CardPriceView& p : l.card_prices) priced.emplace(p.node, p.gpu);
  for (const attribution::Card& card : out.attribution.cards) {
    if (priced.count({card.node, card.gpu}))
      ++c.priced_cards;
    else
      c.unpriced_cards.push_back({cluster, &card});
  }
}

void AddRightsizing(const std::string& cluster, const model::CycleOutput& out, StatusView& v) {
  for (const rightsizing::WorkloadView& w : out.rightsizing.workloads)
    v.rightsizing.push_back({cluster, &w, out.rightsizing.currency});
}

// The namespaces by their hours over the longest window, and the rightsizing rows by what can be
// reclaimed; the totals of those.
void SortCostsAndRightsizing(StatusView& v) {
  const size_t basis = v.costs.bases.empty() ? 0 : static_cast<size_t>(v.costs.bases.front());
  SortDesc(
      v.costs.namespaces,
      [&](const CostRow& r) { return std::optional<double>(r.windows.back().hours[basis]); },
      [](const CostRow& r) { return std::make_tuple(r.cluster, r.name); });
  std::stable_sort(v.rightsizing.begin(), v.rightsizing.end(),
                   [](const RightsizingRow& a, const RightsizingRow& b) {
                     const double x = a.workload->reclaimable_gpu_equivalents;
                     const double y = b.workload->reclaimable_gpu_equivalents;
                     if (x != y) return x > y;
                     return std::tie(a.workload->id.namespace_, a.workload->id.kind,
                                     a.workload->id.name, a.cluster) <
                            std::tie(b.workload->id.namespace_, b.workload->id.kind,
                                     b.workload->id.name, b.cluster);
                   });
  RightsizingTotals& t = v.rightsizing_totals;
  t.workloads = v.rightsizing.size();
  for (const RightsizingRow& r : v.rightsizing) {
    t.reclaimable_gpu_equivalents += r.workload->reclaimable_gpu_equivalents;
    AddTo(t.reclaimable_cost_per_hour, r.workload->reclaimable_cost_per_hour);
    if (r.workload->reclaimable_cost_per_hour && t.currency.empty()) t.currency = r.currency;
  }
}

}  // namespace

StatusView BuildStatusView(const model::Snapshot& s, double now, const ViewOptions& options) {
  StatusView v;
  v.generated_unix = now;
  v.complete = s.complete;
  v.refresh_seconds = options.refresh_seconds;
  v.metrics_path = options.metrics_path;
  v.multi_cluster = s.clusters.size() > 1;
  for (const model::ClusterSnapshot& c : s.clusters) {
    v.clusters.push_back(MakeClusterRow(c, now));
    if (c.latest.discovery) {
      v.reports.push_back(c.latest.discovery);
      AddDiscovery(c.cluster, *c.latest.discovery, v);
    }
    if (!c.latest.output) continue;
    v.outputs.push_back(c.latest.output);
    const model::CycleOutput& out = *c.latest.output;
    AddNamespaces(c.cluster, out, v);
    AddPods(c.cluster, out, v);
    AddNodes(c.cluster, out, v);
    AddHealth(c.cluster, out, v);
    AddPending(c.cluster, out, v);
    AddCosts(c.cluster, out, v);
    AddRightsizing(c.cluster, out, v);
  }

  SortDesc(
      v.namespaces, [](const NamespaceRow& n) { return std::optional<double>(n.gpu_equivalents); },
      [](const NamespaceRow& n) {
        return std::make_tuple(-n.power_watts.value_or(0), n.cluster, n.name);
      });
  ListPods(v, options);
  std::stable_sort(v.health.begin(), v.health.end(), [](const HealthRow& a, const HealthRow& b) {
    if (StateRank(a.state) != StateRank(b.state)) return StateRank(a.state) < StateRank(b.state);
    if (a.cluster != b.cluster) return a.cluster < b.cluster;
    if (a.node != b.node) return a.node < b.node;
    return GpuLess(a.gpu, b.gpu);
  });
  SortCostsAndRightsizing(v);
  AddTotals(v);
  return v;
}

StatusView BuildDiscoveryView(const discovery::DiscoveryReport& report, double now) {
  StatusView v;
  v.generated_unix = now;
  AddDiscovery(report.cluster, report, v);
  return v;
}

}  // namespace gpuattr::report
