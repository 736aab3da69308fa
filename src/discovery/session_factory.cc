#include "gpuattr/discovery/session_factory.h"

#include <algorithm>

#include "gpuattr/kube/http_transport.h"
#include "gpuattr/kube/kubeconfig.h"

namespace gpuattr::discovery {

Pins PinsFromConfig(const std::vector<app::TargetPin>& targets) {
  Pins pins;
  for (const app::TargetPin& t : targets) {
    if (t.kind == app::TargetPin::Kind::kPodPrefix)
      pins.pods.push_back(PodPin{t.namespace_, t.name, t.port, t.text});
    else
      pins.services.push_back(ServicePin{t.namespace_, t.name, std::to_string(t.port), t.text});
  }
  return pins;
}

KubeSessionOptions SessionOptionsFromConfig(const app::Config& config) {
  KubeSessionOptions o;
  o.discovery.pins = PinsFromConfig(config.targets);
  o.discovery.scrape.concurrency = static_cast<size_t>(std::max(1, config.scrape.concurrency));
  o.discovery.scrape.timeout = config.scrape.timeout;
  o.discovery.scrape.max_body_bytes = static_cast<size_t>(config.scrape.max_body_bytes);
  o.discovery.ttls.result = config.discovery.cache;
  o.discovery.ttls.inference_negative = config.discovery.not_inference_cache;
  o.discovery.ttls.inference_error = config.discovery.error_cache;
  // The query-API fallback shares the exporter cache lifetime, timeout and body cap.
  o.discovery.query_api.ttl = config.discovery.cache;
  o.discovery.query_api.query_timeout = config.scrape.timeout;
  o.discovery.query_api.max_body_bytes = static_cast<size_t>(config.scrape.max_body_bytes);
  o.attribution.idle_utilization_below = config.idle.utilization_below;
  o.attribution.idle_memory_at_least_bytes = static_cast<double>(config.idle.memory_at_least_bytes);
  return o;
}

Result<app::SessionList> MakeKubeSessions(const app::Config& config) {
  const kube::KubeconfigSource source = kube::KubeconfigSource::FromEnvironment(config.kubeconfig);
  const KubeSessionOptions options = SessionOptionsFromConfig(config);
  app::SessionList out;
  for (const app::ClusterConfig& cluster : app::EffectiveClusters(config)) {
    std::vector<std::string> contexts;
    if (!cluster.context.empty()) contexts.push_back(cluster.context);
    auto conns = kube::LoadConnections(source, contexts);
    if (!conns.ok()) return conns.error();
    if (conns->empty())
      return MakeError(ErrorCode::kNotFound,
                       "kubeconfig: no context selected for cluster \"" + cluster.Label() + "\"");
    const kube::ClusterConnection& conn = conns->front();
    kube::TransportOptions topts;
    topts.max_idle_clients = options.discovery.scrape.concurrency;
    auto transport = kube::MakeTransport(conn, topts);
    if (!transport.ok()) return transport.error();
    std::string label = cluster.name.empty() ? conn.context_name : cluster.name;
    out.push_back(std::make_unique<KubeClusterSession>(
        std::move(label), std::shared_ptr<kube::Transport>(std::move(*transport)), options));
  }
  return out;
}

}  // namespace gpuattr::discovery
