// The settings table: every setting of gpuattr, declared once. A new setting is one row here (and
// its member in app/config.h, and its line in config/gpuattr.example.yaml, which a test demands).
#include "gpuattr/app/settings.h"

#include <set>

#include "config_values.h"
#include "gpuattr/util/strings.h"
#include "setting_ops.h"
#include "setting_parts.h"

namespace gpuattr::app {
namespace {

using G = SettingGroup;
#define MEMBER GPUATTR_MEMBER

Result<std::string> Text(std::string_view text) { return std::string(text); }

// A flag value that must not be empty ("--web.config.file: empty file name").
auto NonEmpty(std::string what) {
  return [what](std::string_view text) -> Result<std::string> {
    if (text.empty()) return Invalid("empty " + what);
    return std::string(text);
  };
}

auto IntIn(int min, int max) {
  return [min, max](std::string_view text) { return ParseInt(text, min, max); };
}

// "auto" is 0: the caller decides (scrape.concurrency: app/session_factory.h).
auto AutoOrIntIn(int min, int max) {
  return [min, max](std::string_view text) -> Result<int> {
    if (Trim(text) == "auto") return 0;
    return ParseInt(text, min, max);
  };
}

Result<uint64_t> PositiveByteSize(std::string_view text) {
  auto b = ParseByteSize(text);
  if (b.ok() && *b == 0) return Invalid("must be more than 0 bytes");
  return b;
}

Result<std::string> ListenAddressText(std::string_view text) {
  auto a = ParseListenAddress(text);
  if (!a.ok()) return a.error();
  return std::string(text);
}

// "" keeps the default in the file (as in the example file); a flag must name a cluster.
Result<std::string> ClusterNameOrEmpty(std::string_view text) {
  return Trim(text).empty() ? Result<std::string>(std::string()) : ParseClusterName(text);
}

// clusters[i]: "- kind-gpu" or "- {context: kind-gpu, name: lab}".
Result<ClusterConfig> ClusterItem(const yaml::Reader& r, const YAML::Node& node,
                                  const std::string& path) {
  ClusterConfig c;
  if (node.IsScalar()) {
    c.context = node.Scalar();
  } else {
    GPUATTR_RETURN_IF_ERROR(r.Keys(node, path, {"context", "name"}));
    GPUATTR_RETURN_IF_ERROR(r.String(node, path, "context", c.context));
    GPUATTR_RETURN_IF_ERROR(r.String(node, path, "name", c.name));
  }
  if (c.context.empty()) return r.Fail(path + ".context", "missing (name a kubeconfig context)");
  return c;
}

// --context replaces `clusters`; a context also listed in the file keeps the file's `name`.
Status ApplyContexts(const std::vector<std::string>& contexts, Config& cfg) {
  std::vector<ClusterConfig> clusters;
  for (const auto& ctx : contexts) {
    if (ctx.empty()) return Invalid("empty context name");
    ClusterConfig c{ctx, ""};
    for (const auto& fc : cfg.clusters)
      if (fc.context == ctx) c.name = fc.name;
    clusters.push_back(std::move(c));
  }
  cfg.clusters = std::move(clusters);
  return Status::Ok();
}

Result<TargetPin> TargetItem(const yaml::Reader& r, const YAML::Node& node,
                             const std::string& path) {
  if (!node.IsScalar()) return r.Fail(path, "expected a string like ns/pod-prefix:port");
  return r.Parse(node, path, ParseTargetPin);
}

// web.basic_auth.users[i] (duplicates are checked with the whole list, in config.cc).
Result<BasicAuthUser> UserItem(const yaml::Reader& r, const YAML::Node& node,
                               const std::string& path) {
  GPUATTR_RETURN_IF_ERROR(r.Keys(node, path, {"username", "password_file"}));
  BasicAuthUser user;
  GPUATTR_RETURN_IF_ERROR(r.String(node, path, "username", user.username));
  GPUATTR_RETURN_IF_ERROR(r.String(node, path, "password_file", user.password_file));
  if (user.username.empty()) return r.Fail(path + ".username", "missing");
  if (user.username.find(':') != std::string::npos)
    return r.Fail(path + ".username", "must not contain ':'");
  if (user.password_file.empty()) return r.Fail(path + ".password_file", "missing");
  return user;
}

// discovery.trust.exporters[i]: {namespace, selector: {label: value}}.
Result<trust::ExporterRule> ExporterRuleItem(const yaml::Reader& r, const YAML::Node& node,
                                             const std::string& path) {
  GPUATTR_RETURN_IF_ERROR(r.Keys(node, path, {"namespace", "selector"}));
  trust::ExporterRule rule;
  GPUATTR_RETURN_IF_ERROR(r.String(node, path, "namespace", rule.namespace_));
  if (Trim(rule.namespace_).empty())
    return r.Fail(path + ".namespace", "missing (a rule trusts pods of one namespace)");
  const YAML::Node selector = yaml::Reader::Child(node, "selector");
  if (!selector.IsDefined()) return rule;
  if (!selector.IsMap()) return r.Fail(path + ".selector", "expected a mapping of label: value");
  for (const auto& kv : selector) {
    if (!kv.first.IsScalar() || !kv.second.IsScalar())
      return r.Fail(path + ".selector", "expected a mapping of label: value");
    rule.selector[kv.first.Scalar()] = kv.second.Scalar();
  }
  return rule;
}

Result<std::string> NamespaceItem(const yaml::Reader& r, const YAML::Node& node,
                                  const std::string& path) {
  if (!node.IsScalar() || Trim(node.Scalar()).empty())
    return r.Fail(path, "expected a namespace name");
  return std::string(Trim(node.Scalar()));
}

std::string YamlList(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return "[" + out + "]";
}

std::vector<Setting> ClusterSettings() {
  return {
      Value({.key = "kubeconfig",
             .flag = "kubeconfig",
             .value_name = "PATH",
             .group = G::kClusters,
             .help = "the kubeconfig to read.",
             .default_help = "$KUBECONFIG (a ':'-separated list, merged as kubectl does), else "
                             "~/.kube/config.",
             .example = "--kubeconfig ~/.kube/lab.yaml"},
            MEMBER(kubeconfig), Text),
      List({.key = "clusters",
            .flag = "context",
            .value_name = "NAME",
            .group = G::kClusters,
            .help = "kubeconfig contexts to read, one cluster each; repeat the flag for several. "
                    "The context name becomes the `cluster` label. The flag replaces the file's "
                    "list but keeps the `name` the file gives a context.",
            .default_text = "[]",
            .default_help = "the kubeconfig's current context.",
            .example = "--context kind-gpu --context prod-eu"},
           MEMBER(clusters), ClusterItem, ApplyContexts),
      Value({.key = "cluster_name",
             .flag = "cluster.name",
             .value_name = "NAME",
             .group = G::kClusters,
             .help = "the `cluster` label. In the cluster (in-cluster mode): the name of the "
                     "cluster gpuattr runs in. With a kubeconfig: the label of the one cluster "
                     "read, instead of its context name.",
             .default_help = "in-cluster (in a pod), else the context name.",
             .example = "--cluster.name prod-eu"},
            MEMBER(cluster_name), ClusterNameOrEmpty, ParseClusterName),
  };
}

std::vector<Setting> CycleSettings() {
  return {
      Value({.key = "interval",
             .flag = "interval",
             .value_name = "DURATION",
             .group = G::kCycle,
             .help = "time between cycles (discovery, scrape, attribution, publish); Go "
                     "durations: 500ms, 20s, 1m30s.",
             .default_text = "20s",
             .example = "--interval 30s"},
            MEMBER(interval), ParsePositiveDuration),
      Value({.key = "stale_after",
             .value_name = "DURATION",
             .group = G::kCycle,
             .help = "how long a failing cluster's last good series stay published.",
             .default_text = "5m"},
            MEMBER(stale_after), ParsePositiveDuration),
      List({.key = "targets",
            .flag = "target",
            .value_name = "PIN",
            .group = G::kCycle,
            .help = "scrape this target as well as what discovery finds; repeatable, replaces "
                    "the file's list. NAMESPACE/POD-PREFIX:PORT: exporter pods whose name starts "
                    "with POD-PREFIX; NAMESPACE/svc/SERVICE:PORT: a Prometheus-compatible query "
                    "API.",
            .default_text = "[]",
            .default_help = "none.",
            .example = "--target gpu-operator/nvidia-dcgm-exporter:9400"},
           MEMBER(targets), TargetItem, ReplaceWith(MEMBER(targets), ParseTargetPin)),
      Value({.key = "state_file",
             .flag = "state.file",
             .value_name = "PATH",
             .group = G::kCycle,
             .help = "where idle runs and energy counters survive restarts (JSON, rewritten "
                     "after each successful cycle; --once only reads it).",
             .default_help = "$XDG_STATE_HOME/gpuattr/state.json, else "
                             "~/.local/state/gpuattr/state.json.",
             .example = "--state.file /var/lib/gpuattr/state.json"},
            MEMBER(state_file), Text),
      Value({.key = "log.level",
             .flag = "log.level",
             .value_name = "LEVEL",
             .group = G::kCycle,
             .help = "debug, info, warn or error. Logs are logfmt lines on stderr.",
             .default_text = "info",
             .example = "--log.level debug"},
            MEMBER(log_level), ParseLogLevel),
      Value({.key = "log.format",
             .flag = "log.format",
             .value_name = "FORMAT",
             .group = G::kCycle,
             .help = "logfmt or json: one logfmt line or one JSON object per event on stderr, "
                     "with the same fields (ts, level, msg, then the event's).",
             .default_text = "logfmt",
             .example = "--log.format json"},
            MEMBER(log_format), ParseLogFormat),
  };
}

std::vector<Setting> ServerSettings() {
  return {
      Value({.key = "web.listen_address",
             .flag = "web.listen-address",
             .value_name = "ADDR",
             .group = G::kServer,
             .help = "where /metrics, /healthz, /readyz and the status page / are served "
                     "(host:port, [::1]:port, :port for all interfaces). On a loopback address "
                     "only requests whose Host is localhost, 127.0.0.0/8 or [::1] are answered "
                     "(DNS rebinding).",
             .default_text = "127.0.0.1:9787",
             .example = "--web.listen-address :9787"},
            MEMBER(web.listen_address), ListenAddressText),
      Value({.key = "web.telemetry_path",
             .flag = "web.telemetry-path",
             .value_name = "PATH",
             .group = G::kServer,
             .help = "the path the metrics are served at; /metrics then answers 404.",
             .default_text = "/metrics",
             .example = "--web.telemetry-path /gpuattr/metrics"},
            MEMBER(web.telemetry_path), ParseTelemetryPath),
      Value({.key = "web.config_file",
             .flag = "web.config.file",
             .value_name = "FILE",
             .group = G::kServer,
             .help = "TLS and basic auth, in the Prometheus exporter-toolkit web config format "
                     "(tls_server_config, basic_auth_users with bcrypt hashes; docs/app.md).",
             .default_help = "none (plain HTTP, no auth).",
             .example = "--web.config.file /etc/gpuattr/web.yml"},
            MEMBER(web.config_file), Text, NonEmpty("file name")),
      Value({.key = "web.tls.cert_file",
             .value_name = "FILE",
             .group = G::kServer,
             .help = "deprecated (use web.config_file): the HTTPS certificate; set with key_file.",
             .default_help = "none."},
            MEMBER(web.tls_cert_file), Text),
      Value({.key = "web.tls.key_file",
             .value_name = "FILE",
             .group = G::kServer,
             .help = "deprecated (use web.config_file): the HTTPS private key.",
             .default_help = "none."},
            MEMBER(web.tls_key_file), Text),
      List({.key = "web.basic_auth.users",
            .value_name = "LIST",
            .group = G::kServer,
            .help = "deprecated (use web.config_file): {username, password_file} pairs; every "
                    "path then needs basic auth.",
            .default_text = "[]"},
           MEMBER(web.basic_auth_users), UserItem),
  };
}

// metric_allowlist[i] / metric_denylist[i]: a regular expression over family names.
Result<std::string> MetricPatternItem(const yaml::Reader& r, const YAML::Node& node,
                                      const std::string& path) {
  if (!node.IsScalar()) return r.Fail(path, "expected a regular expression over family names");
  return r.Parse(node, path, ParseMetricPattern);
}

// --metric-allowlist a,b (kube-state-metrics' syntax: comma-separated; repeating the flag adds).
template <typename Get>
std::function<Status(const std::vector<std::string>&, Config&)> CommaSeparated(Get get) {
  return [get](const std::vector<std::string>& values, Config& cfg) -> Status {
    std::vector<std::string> items;
    for (std::string_view v : values)
      for (size_t start = 0; start <= v.size();) {
        size_t comma = v.find(',', start);
        if (comma == std::string_view::npos) comma = v.size();
        GPUATTR_ASSIGN_OR_RETURN(auto one,
                                 ParseMetricPattern(Trim(v.substr(start, comma - start))));
        items.push_back(std::move(one));
        start = comma + 1;
      }
    get(cfg) = std::move(items);
    return Status::Ok();
  };
}

std::vector<Setting> MetricSelectionSettings() {
  return {
      List({.key = "metric_allowlist",
            .flag = "metric-allowlist",
            .value_name = "REGEXES",
            .group = G::kServer,
            .help = "serve only the families whose name matches one of these comma-separated "
                    "regular expressions (unanchored, as kube-state-metrics matches them: "
                    "^gpuattr_pod_.*$). Not with --metric-denylist; process_* always stays.",
            .default_text = "[]",
            .default_help = "every family.",
            .example = "--metric-allowlist '^gpuattr_(namespace|pod)_.*'"},
           MEMBER(metric_allowlist), MetricPatternItem, CommaSeparated(MEMBER(metric_allowlist))),
      List({.key = "metric_denylist",
            .flag = "metric-denylist",
            .value_name = "REGEXES",
            .group = G::kServer,
            .help = "serve every family but those whose name matches one of these "
                    "comma-separated regular expressions (as --metric-allowlist). Not with "
                    "--metric-allowlist.",
            .default_text = "[]",
            .default_help = "none.",
            .example = "--metric-denylist '_active_ratio$'"},
           MEMBER(metric_denylist), MetricPatternItem, CommaSeparated(MEMBER(metric_denylist))),
  };
}

std::vector<Setting> OnceAndShardSettings() {
  return {
      Switch({.flag = "once",
              .group = G::kOnce,
              .help = "run one cycle, print the result on stdout and exit (no server)."},
             MEMBER(once)),
      Value({.key = "output",
             .flag = "output",
             .value_name = "FORMAT",
             .group = G::kOnce,
             .help = "what --once prints: prometheus (the exposition), table (the status page's "
                     "sections for a terminal; NO_COLOR and COLUMNS respected), json (one "
                     "snapshot object, docs/snapshot.md) or markdown (an incident report for a "
                     "ticket). The flag needs --once.",
             .default_text = "prometheus",
             .example = "--once --output table"},
            MEMBER(output), ParseOutputFormat),
      Value({.flag = "shard",
             .value_name = "I",
             .group = G::kSharding,
             .help = "with --total-shards N: be shard I (0 <= I < N), as kube-state-metrics "
                     "shards. Shard I reads only the nodes whose name hashes (FNV-1a 64) to I mod "
                     "N and publishes their devices, pods and node series; shard 0 also the "
                     "pending pods. Namespace series are the shard's share: sum them.",
             .default_text = "0",
             .example = "--shard 1 --total-shards 3"},
            MEMBER(shard.index), IntIn(0, 1023)),
      Value({.flag = "total-shards",
             .value_name = "N",
             .group = G::kSharding,
             .help = "the number of shards.",
             .default_text = "1",
             .default_help = "1 (not sharded)."},
            MEMBER(shard.total), IntIn(1, 1024)),
      Value({.flag = "pod",
             .value_name = "NAME",
             .group = G::kSharding,
             .help = "with --total-shards N: the shard is the ordinal after the last '-' of this "
                     "StatefulSet pod's name (gpuattr-2 -> shard 2). Pass the pod's own name, "
                     "POD_NAME from the downward API (metadata.name).",
             .default_help = "none.",
             .example = "--pod=$(POD_NAME)"},
            MEMBER(shard.pod), Text),
  };
}

std::vector<Setting> ScrapeSettings() {
  auto limit = [](std::string name, std::string help, std::string default_text, auto get,
                  auto parse) {
    return Value({.key = "scrape.limits." + name,
                  .value_name = name.ends_with("_bytes") ? "SIZE" : "N",
                  .group = G::kScrape,
                  .help = std::move(help),
                  .default_text = std::move(default_text)},
                 get, parse);
  };
  return {
      Value({.key = "scrape.concurrency",
             .value_name = "N",
             .group = G::kScrape,
             .help = "exporter GETs in flight at once, per cluster (1..256); auto: 16, or fewer "
                     "under a memory limit (a container's), as many as fit it by "
                     "docs/security.md#memory.",
             .default_text = "auto"},
            MEMBER(scrape.concurrency), AutoOrIntIn(1, 256)),
      Value({.key = "scrape.timeout",
             .value_name = "DURATION",
             .group = G::kScrape,
             .help = "per-target timeout of one scrape through the apiserver proxy.",
             .default_text = "15s"},
            MEMBER(scrape.timeout), ParsePositiveDuration),
      Value({.key = "scrape.path",
             .flag = "scrape.path",
             .value_name = "PATH",
             .group = G::kScrape,
             .help = "how exporters and query APIs are read: proxy (through the apiserver's pod "
                     "and service proxies), direct (by pod IP and ClusterIP, no apiserver in the "
                     "data path) or auto (direct in the cluster, proxy on a workstation).",
             .default_text = "auto",
             .example = "--scrape.path proxy"},
            MEMBER(scrape.path), ParseScrapePath),
      Value({.key = "scrape.tls.ca_file",
             .value_name = "FILE",
             .group = G::kScrape,
             .help = "direct reads of HTTPS exporters (prometheus.io/scheme: https): the CA "
                     "that signed their certificates, trusted alone.",
             .default_help = "none (system CAs)."},
            MEMBER(scrape.tls.ca_file), Text),
      Value({.key = "scrape.tls.server_name",
             .value_name = "NAME",
             .group = G::kScrape,
             .help = "direct reads of HTTPS exporters: the name their certificates must carry "
                     "(and the SNI).",
             .default_help = "none (the pod IP)."},
            MEMBER(scrape.tls.server_name), Text),
      limit("body_bytes", "bytes of one exporter body; the GET stops there.", "16MiB",
            MEMBER(scrape.limits.body_bytes), PositiveByteSize),
      limit("total_bytes",
            "body bytes read in one cycle, all exporters together; the reads past it wait for "
            "the next cycle (docs/security.md#memory).",
            "256MiB", MEMBER(scrape.limits.total_bytes), PositiveByteSize),
      limit("samples", "samples in one body (1..100000000).", "200000",
            MEMBER(scrape.limits.samples), IntIn(1, 100'000'000)),
      limit("labels",
            "labels of the samples kept from one body (1..100000000); parsing stops at the "
            "sample past it (docs/security.md#memory).",
            "1000000", MEMBER(scrape.limits.labels), IntIn(1, 100'000'000)),
      limit("devices_per_node", "devices one exporter reports for its node (1..1000000).", "128",
            MEMBER(scrape.limits.devices_per_node), IntIn(1, 1'000'000)),
      limit("pods_per_device", "distinct pods labelled on one device (1..1000000).", "64",
            MEMBER(scrape.limits.pods_per_device), IntIn(1, 1'000'000)),
      limit("models_per_server", "distinct models one vLLM/SGLang server reports (1..1000000).",
            "16", MEMBER(scrape.limits.models_per_server), IntIn(1, 1'000'000)),
      limit("query_api_body_bytes", "bytes of one query-API answer (it covers every node).",
            "64MiB", MEMBER(scrape.limits.query_api_body_bytes), PositiveByteSize),
  };
}

std::vector<Setting> DiscoveryAndIdleSettings() {
  auto cache = [](std::string name, std::string help, std::string default_text, auto get) {
    return Value({.key = "discovery." + name,
                  .value_name = "DURATION",
                  .group = G::kDiscovery,
                  .help = std::move(help),
                  .default_text = std::move(default_text)},
                 get, ParsePositiveDuration);
  };
  return {
      cache("cache", "how long discovery results (also \"nothing found\") are reused.", "60s",
            MEMBER(discovery.cache)),
      cache("not_inference_cache",
            "a pod that answered but is no inference server is not probed "
            "again for this long.",
            "10m", MEMBER(discovery.not_inference_cache)),
      cache("error_cache",
            "a failed probe is not repeated for this long (doubling per failure, "
            "up to not_inference_cache).",
            "2m", MEMBER(discovery.error_cache)),
      Value({.key = "discovery.query_api_above_gpu_nodes",
             .value_name = "N",
             .group = G::kDiscovery,
             .help = "above this many GPU nodes, read the GPU series from a trusted query API "
                     "that has them instead of one proxy GET per exporter; 0: never.",
             .default_text = "200"},
            MEMBER(discovery.query_api_above_gpu_nodes), IntIn(0, 1'000'000)),
      Value({.key = "discovery.inference_probes_per_cycle",
             .value_name = "N",
             .group = G::kDiscovery,
             .help = "at most this many inference-server probes per cycle (0..100000).",
             .default_text = "50"},
            MEMBER(discovery.inference_probes_per_cycle), IntIn(0, 100'000)),
      List({.key = "discovery.trust.exporters",
            .value_name = "LIST",
            .group = G::kDiscovery,
            .help = "exporter pods trusted wherever they run: {namespace, selector} rules.",
            .default_text = "[]"},
           MEMBER(discovery.trust.exporters), ExporterRuleItem),
      List({.key = "discovery.trust.exporter_namespaces",
            .value_name = "LIST",
            .group = G::kDiscovery,
            .help = "namespaces whose DaemonSets' pods may speak for their node's GPUs.",
            .default_text = YamlList(trust::DefaultExporterNamespaces())},
           MEMBER(discovery.trust.exporter_namespaces), NamespaceItem),
      List({.key = "discovery.trust.query_api_namespaces",
            .value_name = "LIST",
            .group = G::kDiscovery,
            .help = "namespaces whose Prometheus-compatible query APIs are trusted unpinned.",
            .default_text = YamlList(trust::DefaultQueryApiNamespaces())},
           MEMBER(discovery.trust.query_api_namespaces), NamespaceItem),
      Value({.key = "idle.utilization_below",
             .value_name = "RATIO",
             .group = G::kIdle,
             .help = "a pod is idle while its GPU utilisation (0..1) is below this ...",
             .default_text = "0.05"},
            MEMBER(idle.utilization_below), ParseRatio),
      Value({.key = "idle.memory_at_least",
             .value_name = "SIZE",
             .group = G::kIdle,
             .help = "... and it holds at least this much GPU memory.",
             .default_text = "256MiB"},
            MEMBER(idle.memory_at_least_bytes), ParseByteSize),
  };
}

std::vector<Setting> GeneralSettings() {
  return {
      Meta({.flag = "config.file",
            .value_name = "FILE",
            .group = G::kGeneral,
            .help = "YAML config file with the keys above; config/gpuattr.example.yaml documents "
                    "each with its default. An empty file is valid.",
            .default_help = "none.",
            .example = "--config.file ~/.config/gpuattr.yaml"}),
      Meta({.flag = "version", .group = G::kGeneral, .help = "print the version and exit."}),
      Meta({.flag = "help",
            .short_flag = "h",
            .group = G::kGeneral,
            .help = "print this help and exit."}),
  };
}

std::vector<Setting> MakeSettings() {
  std::vector<Setting> all;
  for (auto part : {ClusterSettings, CycleSettings, ServerSettings, MetricSelectionSettings,
                    OnceAndShardSettings, ScrapeSettings, DiscoveryAndIdleSettings,
                    AccountingSettings, RightsizingSettings, GeneralSettings})
    for (Setting& s : part()) all.push_back(std::move(s));
  return all;
}

}  // namespace

std::string_view GroupTitle(SettingGroup group) {
  switch (group) {
    case G::kClusters:
      return "Clusters";
    case G::kCycle:
      return "Cycles";
    case G::kServer:
      return "Server";
    case G::kOnce:
      return "One cycle on the terminal";
    case G::kSharding:
      return "Sharding (kube-state-metrics style)";
    case G::kScrape:
      return "Scrape";
    case G::kDiscovery:
      return "Discovery and trust";
    case G::kIdle:
      return "Idle";
    case G::kAccounting:
      return "Accounting";
    case G::kRightsizing:
      return "Rightsizing";
    case G::kGeneral:
      break;
  }
  return "General";
}

const std::vector<Setting>& Settings() {
  static const std::vector<Setting> kSettings = MakeSettings();
  return kSettings;
}

const std::vector<RetiredKey>& RetiredKeys() {
  static const std::vector<RetiredKey> kRetired = {
      {"scrape.max_body_bytes", "moved to scrape.limits.body_bytes (default 16MiB; docs/app.md)"},
  };
  return kRetired;
}

Status ApplyDefaults(Config& cfg) {
  for (const Setting& s : Settings())
    if (s.ops && s.ops->reset) GPUATTR_RETURN_IF_ERROR(s.ops->reset(cfg));
  return Status::Ok();
}

Config::Config() { (void)ApplyDefaults(*this); }

}  // namespace gpuattr::app
