// `gpuattr --once --output json` and /snapshot.json: the StatusView as one JSON object. The
// schema is documented field by field in docs/snapshot.md; unknown numbers are null, never 0.
#include <nlohmann/json.hpp>

#include "gpuattr/build_info.h"
#include "gpuattr/publish/outputs.h"

namespace gpuattr::publish {
namespace {

using nlohmann::ordered_json;

ordered_json Opt(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(); }

ordered_json Resources(const allocation::ResourceCounts& counts) {
  ordered_json j = ordered_json::object();
  for (const auto& [name, n] : counts) j[name] = n;
  return j;
}

ordered_json Pod(const PodRow& p) {
  ordered_json j;
  j["cluster"] = p.cluster;
  j["namespace"] = p.pod.namespace_;
  j["pod"] = p.pod.name;
  j["node"] = p.node;
  j["devices"] = p.devices;
  j["gpu_equivalents"] = p.gpu_equivalents;
  j["utilization_ratio"] = Opt(p.utilization);
  j["memory_used_bytes"] = Opt(p.memory_used_bytes);
  j["memory_total_bytes"] = Opt(p.memory_total_bytes);
  j["power_watts"] = Opt(p.power_watts);
  j["idle"] = p.idle ? ordered_json(*p.idle) : ordered_json();
  j["idle_seconds"] = Opt(p.idle_seconds);
  j["energy_joules"] = Opt(p.energy_joules);
  j["attribution"] = p.method;
  j["unrequested_gpu_use"] = p.unrequested_gpu_use;
  return j;
}

ordered_json Device(const DeviceRow& d) {
  ordered_json j;
  j["gpu_instance"] = d.gpu_instance ? ordered_json(*d.gpu_instance) : ordered_json();
  j["mig_profile"] = d.mig_profile;
  j["gpu_equivalents"] = d.gpu_equivalents;
  j["utilization_ratio"] = Opt(d.utilization);
  j["memory_used_bytes"] = Opt(d.memory_used_bytes);
  j["memory_total_bytes"] = Opt(d.memory_total_bytes);
  j["power_watts"] = Opt(d.power_watts);
  j["temperature_celsius"] = Opt(d.temperature_celsius);
  j["pods"] = d.pods;
  j["candidate_pods"] = d.candidates;
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

}  // namespace

std::string RenderSnapshotJson(const StatusView& v) {
  ordered_json root;
  root["schema_version"] = kSnapshotSchemaVersion;
  root["generated_unix"] = v.generated_unix;
  root["gpuattr"] = {{"version", build::kVersion}, {"revision", build::kRevision}};
  root["complete"] = v.complete;

  const Totals& t = v.totals;
  root["totals"] = {{"clusters", t.clusters},
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
  root["clusters"] = std::move(clusters);

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
  root["namespaces"] = std::move(namespaces);

  auto pods = [](const std::vector<PodRow>& rows) {
    ordered_json a = ordered_json::array();
    for (const PodRow& p : rows) a.push_back(Pod(p));
    return a;
  };
  root["idle_pods"] = pods(v.idle);
  auto refs = [](const std::vector<PodRow>& rows) {
    ordered_json a = ordered_json::array();
    for (const PodRow& p : rows)
      a.push_back({{"cluster", p.cluster}, {"namespace", p.pod.namespace_}, {"pod", p.pod.name}});
    return a;
  };
  root["top_pods"] = {{"by_power", refs(v.top_by_power)}, {"by_memory", refs(v.top_by_memory)}};
  root["pods"] = pods(v.pods);

  ordered_json nodes = ordered_json::array();
  for (const NodeRow& n : v.nodes) {
    ordered_json cards = ordered_json::array();
    for (const CardRow& c : n.cards) {
      ordered_json devices = ordered_json::array();
      for (const DeviceRow& d : c.devices) devices.push_back(Device(d));
      cards.push_back({{"gpu", c.gpu},
                       {"uuid", c.uuid},
                       {"model", c.model},
                       {"mig", c.mig},
                       {"mig_slices", c.slices},
                       {"health", std::string(health::StateName(c.health))},
                       {"power_watts", Opt(c.power_watts)},
                       {"utilization_ratio", Opt(c.utilization)},
                       {"memory_used_bytes", Opt(c.memory_used_bytes)},
                       {"memory_total_bytes", Opt(c.memory_total_bytes)},
                       {"temperature_celsius", Opt(c.temperature_celsius)},
                       {"devices", std::move(devices)}});
    }
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
  root["nodes"] = std::move(nodes);

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
  root["health"] = std::move(health);

  ordered_json pending = ordered_json::array();
  for (const PendingRow& p : v.pending)
    pending.push_back({{"cluster", p.cluster},
                       {"namespace", p.pod.namespace_},
                       {"pod", p.pod.name},
                       {"pending_seconds", Opt(p.age_seconds)},
                       {"requested", Resources(p.requested)},
                       {"hint",
                        {{"code", p.hint.code},
                         {"resource", p.hint.resource},
                         {"message", p.hint.message},
                         {"text", p.hint.text}}}});
  root["pending_pods"] = std::move(pending);

  ordered_json exporters = ordered_json::array();
  for (const ExporterRow& e : v.exporters)
    exporters.push_back({{"cluster", e.cluster},
                         {"namespace", e.namespace_},
                         {"pod", e.pod},
                         {"node", e.node},
                         {"kind", e.kind},
                         {"up", e.up},
                         {"reason", e.reason},
                         {"scrape_duration_seconds", e.duration_seconds},
                         {"scrape_bytes", e.bytes},
                         {"parse_errors", e.parse_errors}});
  root["exporters"] = std::move(exporters);
  ordered_json probes = ordered_json::array();
  for (const ProbeRow& p : v.probes)
    probes.push_back({{"cluster", p.cluster},
                      {"candidate", p.candidate},
                      {"node", p.node},
                      {"outcome", p.outcome},
                      {"reason", p.reason}});
  root["probes"] = std::move(probes);
  // Names come from Kubernetes and exporters; replace invalid UTF-8 rather than throw.
  return root.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace gpuattr::publish
