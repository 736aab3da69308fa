#include "gpuattr/app/session_factory.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "gpuattr/kube/http_transport.h"
#include "gpuattr/kube/in_cluster.h"
#include "gpuattr/kube/kubeconfig.h"
#include "gpuattr/kube/tls.h"
#include "gpuattr/ledger/state_path.h"
#include "gpuattr/util/log.h"
#include "gpuattr/util/memory_limit.h"

namespace gpuattr::app {

discovery::Pins PinsFromConfig(const std::vector<TargetPin>& targets) {
  discovery::Pins pins;
  for (const TargetPin& t : targets) {
    if (t.kind == TargetPin::Kind::kPodPrefix)
      pins.pods.push_back(discovery::PodPin{t.namespace_, t.name, t.port, t.text});
    else
      pins.services.push_back(
          discovery::ServicePin{t.namespace_, t.name, std::to_string(t.port), t.text});
  }
  return pins;
}

uint64_t ReadMemoryBound(const LimitsConfig& l) {
  return l.body_bytes + 80 * static_cast<uint64_t>(l.samples) +
         64 * static_cast<uint64_t>(l.labels);
}

ScrapeConcurrency ResolveScrapeConcurrency(const ScrapeConfig& scrape,
                                           std::optional<uint64_t> memory_limit) {
  if (scrape.concurrency > 0) return {scrape.concurrency, false};
  if (!memory_limit) return {};
  const uint64_t per_read = std::max<uint64_t>(1, ReadMemoryBound(scrape.limits));
  const uint64_t room =
      *memory_limit > kDaemonReserveBytes ? *memory_limit - kDaemonReserveBytes : 0;
  const uint64_t fit = room / per_read;
  if (fit >= kDefaultScrapeConcurrency) return {};
  return {static_cast<int>(std::max<uint64_t>(1, fit)), true};
}

KubeSessionOptions SessionOptionsFromConfig(const Config& config) {
  KubeSessionOptions o;
  o.cache.namespaces = true;  // the teams of the bill (accounting.namespace_labels)
  o.discovery.pins = PinsFromConfig(config.targets);
  // "auto" (0) is the default here; MakeKubeSessions fits it to the memory limit.
  o.discovery.scrape.concurrency = static_cast<size_t>(
      config.scrape.concurrency > 0 ? config.scrape.concurrency : kDefaultScrapeConcurrency);
  o.discovery.scrape.timeout = config.scrape.timeout;
  const LimitsConfig& l = config.scrape.limits;
  o.discovery.scrape.limits = {static_cast<size_t>(l.body_bytes),
                               static_cast<size_t>(l.samples),
                               static_cast<size_t>(l.devices_per_node),
                               static_cast<size_t>(l.pods_per_device),
                               static_cast<size_t>(l.models_per_server),
                               static_cast<size_t>(l.total_bytes),
                               static_cast<size_t>(l.labels)};
  o.discovery.trust_rules = config.discovery.trust.exporters;
  o.discovery.exporter_namespaces = config.discovery.trust.exporter_namespaces;
  o.discovery.ttls.result = config.discovery.cache;
  o.discovery.ttls.inference_negative = config.discovery.not_inference_cache;
  o.discovery.ttls.inference_error = config.discovery.error_cache;
  o.discovery.inference_probes_per_cycle =
      static_cast<size_t>(std::max(0, config.discovery.inference_probes_per_cycle));
  // The query-API fallback shares the exporter cache lifetime, timeout and per-node limits; one
  // answer covers every node, so its body has a cap of its own.
  o.discovery.query_api.ttl = config.discovery.cache;
  o.discovery.query_api.query_timeout = config.scrape.timeout;
  o.discovery.query_api.max_body_bytes = static_cast<size_t>(l.query_api_body_bytes);
  o.discovery.query_api.limits = o.discovery.scrape.limits;
  o.discovery.query_api.trusted_namespaces = config.discovery.trust.query_api_namespaces;
  o.discovery.query_api.prefer_above_gpu_nodes =
      static_cast<size_t>(std::max(0, config.discovery.query_api_above_gpu_nodes));
  o.shard = kube::Shard{config.shard.index, config.shard.total};
  o.stages.attribution.idle_utilization_below = config.idle.utilization_below;
  o.stages.attribution.idle_memory_at_least_bytes =
      static_cast<double>(config.idle.memory_at_least_bytes);
  // GPU-hours' prices: the rules were checked when the config was read (exit 2 naming the rule).
  if (auto prices = accounting::PriceList::Make(config.accounting.prices); prices.ok())
    o.stages.prices = std::make_shared<const accounting::PriceList>(std::move(*prices));
  o.stages.currency = config.accounting.currency;
  o.stages.bases = config.accounting.bases;
  o.stages.namespace_labels = config.accounting.namespace_labels;
  o.interval = config.interval;  // the cache's sync window is 2 intervals
  // A missed cycle or a quick restart still integrates; a longer gap adds no invented joules.
  o.ledger.max_gap_seconds =
      std::max(300.0, 5 * std::chrono::duration<double>(config.interval).count());
  o.ledger.retention_days = config.accounting.retention_days;
  o.ledger.namespace_labels = config.accounting.namespace_labels;  // for report --group-by team
  o.rightsizing.window_seconds = std::chrono::duration<double>(config.rightsizing.window).count();
  o.rightsizing.min_observation_seconds =
      std::chrono::duration<double>(config.rightsizing.min_observation).count();
  o.rightsizing.headroom = config.rightsizing.headroom;
  o.rightsizing.max_gap_seconds = o.ledger.max_gap_seconds;  // the same gap rule
  return o;
}

Result<std::shared_ptr<ledger::StateFile>> OpenStateFile(const Config& config) {
  auto path = ledger::ResolveStateFilePath(config.state_file);
  if (!path.ok()) {
    log::Warn("no state file; idle runs and energy counters will not survive a restart",
              {{"err", path.error().message}});
    return std::shared_ptr<ledger::StateFile>();
  }
  // --once reads the state (idle runs continue) but never writes it: a one-off look must not
  // move a running daemon's counters, nor race its writes; it needs no lock either (the daemon
  // replaces the file atomically).
  if (config.once) return ledger::StateFile::Open(std::move(*path), /*writable=*/false);
  return ledger::StateFile::OpenExclusive(std::move(*path));
}

Result<std::vector<LabelledConnection>> ClusterConnections(const Config& config,
                                                           const kube::KubeconfigSource& source,
                                                           const kube::InClusterEnv& env) {
  std::vector<LabelledConnection> out;
  if (kube::NoKubeconfig(source) && env.InPod()) {
    // In-cluster mode, as client-go decides it: no kubeconfig anywhere, and in a pod.
    if (!config.clusters.empty())
      return MakeError(ErrorCode::kInvalidArgument,
                       "in-cluster mode (no kubeconfig, KUBERNETES_SERVICE_HOST set) reads only "
                       "the cluster gpuattr runs in: drop --context and `clusters`, or give a "
                       "kubeconfig with --kubeconfig");
    const std::string label =
        config.cluster_name.empty() ? std::string(kInClusterName) : config.cluster_name;
    auto conn = kube::InClusterConnection(env, label);
    if (!conn.ok()) return conn.error();
    out.push_back({label, std::move(*conn)});
    return out;
  }
  for (const ClusterConfig& cluster : EffectiveClusters(config)) {
    std::vector<std::string> contexts;
    if (!cluster.context.empty()) contexts.push_back(cluster.context);
    auto conns = kube::LoadConnections(source, contexts);
    if (!conns.ok()) return conns.error();
    if (conns->empty())
      return MakeError(ErrorCode::kNotFound,
                       "kubeconfig: no context selected for cluster \"" + cluster.Label() + "\"");
    std::string label = !config.cluster_name.empty() ? config.cluster_name
                        : cluster.name.empty()       ? conns->front().context_name
                                                     : cluster.name;
    out.push_back({std::move(label), std::move(conns->front())});
  }
  return out;
}

bool ScrapesDirectly(ScrapePath path, bool in_cluster) {
  return path == ScrapePath::kDirect || (path == ScrapePath::kAuto && in_cluster);
}

Result<scrape::DirectOptions> DirectOptionsFromConfig(const ScrapeConfig& scrape) {
  scrape::DirectOptions o;
  o.server_name = scrape.tls.server_name;
  if (scrape.tls.ca_file.empty()) return o;
  const std::string what = "scrape.tls.ca_file: " + scrape.tls.ca_file;
  std::ifstream in(scrape.tls.ca_file, std::ios::binary);
  if (!in) return MakeError(ErrorCode::kInvalidArgument, what + ": cannot read the file");
  std::stringstream text;
  text << in.rdbuf();
  o.ca_pem = text.str();
  o.ca_file = scrape.tls.ca_file;
  // Checked once here, so that a bad file stops gpuattr at start instead of failing each read.
  if (auto ca = kube::CaBundle::FromPem(o.ca_pem, what); !ca.ok()) return ca.error();
  return o;
}

Result<SessionList> MakeKubeSessions(const Config& config) {
  const kube::KubeconfigSource source = kube::KubeconfigSource::FromEnvironment(config.kubeconfig);
  KubeSessionOptions options = SessionOptionsFromConfig(config);
  const std::optional<uint64_t> memory_limit = ProcessMemoryLimit();
  const ScrapeConcurrency concurrency = ResolveScrapeConcurrency(config.scrape, memory_limit);
  options.discovery.scrape.concurrency = static_cast<size_t>(concurrency.value);
  if (concurrency.lowered)
    log::Info("scrape concurrency lowered to fit the memory limit (docs/security.md#memory)",
              {{"scrape_concurrency", concurrency.value},
               {"memory_limit_bytes", *memory_limit},
               {"per_read_bytes", ReadMemoryBound(config.scrape.limits)},
               {"reserve_bytes", kDaemonReserveBytes}});
  else if (config.scrape.concurrency > 0 && memory_limit &&
           kDaemonReserveBytes + concurrency.value * ReadMemoryBound(config.scrape.limits) >
               *memory_limit)
    log::Warn(
        "scrape.concurrency x what one read may hold is above the memory limit: exporters that "
        "send bodies at every scrape.limits at once could get gpuattr OOM-killed "
        "(docs/security.md#memory)",
        {{"scrape_concurrency", concurrency.value},
         {"memory_limit_bytes", *memory_limit},
         {"per_read_bytes", ReadMemoryBound(config.scrape.limits)}});
  auto conns = ClusterConnections(config, source, kube::InClusterEnv::FromEnvironment());
  if (!conns.ok()) return conns.error();
  auto direct = DirectOptionsFromConfig(config.scrape);
  if (!direct.ok()) return direct.error();
  options.direct_options = std::move(*direct);
  std::vector<std::pair<std::string, std::unique_ptr<kube::Transport>>> clusters;
  std::vector<bool> direct_reads;
  for (const LabelledConnection& c : *conns) {
    direct_reads.push_back(ScrapesDirectly(config.scrape.path, c.connection.in_cluster));
    log::Info(direct_reads.back()
                  ? "reading exporters directly by pod IP and query APIs by ClusterIP"
                  : "reading exporters and query APIs through the apiserver's proxies",
              {{"cluster", c.label},
               {"scrape_path", direct_reads.back() ? "direct" : "proxy"},
               {"docs", "docs/deploy.md#direct-scraping"}});
    if (c.connection.in_cluster)
      log::Info(
          "in-cluster mode: no kubeconfig; reading the cluster gpuattr runs in with its "
          "service account",
          {{"cluster", c.label},
           {"server", c.connection.server},
           {"token_file", c.connection.token_file},
           {"ca_file", c.connection.ca_file}});
    if (std::string kind = kube::CredentialsInClearText(c.connection); !kind.empty())
      log::Warn(
          "the apiserver URL is plain http://: every request sends this user's credentials "
          "unencrypted (use https://, docs/security.md#plain-http-apiservers)",
          {{"cluster", c.label}, {"server", c.connection.server}, {"credential", kind}});
    kube::TransportOptions topts;
    topts.max_idle_clients = options.discovery.scrape.concurrency;
    auto transport = kube::MakeTransport(c.connection, topts);
    if (!transport.ok()) return transport.error();
    clusters.emplace_back(c.label, std::move(*transport));
  }
  if (config.shard.total > 1)
    log::Info("sharded: reading only the nodes whose name hashes (FNV-1a 64) to this shard",
              {{"shard", std::to_string(config.shard.index)},
               {"total_shards", std::to_string(config.shard.total)},
               {"pod", config.shard.pod}});
  // Only once every cluster is usable: a bad kubeconfig must not touch the state file.
  auto state_file = OpenStateFile(config);
  if (!state_file.ok()) return state_file.error();
  options.state_file = std::move(*state_file);
  SessionList out;
  for (size_t i = 0; i < clusters.size(); ++i) {
    options.direct = direct_reads[i];
    out.push_back(std::make_unique<KubeClusterSession>(
        clusters[i].first, std::shared_ptr<kube::Transport>(std::move(clusters[i].second)),
        options));
  }
  return out;
}

}  // namespace gpuattr::app
