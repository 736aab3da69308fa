// The effective configuration of one gpuattr process: defaults, overridden by the YAML file
// (config/gpuattr.example.yaml documents every key), overridden by command-line flags. Every
// setting's key, flag, default and parser are declared once, in the settings table
// (app/settings.h, src/app/settings.cc); Config's constructor applies the table's defaults, so
// the members below have none of their own.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/accounting/accounting.h"
#include "gpuattr/accounting/prices.h"
#include "gpuattr/app/options.h"
#include "gpuattr/trust/rules.h"
#include "gpuattr/util/log.h"
#include "gpuattr/util/status.h"

namespace gpuattr::app {

using std::chrono::milliseconds;

// One kubeconfig context to read. `name` becomes the `cluster` label (the context name when empty).
struct ClusterConfig {
  std::string context;  // empty: the kubeconfig's current context
  std::string name;
  std::string Label() const { return name.empty() ? context : name; }
  bool operator==(const ClusterConfig&) const = default;
};

// A pinned scrape target: `ns/pod-prefix:port` (exporter pods) or `ns/svc/name:port` (query API).
struct TargetPin {
  enum class Kind { kPodPrefix, kService };
  Kind kind = Kind::kPodPrefix;
  std::string namespace_;
  std::string name;  // pod-name prefix or service name
  int port = 0;
  std::string text;  // as written, for messages and the status page
  bool operator==(const TargetPin&) const = default;
};

struct BasicAuthUser {
  std::string username;
  std::string password_file;  // read at startup; the password itself is never logged
  bool operator==(const BasicAuthUser&) const = default;
};

struct WebConfig {
  std::string listen_address;
  // Where the exposition is served (--web.telemetry-path, default /metrics); the old path then
  // answers 404 (docs/app.md#endpoints).
  std::string telemetry_path;
  // The exporter-toolkit web config file (TLS, bcrypt basic auth; app/web_config.h). Read at
  // start by Run; exclusive with the deprecated keys below.
  std::string config_file;
  // Deprecated (read for one more release, with a warning): web.tls and web.basic_auth.
  std::string tls_cert_file;  // both set: serve HTTPS
  std::string tls_key_file;
  std::vector<BasicAuthUser> basic_auth_users;  // non-empty: every path needs basic auth
  bool operator==(const WebConfig&) const = default;
};

// Limits per exporter body (docs/design.md#limits): a body over one is rejected whole. body_bytes
// was scrape.max_body_bytes (64 MiB) before it moved here.
struct LimitsConfig {
  uint64_t body_bytes = 0;
  int samples = 0;
  int devices_per_node = 0;
  int pods_per_device = 0;
  int models_per_server = 0;
  uint64_t total_bytes = 0;  // per cycle, every exporter together
  int labels = 0;            // of the samples kept from one body
  // One query-API answer covers every node: its own cap (the per-node limits apply per node).
  uint64_t query_api_body_bytes = 0;
  bool operator==(const LimitsConfig&) const = default;
};

// How exporter bodies are read (docs/deploy.md#direct-scraping): through the apiserver's pod and
// service proxies, or directly by pod IP and ClusterIP; auto: directly in the cluster (in-cluster
// mode), through the proxies on a workstation.
enum class ScrapePath { kAuto, kDirect, kProxy };
Result<ScrapePath> ParseScrapePath(std::string_view text);  // "auto", "direct", "proxy"

// HTTPS exporters read directly (prometheus.io/scheme: https): the CA that signed their
// certificates (system CAs when empty) and the name to check in them (the pod IP when empty).
struct ScrapeTlsConfig {
  std::string ca_file;
  std::string server_name;
  bool operator==(const ScrapeTlsConfig&) const = default;
};

struct ScrapeConfig {
  int concurrency = 0;
  milliseconds timeout{};
  ScrapePath path{};
  ScrapeTlsConfig tls;
  LimitsConfig limits;
  bool operator==(const ScrapeConfig&) const = default;
};

// GPU-hours and their prices (docs/accounting.md#prices).
struct AccountingConfig {
  std::string currency;                       // ISO 4217, the `currency` label of cost series
  std::vector<accounting::PriceRule> prices;  // ordered; the first rule matching a card wins
  std::vector<accounting::Basis> bases;       // published; the counters keep all three
  std::vector<std::string> namespace_labels;  // the teams: gpuattr_namespace_labels
  int retention_days = 0;                     // daily totals kept for `gpuattr report`
  bool operator==(const AccountingConfig&) const = default;
};

// Rightsizing (docs/rightsizing.md): the window of observations, how long a workload must be
// observed before it gets a recommendation, and the headroom on its needs.
struct RightsizingConfig {
  milliseconds window{};
  milliseconds min_observation{};
  double headroom = 0;
  bool operator==(const RightsizingConfig&) const = default;
};

struct IdleConfig {
  double utilization_below = 0;
  uint64_t memory_at_least_bytes = 0;
  bool operator==(const IdleConfig&) const = default;
};

// Who may speak for devices beyond pins (docs/design.md#trust, trust/rules.h): trust rules, the
// namespaces whose DaemonSets' pods may, and the namespaces of trusted query APIs.
struct TrustConfig {
  std::vector<trust::ExporterRule> exporters;
  std::vector<std::string> exporter_namespaces;   // default: trust::DefaultExporterNamespaces()
  std::vector<std::string> query_api_namespaces;  // default: trust::DefaultQueryApiNamespaces()
  bool operator==(const TrustConfig&) const = default;
};

struct DiscoveryConfig {
  milliseconds cache{};                // every discovery result, also empty ones
  milliseconds not_inference_cache{};  // a pod that answered but is no inference server
  milliseconds error_cache{};          // a probe that failed (doubling up to the above)
  int inference_probes_per_cycle = 0;  // the probe budget for inference candidates
  // Above this many GPU nodes a trusted query API with the GPU series is read instead of one
  // proxy GET per exporter; 0: never (docs/deploy.md, "Large clusters").
  int query_api_above_gpu_nodes = 0;
  TrustConfig trust;
  bool operator==(const DiscoveryConfig&) const = default;
};

// Sharding as kube-state-metrics does it (docs/design.md#sharding): this process is shard `index`
// of `total` and reads only the nodes whose name hashes (FNV-1a 64) to index mod total.
struct ShardConfig {
  uint32_t index = 0;
  uint32_t total = 0;  // 1: not sharded
  std::string pod;     // --pod, when the index came from its ordinal (for messages)
  bool operator==(const ShardConfig&) const = default;
};

// The `cluster` label in in-cluster mode when no name is given.
inline constexpr std::string_view kInClusterName = "in-cluster";

// What --once prints (--output): the exposition, or the status page's view as a terminal table,
// a JSON snapshot or a Markdown incident report (report/outputs.h).
enum class OutputFormat { kPrometheus, kTable, kJson, kMarkdown };
Result<OutputFormat> ParseOutputFormat(std::string_view text);  // "prometheus", "table", ...

struct Config {
  Config();  // the defaults of the settings table

  std::string config_file;              // where the file settings came from ("" when none)
  std::string kubeconfig;               // "" → $KUBECONFIG, then ~/.kube/config
  std::vector<ClusterConfig> clusters;  // empty → one cluster: the current context
  milliseconds interval{};
  // How long a cluster's last good series stay published while its cycles fail
  // (docs/design.md#honest-status).
  milliseconds stale_after{};
  WebConfig web;
  std::vector<TargetPin> targets;
  log::Level log_level{};
  log::LineFormat log_format{};  // logfmt or json lines on stderr
  // Families the exposition carries (regexes, as kube-state-metrics' flags; mutually exclusive;
  // metrics/family_filter.h). Empty: every family.
  std::vector<std::string> metric_allowlist;
  std::vector<std::string> metric_denylist;
  std::string state_file;  // "" → $XDG_STATE_HOME/gpuattr/state.json, else ~/.local/state/...
  ScrapeConfig scrape;
  IdleConfig idle;
  DiscoveryConfig discovery;
  AccountingConfig accounting;
  RightsizingConfig rightsizing;
  // The `cluster` label given by --cluster.name or `cluster_name`: in the cluster (in-cluster
  // mode) the name of the cluster gpuattr runs in (default kInClusterName); with a kubeconfig it
  // replaces the label of the one cluster read. "" = not given.
  std::string cluster_name;
  ShardConfig shard;
  bool once = false;
  OutputFormat output{};  // --once only
  // `kubectl gpuattr -n NS` (app/kubectl_plugin.h): --once tables, JSON and Markdown of one
  // namespace. No flag or key of its own: only the plugin's -n sets it.
  std::string once_namespace;
  bool operator==(const Config&) const = default;
};

// Merges defaults < file < flags and validates everything. `file_name` only labels messages
// ("gpuattr.yaml: scrape.timeout: invalid duration ..."); `file_text` may be empty. Pure.
Result<Config> LoadConfig(const CommandLine& flags, std::string_view file_name,
                          std::string_view file_text);

// Reads flags.config_file (when set) and calls LoadConfig. An unreadable file is an error naming
// it.
Result<Config> LoadConfigFromFlags(const CommandLine& flags);

// Building blocks, exposed for tests and other modules.
Result<TargetPin> ParseTargetPin(std::string_view text);
// "64MiB", "256MiB", "1GiB", "512KiB", "1GB", "1000" (bytes).
Result<uint64_t> ParseByteSize(std::string_view text);

struct ListenAddress {
  std::string host;  // "127.0.0.1", "::1", "0.0.0.0"
  int port = 0;      // 0: any free port
};
// "127.0.0.1:9787", "[::1]:9787", ":9787" (all interfaces), "localhost:0".
Result<ListenAddress> ParseListenAddress(std::string_view text);

// The StatefulSet ordinal of a pod name: the digits after the last '-' ("gpuattr-2" → 2). Errors
// say what is wrong with the name (no '-', no digits, an unexpanded "$(POD_NAME)").
Result<uint32_t> PodOrdinal(std::string_view pod);

}  // namespace gpuattr::app
