// `gpuattr --once --output json` and /snapshot.json: the StatusView as one JSON object. The
// schema is documented field by field in docs/snapshot.md; unknown numbers are null, never 0.
#include <nlohmann/json.hpp>

#include "gpuattr/build_info.h"
#include "gpuattr/report/outputs.h"
#include "gpuattr/report/text_format.h"

namespace gpuattr::report {
namespace {

using nlohmann::ordered_json;

ordered_json Opt(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(); }

ordered_json Resources(const allocation::ResourceCounts& counts) {
  ordered_json j = ordered_json::object();
  for (const auto& [name, n] : counts) j[name] = n;
  return j;
}

ordered_json Pod(const PodRow& r) {
  const attribution::Pod& p = *r.pod;
  ordered_json j;
  j["cluster"] = r.cluster;
  j["namespace"] = p.id.namespace_;
  j["pod"] = p.id.name;
  j["node"] = p.node;
  j["devices"] = p.devices;
  j["gpu_equivalents"] = p.gpu_equivalents;
  j["utilization_ratio"] = Opt(p.utilization);
  j["memory_used_bytes"] = Opt(p.memory_used_bytes);
  j["memory_total_bytes"] = Opt(p.memory_total_bytes);
  j["power_watts"] = Opt(p.power_watts);
  j["idle"] = p.idle ? ordered_json(*p.idle) : ordered_json();
  j["idle_seconds"] = Opt(r.idle_seconds);
  j["energy_joules"] = Opt(r.energy_joules);
  j["attribution"] = std::string(attribution::MethodName(p.method));
  j["unrequested_gpu_use"] = p.unrequested_gpu_use;
  return j;
}

ordered_json Device(const DeviceRow& r) {
  const attribution::Device& d = *r.device;
  ordered_json candidates = ordered_json::array();
  for (const kube::PodId& p : d.candidate_pods) candidates.push_back(p.Text());
  ordered_json j;
  j["gpu_instance"] = d.id.gpu_instance ? ordered_json(*d.id.gpu_instance) : ordered_json();
  j["mig_profile"] = d.mig_profile;
  j["gpu_equivalents"] = d.gpu_equivalents;
  j["utilization_ratio"] = Opt(d.utilization);
  j["memory_used_bytes"] = Opt(d.memory_used_bytes);
  j["memory_total_bytes"] = Opt(d.memory_total_bytes);
  j["power_watts"] = Opt(d.power_watts);
  j["temperature_celsius"] = Opt(d.temperature_celsius);
  j["pods"] = r.pods;
  j["candidate_pods"] = std::move(candidates);
  return j;
}

ordered_json Issues(const std::vector<health::Issue>& issues) {
  ordered_json a = ordered_json::array();
  for (const health::Issue& i : issues)
    a.push_back({{"issue", i.name},
                 {"severity", std::string(health::SeverityName(i.severity))},
                 {"detail", i.detail},
                 {"text", i.text}});
  return a;
}

ordered_json TotalsJson(const Totals& t) {
  return {{"clusters", t.clusters},
          {"clusters_up", t.clusters_up},
          {"nodes", t.nodes},
          {"cards", t.cards},
          {"devices", t.devices},
          {"gpu_equivalents_in_use", t.gpu_equivalents_in_use},
          {"power_watts", Opt(t.power_watts)},
          {"attributed_power_watts", Opt(t.attributed_power_watts)},
          {"memory_used_bytes", Opt(t.memory_used_bytes)},
          {"gpu_pods", t.gpu_pods},
          {"idle_pods", t.idle_pods},
          {"idle_memory_bytes", Opt(t.idle_memory_bytes)},
          {"pending_pods", t.pending_pods},
          {"cards_by_health",
           {{"critical", t.cards_critical},
            {"warning", t.cards_warning},
            {"ok", t.cards_ok},
            {"unknown", t.cards_unknown}}}};
}

ordered_json Clusters(const StatusView& v) {
  ordered_json clusters = ordered_json::array();
  for (const ClusterRow& c : v.clusters)
    clusters.push_back({{"cluster", c.cluster},
                        {"state", c.state},
                        {"last_success_unix", Opt(c.last_success_unix)},
                        {"last_attempt_unix", Opt(c.last_attempt_unix)},
                        {"data_age_seconds", Opt(c.data_age_seconds)},
                        {"cycle_duration_seconds", Opt(c.cycle_duration_seconds)},
                        {"cycles", c.cycles},
                        {"errors", c.errors},
                        {"notes", c.notes}});
  return clusters;
}

ordered_json Namespaces(const StatusView& v) {
  ordered_json namespaces = ordered_json::array();
  for (const NamespaceRow& n : v.namespaces)
    namespaces.push_back(
        {{"cluster", n.cluster},
         {"namespace", n.name},
         {"gpu_equivalents", n.gpu_equivalents},
         {"devices_in_use", n.devices_in_use},
         {"requested_devices", n.requested_devices},
         {"requested", Resources(n.requested)},
         {"utilization_ratio", Opt(n.utilization)},
         {"memory_used_bytes", Opt(n.memory_used_bytes)},
         {"memory_idle_bytes", Opt(n.memory_idle_bytes)},
         {"power_watts", Opt(n.power_watts)},
         {"energy_24h_joules", Opt(n.energy_24h_joules)},
         {"energy_window_seconds",
          n.energy_24h_joules ? ordered_json(n.energy_window_seconds) : ordered_json()},
         {"gpu_pods", n.gpu_pods},
         {"idle_pods", n.idle_pods},
         {"pending_pods", n.pending_pods}});
  return namespaces;
}

ordered_json Pods(const std::vector<PodRow>& rows) {
  ordered_json a = ordered_json::array();
  for (const PodRow& p : rows) a.push_back(Pod(p));
  return a;
}

ordered_json PodRefs(const std::vector<PodRow>& rows) {
  ordered_json a = ordered_json::array();
  for (const PodRow& p : rows)
    a.push_back(
        {{"cluster", p.cluster}, {"namespace", p.pod->id.namespace_}, {"pod", p.pod->id.name}});
  return a;
}

ordered_json Card(const CardRow& c) {
  ordered_json devices = ordered_json::array();
  for (const DeviceRow& d : c.devices) devices.push_back(Device(d));
  return {{"gpu", c.card->gpu},
          {"uuid", c.card->uuid},
          {"model", c.card->model},
          {"mig", c.mig},
          {"mig_slices", c.slices},
          {"health", std::string(health::StateName(c.health))},
          {"power_watts", Opt(c.card->power_watts)},
          {"utilization_ratio", Opt(c.utilization)},
          {"memory_used_bytes", Opt(c.memory_used_bytes)},
          {"memory_total_bytes", Opt(c.memory_total_bytes)},
          {"temperature_celsius", Opt(c.temperature_celsius)},
          {"devices", std::move(devices)}};
}

ordered_json Nodes(const StatusView& v) {
  ordered_json nodes = ordered_json::array();
  for (const NodeRow& n : v.nodes) {
    ordered_json cards = ordered_json::array();
    for (const CardRow& c : n.cards) cards.push_back(Card(c));
    nodes.push_back(
        {{"cluster", n.cluster},
         {"node", n.node},
         {"health", std::string(health::StateName(n.health))},
         {"power_watts", Opt(n.power_watts)},
         {"unattributed_power_watts", Opt(n.unattributed_power_watts)},
         {"devices_capacity", n.capacity ? ordered_json(*n.capacity) : ordered_json()},
         {"devices_allocatable", n.allocatable ? ordered_json(*n.allocatable) : ordered_json()},
         {"devices_requested", n.requested},
         {"cards", std::move(cards)}});
  }
  return nodes;
}

ordered_json Health(const StatusView& v) {
  ordered_json health = ordered_json::array();
  for (const HealthRow& r : v.health)
    health.push_back({{"cluster", r.cluster},
                      {"node", r.node},
                      {"gpu", r.gpu.empty() ? ordered_json() : ordered_json(r.gpu)},
                      {"model", r.model},
                      {"mig_slices", r.slices},
                      {"state", std::string(health::StateName(r.state))},
                      {"issues", Issues(r.issues)},
                      {"reasons", r.reasons}});
  return health;
}

ordered_json Pending(const StatusView& v) {
  ordered_json pending = ordered_json::array();
  for (const PendingRow& r : v.pending) {
    const allocation::PendingPod& p = *r.pending;
    pending.push_back({{"cluster", r.cluster},
                       {"namespace", p.pod.namespace_},
                       {"pod", p.pod.name},
                       {"pending_seconds", Opt(p.age_seconds)},
                       {"requested", Resources(p.requested)},
                       {"hint",
                        {{"code", p.hint.code},
                         {"resource", p.hint.resource},
                         {"message", p.hint.message},
                         {"text", p.hint.text}}}});
  }
  return pending;
}

ordered_json Exporters(const StatusView& v) {
  ordered_json exporters = ordered_json::array();
  for (const ExporterRow& r : v.exporters) {
    const discovery::ExporterStatus& e = *r.status;
    exporters.push_back({{"cluster", r.cluster},
                         {"namespace", e.namespace_},
                         {"pod", e.pod},
                         {"node", e.node},
                         {"kind", e.kind},
                         {"up", e.up},
                         {"reason", e.reason},
                         {"scrape_duration_seconds", e.duration_seconds},
                         {"scrape_bytes", e.bytes},
                         {"parse_errors", e.parse_errors}});
  }
  return exporters;
}

ordered_json Probes(const StatusView& v) {
  ordered_json probes = ordered_json::array();
  for (const ProbeRow& p : v.probes)
    probes.push_back({{"cluster", p.cluster},
                      {"candidate", p.candidate},
                      {"node", p.probe->candidate.node},
                      {"outcome", p.outcome},
                      {"reason", p.probe->verdict.reason}});
  return probes;
}

ordered_json OptText(const std::string& s) { return s.empty() ? ordered_json() : ordered_json(s); }

// "today", "last_7_days", "last_30_days".
std::string WindowKey(int days) {
  return days == 1 ? "today" : "last_" + std::to_string(days) + "_days";
}

// Per window: GPU-hours per basis and their cost (null when none of its hours was priced).
ordered_json Windows(const StatusView& v, const ledger::CostWindows& windows) {
  ordered_json j = ordered_json::object();
  for (size_t w = 0; w < windows.size(); ++w) {
    ordered_json hours = ordered_json::object(), cost = ordered_json::object();
    for (accounting::Basis basis : v.costs.bases) {
      const std::string name(accounting::BasisName(basis));
      hours[name] = At(windows[w].hours, basis);
      if (windows[w].cost) cost[name] = At(*windows[w].cost, basis);
    }
    j[WindowKey(ledger::kCostWindowDays[w])] = {
        {"gpu_hours", std::move(hours)},
        {"cost", windows[w].cost ? std::move(cost) : ordered_json()}};
  }
  return j;
}

ordered_json Costs(const StatusView& v) {
  const CostsView& c = v.costs;
  ordered_json windows = ordered_json::array(), bases = ordered_json::array();
  for (int days : ledger::kCostWindowDays)
    windows.push_back({{"name", WindowKey(days)},
                       {"days", days},
                       {"from", DayText(c.today - days + 1)},
                       {"to", DayText(c.today)}});
  for (accounting::Basis b : c.bases) bases.push_back(std::string(accounting::BasisName(b)));
  ordered_json namespaces = ordered_json::array(), teams = ordered_json::array(),
               idle = ordered_json::array(), cards = ordered_json::array(),
               unpriced = ordered_json::array();
  for (const CostRow& r : c.namespaces)
    namespaces.push_back({{"cluster", r.cluster},
                          {"namespace", r.name},
                          {"team", r.team ? ordered_json(*r.team) : ordered_json()},
                          {"windows", Windows(v, r.windows)}});
  for (const CostRow& r : c.teams)
    teams.push_back({{"cluster", r.cluster},
                     {"team", r.name},
                     {"namespaces", r.namespaces},
                     {"windows", Windows(v, r.windows)}});
  for (const CostRow& r : c.idle)
    idle.push_back({{"cluster", r.cluster}, {"windows", Windows(v, r.windows)}});
  for (const CostRow& r : c.cards)
    cards.push_back({{"cluster", r.cluster}, {"windows", Windows(v, r.windows)}});
  for (const UnpricedCardRow& u : c.unpriced_cards)
    unpriced.push_back({{"cluster", u.cluster},
                        {"node", u.card->node},
                        {"gpu", u.card->gpu},
                        {"uuid", u.card->uuid},
                        {"model", u.card->model}});
  return {{"currency", OptText(c.currency)},
          {"today", c.cards.empty() ? ordered_json() : ordered_json(DayText(c.today))},
          {"windows", std::move(windows)},
          {"bases", std::move(bases)},
          {"team_label", OptText(c.team_label)},
          {"namespaces", std::move(namespaces)},
          {"teams", std::move(teams)},
          {"idle", std::move(idle)},
          {"cards", std::move(cards)},
          {"priced_cards", c.priced_cards},
          {"unpriced_cards", std::move(unpriced)}};
}

ordered_json Rightsizing(const StatusView& v) {
  ordered_json workloads = ordered_json::array();
  for (const RightsizingRow& r : v.rightsizing) {
    const rightsizing::WorkloadView& w = *r.workload;
    const rightsizing::Recommendation& rec = w.recommendation;
    workloads.push_back(
        {{"cluster", r.cluster},
         {"namespace", w.id.namespace_},
         {"workload_kind", w.id.kind},
         {"workload", w.id.name},
         {"pods", w.pods},
         {"current", rec.current},
         {"recommended", rec.recommended},
         {"reason", std::string(rightsizing::ReasonName(rec.reason))},
         {"current_share", rec.current_share},
         {"recommended_share", rec.recommended_share},
         {"memory_peak_bytes", Opt(w.memory_peak_bytes)},
         {"utilization_p95_ratio", Opt(w.utilization_p95)},
         {"observed_seconds", w.observed_seconds},
         {"gpu_equivalents", w.gpu_equivalents},
         {"reclaimable_gpu_equivalents", w.reclaimable_gpu_equivalents},
         {"reclaimable_cost_per_hour", Opt(w.reclaimable_cost_per_hour)},
         {"currency", w.reclaimable_cost_per_hour ? OptText(r.currency) : ordered_json()}});
  }
  const RightsizingTotals& t = v.rightsizing_totals;
  return {{"totals",
           {{"workloads", t.workloads},
            {"reclaimable_gpu_equivalents", t.reclaimable_gpu_equivalents},
            {"reclaimable_cost_per_hour", Opt(t.reclaimable_cost_per_hour)},
            {"currency", OptText(t.currency)}}},
          {"workloads", std::move(workloads)}};
}

}  // namespace

std::string RenderSnapshotJson(const StatusView& v) {
  ordered_json root;
  root["schema_version"] = kSnapshotSchemaVersion;
  root["generated_unix"] = v.generated_unix;
  root["gpuattr"] = {{"version", build::kVersion}, {"revision", build::kRevision}};
  root["complete"] = v.complete;
  root["totals"] = TotalsJson(v.totals);
  root["clusters"] = Clusters(v);
  root["namespaces"] = Namespaces(v);
  root["idle_pods"] = Pods(v.idle);
  root["top_pods"] = {{"by_power", PodRefs(v.top_by_power)},
                      {"by_memory", PodRefs(v.top_by_memory)}};
  root["pods"] = Pods(v.pods);
  root["nodes"] = Nodes(v);
  root["health"] = Health(v);
  root["pending_pods"] = Pending(v);
  root["exporters"] = Exporters(v);
  root["probes"] = Probes(v);
  root["costs"] = Costs(v);
  root["rightsizing"] = Rightsizing(v);
  // Names come from Kubernetes and exporters; replace invalid UTF-8 rather than throw.
  return root.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace gpuattr::report
