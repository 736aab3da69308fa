// A snapshot that exercises every family of the table: two clusters, one with every group's data
// (devices, pods, namespaces, node power, allocation, inference, ledger, rightsizing, health,
// discovery and self-metrics), the other down with a name that needs escaping. For metrics and
// report tests.
#pragma once

#include <memory>

#include "golden/allocation_harness.h"
#include "golden/attribution_harness.h"
#include "gpuattr/accounting/accounting.h"
#include "gpuattr/discovery/report.h"
#include "gpuattr/inference/inference.h"
#include "gpuattr/ledger/ledger.h"
#include "gpuattr/model/snapshot.h"
#include "support/snapshots.h"

namespace gpuattr::testing {

inline model::Snapshot RichSnapshot() {
  model::Snapshot s;
  s.complete = true;
  s.config_reload = model::ConfigReload{true, 1764460000};
  s.http_refusals = {{"bad_request", 3}, {"evicted", 1}, {"unauthorized", 0}};
  model::ClusterSnapshot a;
  a.cluster = "kind-gpu";
  a.latest.up = true;
  a.cycles = 3;
  a.cycle_duration_seconds = 0.25;
  a.interval_seconds = 20;
  a.last_success_unix_seconds = 1764460800;
  a.last_attempt_unix_seconds = 1764460800;
  a.latest.apiserver_requests[{"list", "pods", "200"}] = 2;
  a.latest.apiserver_requests[{"watch", "pods", "200"}] = 1;
  a.latest.apiserver_requests[{"get", "pods/proxy", "error"}] = 4;
  auto report = std::make_shared<discovery::DiscoveryReport>();
  report->cluster = a.cluster;
  report->exporters.push_back({"gpu-operator",
                               "dcgm-exporter-x",
                               "gpu-node-1",
                               9400,
                               "dcgm",
                               true,
                               200,
                               "",
                               0.05,
                               60000,
                               0,
                               {{"bad_value", 0}, {"unknown_pod", 2}}});
  report->outcome_counts = {{"accepted", 1}, {"unrecognised", 0}, {"error", 0}, {"pinned", 0}};
  report->read_path = "exporters";
  report->read_path_reason = "below_threshold";
  a.latest.discovery = report;
  model::CycleOutput& out = MutableOutput(a);
  const model::CycleOutput rich = RichOutput(a.cluster);
  out.attribution = rich.attribution;
  out.pod_identities = rich.pod_identities;
  out.node_health = rich.node_health;
  auto inference = std::make_shared<inference::InferenceView>();
  inference->cluster = a.cluster;
  inference::Server server;  // every inference value known
  server.key = {"ml", "vllm-0", "vllm", "llama"};
  server.kv_cache_usage = server.requests_running = server.requests_waiting = 1;
  server.rates = {1000, 3000, 0.3, 0.1, 0};
  server.saturated = true;
  server.generation_tokens_per_joule = 4;
  inference->servers.push_back(server);
  out.inference = *inference;
  out.allocation = RichAllocation(out.attribution);
  ledger::Ledger ledger;
  out.ledger = ledger.Record(out.attribution, 1e9);
  // GPU-hours with every card priced, so that the cost families and card prices are exercised.
  const kube::ClusterObjects no_objects;
  const std::vector<accounting::CardAccount> cards =
      accounting::ShareCards({out.attribution, out.allocation, no_objects});
  ledger.RecordGpuHours(cards, std::vector<std::optional<double>>(cards.size(), 2.5), "USD", 1e9,
                        nullptr, out.ledger, {}, &out.attribution.pods);
  rightsizing::WorkloadView workload;  // every rightsizing value known
  workload.id = {"ml", "Deployment", "chat"};
  workload.recommendation = {"whole", "1g.20gb", rightsizing::Reason::kFitsSmaller, 1, 1.0 / 7};
  workload.pods = 2;
  workload.memory_peak_bytes = 12e9;
  workload.utilization_p95 = 0.1;
  workload.observed_seconds = 86400;
  workload.gpu_equivalents = 2;
  workload.reclaimable_gpu_equivalents = 12.0 / 7;
  workload.reclaimable_cost_per_hour = 12.0 / 7 * 2.5;  // its cards at 2.5 per GPU-hour
  out.rightsizing.workloads.push_back(workload);
  out.namespace_labels = {{"etl", {}}, {"ml", {{"example.com/owner", "ana"}, {"team", "vision"}}}};
  out.rightsizing.currency = "USD";
  model::ClusterSnapshot b;
  b.cluster = "prod \"eu\"";  // label values are escaped by the serializer
  b.latest.up = false;
  b.cycles = 1;
  b.cycle_duration_seconds = 15;
  b.latest.errors = {"connect: connection refused"};
  s.clusters = {a, b};
  return s;
}

}  // namespace gpuattr::testing
