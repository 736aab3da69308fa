#include "gpuattr/app/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "gpuattr/util/strings.h"
#include "yaml_file.h"

namespace gpuattr::app {
namespace {

Error Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

Result<int> ParseInt(std::string_view text, int min, int max) {
  std::string_view s = Trim(text);
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty())
    return Invalid("invalid integer " + Quote(text));
  if (v < min || v > max)
    return Invalid(std::to_string(v) + " is out of range [" + std::to_string(min) + ", " +
                   std::to_string(max) + "]");
  return v;
}

Result<double> ParseRatio(std::string_view text) {
  std::string_view s = Trim(text);
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || !std::isfinite(v))
    return Invalid("invalid number " + Quote(text));
  if (v < 0 || v > 1) return Invalid(std::string(s) + " is not a ratio in [0, 1]");
  return v;
}

Result<log::Level> ParseLogLevel(std::string_view text) {
  log::Level level;
  if (!log::ParseLevel(text, level))
    return Invalid("unknown level " + Quote(text) + " (use debug, info, warn or error)");
  return level;
}

Result<milliseconds> ParsePositiveDuration(std::string_view text) {
  auto d = ParseDuration(text);
  if (!d.ok()) return d;
  if (d->count() <= 0) return Invalid("duration " + Quote(text) + " must be positive");
  return d;
}

Result<std::string> ParseClusterName(std::string_view text) {
  std::string_view s = Trim(text);
  if (s.empty()) return Invalid("empty cluster name");
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f)
      return Invalid("cluster name " + Quote(s) + " holds a control character");
  return std::string(s);
}

// Reads the YAML file into `cfg`, checking every key. Messages: "FILE: KEY: problem".
class FileLoader {
 public:
  FileLoader(std::string_view file, Config& cfg) : file_(file), cfg_(cfg) {}

  Status Load(std::string_view text) {
    return ReadYamlFile(file_, text, [this](const YAML::Node& root) { return LoadRoot(root); });
  }

 private:
  Error Bad(std::string_view key, std::string_view problem) const {
    return Invalid(file_ + ": " + std::string(key) + ": " + std::string(problem));
  }

  static std::string Join(std::string_view parent, std::string_view key) {
    return parent.empty() ? std::string(key) : std::string(parent) + "." + std::string(key);
  }

  // A mapping whose keys are all known. A null node (empty file, `web:` alone) is an empty map.
  Status CheckMap(const YAML::Node& node, std::string_view path,
                  std::initializer_list<std::string_view> known) const {
    if (node.IsNull()) return Status::Ok();
    if (!node.IsMap())
      return Bad(path.empty() ? "(top level)" : path, "expected a mapping of keys");
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) return Bad(path.empty() ? "(top level)" : path, "non-scalar key");
      std::string key = kv.first.as<std::string>();
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        std::string list;
        for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        return Bad(Join(path, key), "unknown key (known keys here: " + list + ")");
      }
    }
    return Status::Ok();
  }

  // The scalar text under `key`, or nullopt when absent or null (keeps the default).
  Result<std::optional<std::string>> Scalar(const YAML::Node& map, std::string_view path,
                                            std::string_view key) const {
    if (map.IsNull()) return std::optional<std::string>();
    YAML::Node v = map[std::string(key)];
    if (!v.IsDefined() || v.IsNull()) return std::optional<std::string>();
    if (!v.IsScalar()) return Bad(Join(path, key), "expected a single value");
    return std::optional<std::string>(v.as<std::string>());
  }

  template <typename T, typename Parse>
  Status Field(const YAML::Node& map, std::string_view path, std::string_view key, T& out,
               Parse parse) const {
    auto s = Scalar(map, path, key);
    if (!s.ok()) return s.status();
    if (!s->has_value()) return Status::Ok();
    auto v = parse(**s);
    if (!v.ok()) return Bad(Join(path, key), v.error().message);
    out = std::move(*v);
    return Status::Ok();
  }

  Status StringField(const YAML::Node& map, std::string_view path, std::string_view key,
                     std::string& out) const {
    return Field(map, path, key, out, [](const std::string& s) { return Result<std::string>(s); });
  }

  // A sequence under `key` (absent or null → empty).
  Result<std::vector<YAML::Node>> Sequence(const YAML::Node& map, std::string_view key) const {
    std::vector<YAML::Node> out;
    if (map.IsNull()) return out;
    YAML::Node v = map[std::string(key)];
    if (!v.IsDefined() || v.IsNull()) return out;
    if (!v.IsSequence()) return Bad(key, "expected a list");
    for (const auto& item : v) out.push_back(item);
    return out;
  }

  Status LoadRoot(const YAML::Node& root) {
    if (Status s =
            CheckMap(root, "",
                     {"kubeconfig", "clusters", "cluster_name", "interval", "stale_after", "web",
                      "targets", "log", "state_file", "output", "scrape", "idle", "discovery"});
        !s)
      return s;
    if (root.IsNull()) return Status::Ok();
    if (Status s = StringField(root, "", "kubeconfig", cfg_.kubeconfig); !s) return s;
    if (Status s = LoadClusters(root); !s) return s;
    if (Status s = Field(root, "", "cluster_name", cfg_.cluster_name,
                         [](const std::string& v) {
                           // "" keeps the default, as in the example file.
                           return Trim(v).empty() ? Result<std::string>(std::string())
                                                  : ParseClusterName(v);
                         });
        !s)
      return s;
    if (Status s = Field(root, "", "interval", cfg_.interval, ParsePositiveDuration); !s) return s;
    if (Status s = Field(root, "", "stale_after", cfg_.stale_after, ParsePositiveDuration); !s)
      return s;
    if (Status s = LoadWeb(root["web"]); !s) return s;
    if (Status s = LoadTargets(root); !s) return s;
    YAML::Node logn = root["log"];
    if (logn.IsDefined()) {
      if (Status s = CheckMap(logn, "log", {"level"}); !s) return s;
      if (Status s = Field(logn, "log", "level", cfg_.log_level, ParseLogLevel); !s) return s;
    }
    if (Status s = StringField(root, "", "state_file", cfg_.state_file); !s) return s;
    if (Status s = Field(root, "", "output", cfg_.output, ParseOutputFormat); !s) return s;
    if (Status s = LoadScrape(root["scrape"]); !s) return s;
    if (Status s = LoadIdle(root["idle"]); !s) return s;
    return LoadDiscovery(root["discovery"]);
  }

  Status LoadClusters(const YAML::Node& root) {
    auto items = Sequence(root, "clusters");
    if (!items.ok()) return items.status();
    for (size_t i = 0; i < items->size(); ++i) {
      std::string path = "clusters[" + std::to_string(i) + "]";
      const YAML::Node& item = (*items)[i];
      ClusterConfig c;
      if (item.IsScalar()) {  // shorthand: "- kind-gpu"
        c.context = item.as<std::string>();
      } else {
        if (Status s = CheckMap(item, path, {"context", "name"}); !s) return s;
        if (Status s = StringField(item, path, "context", c.context); !s) return s;
        if (Status s = StringField(item, path, "name", c.name); !s) return s;
      }
      if (c.context.empty()) return Bad(path + ".context", "missing (name a kubeconfig context)");
      cfg_.clusters.push_back(std::move(c));
    }
    return Status::Ok();
  }

  Status LoadWeb(const YAML::Node& web) {
    if (!web.IsDefined()) return Status::Ok();
    if (Status s = CheckMap(web, "web", {"listen_address", "config_file", "tls", "basic_auth"}); !s)
      return s;
    if (web.IsNull()) return Status::Ok();
    if (Status s = Field(web, "web", "listen_address", cfg_.web.listen_address,
                         [](const std::string& v) -> Result<std::string> {
                           auto a = ParseListenAddress(v);
                           if (!a.ok()) return a.error();
                           return v;
                         });
        !s)
      return s;
    if (Status s = StringField(web, "web", "config_file", cfg_.web.config_file); !s) return s;
    YAML::Node tls = web["tls"];
    if (tls.IsDefined()) {
      if (Status s = CheckMap(tls, "web.tls", {"cert_file", "key_file"}); !s) return s;
      if (Status s = StringField(tls, "web.tls", "cert_file", cfg_.web.tls_cert_file); !s) return s;
      if (Status s = StringField(tls, "web.tls", "key_file", cfg_.web.tls_key_file); !s) return s;
      if (cfg_.web.tls_cert_file.empty() != cfg_.web.tls_key_file.empty())
        return Bad("web.tls", "set both cert_file and key_file, or neither");
    }
    YAML::Node auth = web["basic_auth"];
    if (auth.IsDefined()) {
      if (Status s = CheckMap(auth, "web.basic_auth", {"users"}); !s) return s;
      auto users = auth.IsNull() ? Result<std::vector<YAML::Node>>(std::vector<YAML::Node>{})
                                 : Sequence(auth, "users");
      if (!users.ok()) return Bad("web.basic_auth.users", "expected a list");
      std::set<std::string> seen;
      for (size_t i = 0; i < users->size(); ++i) {
        std::string path = "web.basic_auth.users[" + std::to_string(i) + "]";
        const YAML::Node& u = (*users)[i];
        if (Status s = CheckMap(u, path, {"username", "password_file"}); !s) return s;
        BasicAuthUser user;
        if (Status s = StringField(u, path, "username", user.username); !s) return s;
        if (Status s = StringField(u, path, "password_file", user.password_file); !s) return s;
        if (user.username.empty()) return Bad(path + ".username", "missing");
        if (user.username.find(':') != std::string::npos)
          return Bad(path + ".username", "must not contain ':'");
        if (user.password_file.empty()) return Bad(path + ".password_file", "missing");
        if (!seen.insert(user.username).second)
          return Bad(path + ".username", "duplicate user " + Quote(user.username));
        cfg_.web.basic_auth_users.push_back(std::move(user));
      }
    }
    return Status::Ok();
  }

  Status LoadTargets(const YAML::Node& root) {
    auto items = Sequence(root, "targets");
    if (!items.ok()) return items.status();
    for (size_t i = 0; i < items->size(); ++i) {
      std::string path = "targets[" + std::to_string(i) + "]";
      if (!(*items)[i].IsScalar()) return Bad(path, "expected a string like ns/pod-prefix:port");
      auto pin = ParseTargetPin((*items)[i].as<std::string>());
      if (!pin.ok()) return Bad(path, pin.error().message);
      cfg_.targets.push_back(std::move(*pin));
    }
    return Status::Ok();
  }

  Status LoadScrape(const YAML::Node& n) {
    if (!n.IsDefined()) return Status::Ok();
    if (n.IsMap() && n["max_body_bytes"].IsDefined())
      return Bad("scrape.max_body_bytes",
                 "moved to scrape.limits.body_bytes (default 16MiB; docs/app.md)");
    if (Status s = CheckMap(n, "scrape", {"concurrency", "timeout", "limits"}); !s) return s;
    if (Status s = Field(n, "scrape", "concurrency", cfg_.scrape.concurrency,
                         [](const std::string& v) { return ParseInt(v, 1, 256); });
        !s)
      return s;
    if (Status s = Field(n, "scrape", "timeout", cfg_.scrape.timeout, ParsePositiveDuration); !s)
      return s;
    return LoadLimits(n.IsNull() ? YAML::Node() : n["limits"]);
  }

  Status LoadLimits(const YAML::Node& n) {
    if (!n.IsDefined()) return Status::Ok();
    constexpr std::string_view kPath = "scrape.limits";
    if (Status s = CheckMap(n, kPath,
                            {"body_bytes", "samples", "devices_per_node", "pods_per_device",
                             "models_per_server", "query_api_body_bytes"});
        !s)
      return s;
    auto bytes = [](const std::string& v) -> Result<uint64_t> {
      auto b = ParseByteSize(v);
      if (b.ok() && *b == 0) return Invalid("must be more than 0 bytes");
      return b;
    };
    auto count = [](int max) {
      return [max](const std::string& v) { return ParseInt(v, 1, max); };
    };
    LimitsConfig& l = cfg_.scrape.limits;
    if (Status s = Field(n, kPath, "body_bytes", l.body_bytes, bytes); !s) return s;
    if (Status s = Field(n, kPath, "query_api_body_bytes", l.query_api_body_bytes, bytes); !s)
      return s;
    if (Status s = Field(n, kPath, "samples", l.samples, count(100'000'000)); !s) return s;
    if (Status s = Field(n, kPath, "devices_per_node", l.devices_per_node, count(1'000'000)); !s)
      return s;
    if (Status s = Field(n, kPath, "pods_per_device", l.pods_per_device, count(1'000'000)); !s)
      return s;
    return Field(n, kPath, "models_per_server", l.models_per_server, count(1'000'000));
  }

  // discovery.trust: exporter rules ({namespace, selector}) and the trusted query-API namespaces.
  Status LoadTrust(const YAML::Node& n) {
    if (!n.IsDefined()) return Status::Ok();
    constexpr std::string_view kPath = "discovery.trust";
    if (Status s = CheckMap(n, kPath, {"exporters", "query_api_namespaces"}); !s) return s;
    if (n.IsNull()) return Status::Ok();
    auto rules = Sequence(n, "exporters");
    if (!rules.ok()) return Bad("discovery.trust.exporters", "expected a list");
    for (size_t i = 0; i < rules->size(); ++i) {
      const std::string path = "discovery.trust.exporters[" + std::to_string(i) + "]";
      const YAML::Node& item = (*rules)[i];
      if (Status s = CheckMap(item, path, {"namespace", "selector"}); !s) return s;
      trust::ExporterRule rule;
      if (Status s = StringField(item, path, "namespace", rule.namespace_); !s) return s;
      if (Trim(rule.namespace_).empty())
        return Bad(path + ".namespace", "missing (a rule trusts pods of one namespace)");
      YAML::Node sel = item.IsNull() ? YAML::Node() : item["selector"];
      if (sel.IsDefined() && !sel.IsNull()) {
        if (!sel.IsMap()) return Bad(path + ".selector", "expected a mapping of label: value");
        for (const auto& kv : sel) {
          if (!kv.first.IsScalar() || !kv.second.IsScalar())
            return Bad(path + ".selector", "expected a mapping of label: value");
          rule.selector[kv.first.as<std::string>()] = kv.second.as<std::string>();
        }
      }
      cfg_.discovery.trust.exporters.push_back(std::move(rule));
    }
    YAML::Node ns = n["query_api_namespaces"];
    if (ns.IsDefined() && !ns.IsNull()) {
      if (!ns.IsSequence()) return Bad("discovery.trust.query_api_namespaces", "expected a list");
      std::vector<std::string> list;
      for (size_t i = 0; i < ns.size(); ++i) {
        if (!ns[i].IsScalar() || Trim(ns[i].as<std::string>()).empty())
          return Bad("discovery.trust.query_api_namespaces[" + std::to_string(i) + "]",
                     "expected a namespace name");
        list.push_back(std::string(Trim(ns[i].as<std::string>())));
      }
      cfg_.discovery.trust.query_api_namespaces = std::move(list);
    }
    return Status::Ok();
  }

  Status LoadIdle(const YAML::Node& n) {
    if (!n.IsDefined()) return Status::Ok();
    if (Status s = CheckMap(n, "idle", {"utilization_below", "memory_at_least"}); !s) return s;
    if (Status s = Field(n, "idle", "utilization_below", cfg_.idle.utilization_below, ParseRatio);
        !s)
      return s;
    return Field(n, "idle", "memory_at_least", cfg_.idle.memory_at_least_bytes, ParseByteSize);
  }

  Status LoadDiscovery(const YAML::Node& n) {
    if (!n.IsDefined()) return Status::Ok();
    if (Status s = CheckMap(n, "discovery",
                            {"cache", "not_inference_cache", "error_cache",
                             "inference_probes_per_cycle", "query_api_above_gpu_nodes", "trust"});
        !s)
      return s;
    if (n.IsNull()) return Status::Ok();
    if (Status s = LoadTrust(n["trust"]); !s) return s;
    if (Status s = Field(n, "discovery", "query_api_above_gpu_nodes",
                         cfg_.discovery.query_api_above_gpu_nodes,
                         [](const std::string& v) { return ParseInt(v, 0, 1'000'000); });
        !s)
      return s;
    if (Status s = Field(n, "discovery", "inference_probes_per_cycle",
                         cfg_.discovery.inference_probes_per_cycle,
                         [](const std::string& v) { return ParseInt(v, 0, 100000); });
        !s)
      return s;
    if (Status s = Field(n, "discovery", "cache", cfg_.discovery.cache, ParsePositiveDuration); !s)
      return s;
    if (Status s = Field(n, "discovery", "not_inference_cache", cfg_.discovery.not_inference_cache,
                         ParsePositiveDuration);
        !s)
      return s;
    return Field(n, "discovery", "error_cache", cfg_.discovery.error_cache, ParsePositiveDuration);
  }

  std::string file_;
  Config& cfg_;
};

// --shard I --total-shards N, or --pod NAME --total-shards N (kube-state-metrics' flags).
Status ApplyShardFlags(const CommandLine& f, ShardConfig& shard) {
  if (!f.shard && !f.pod && !f.total_shards) return Status::Ok();
  if (f.shard && f.pod)
    return Invalid(
        "--shard and --pod both give the shard: use one (--pod takes it from the pod "
        "name's ordinal)");
  if (!f.total_shards)
    return Invalid(std::string(f.shard ? "--shard" : "--pod") +
                   " needs --total-shards N (the number of shards)");
  auto total = ParseInt(*f.total_shards, 1, 1024);
  if (!total.ok()) return Invalid("--total-shards: " + total.error().message);
  shard.total = static_cast<uint32_t>(*total);
  if (f.shard) {
    auto index = ParseInt(*f.shard, 0, *total - 1);
    if (!index.ok())
      return Invalid("--shard: " + index.error().message + " (shards are numbered 0 to " +
                     "--total-shards - 1)");
    shard.index = static_cast<uint32_t>(*index);
  } else if (f.pod) {
    auto ordinal = PodOrdinal(*f.pod);
    if (!ordinal.ok()) return Invalid("--pod: " + ordinal.error().message);
    if (*ordinal >= shard.total)
      return Invalid("--pod " + Quote(*f.pod) + ": ordinal " + std::to_string(*ordinal) +
                     " is not below --total-shards " + std::to_string(shard.total) +
                     " (set --total-shards to the StatefulSet's replicas)");
    shard.index = *ordinal;
    shard.pod = *f.pod;
  } else if (shard.total > 1) {
    return Invalid("--total-shards " + std::to_string(shard.total) +
                   " needs --shard I or --pod NAME (which shard this process is)");
  }
  return Status::Ok();
}

// Flags win over the file. Each message names the flag.
Status ApplyFlags(const CommandLine& f, Config& cfg) {
  auto bad = [](std::string_view flag, const Error& e) {
    return Invalid("--" + std::string(flag) + ": " + e.message);
  };
  if (f.kubeconfig) cfg.kubeconfig = *f.kubeconfig;
  if (!f.contexts.empty()) {
    std::vector<ClusterConfig> clusters;
    for (const auto& ctx : f.contexts) {
      if (ctx.empty()) return Invalid("--context: empty context name");
      // A context also listed in the file keeps the file's `name` for its cluster label.
      ClusterConfig c{ctx, ""};
      for (const auto& fc : cfg.clusters)
        if (fc.context == ctx) c.name = fc.name;
      clusters.push_back(std::move(c));
    }
    cfg.clusters = std::move(clusters);
  }
  if (f.listen_address) {
    auto a = ParseListenAddress(*f.listen_address);
    if (!a.ok()) return bad("web.listen-address", a.error());
    cfg.web.listen_address = *f.listen_address;
  }
  if (f.web_config_file) {
    if (f.web_config_file->empty()) return Invalid("--web.config.file: empty file name");
    cfg.web.config_file = *f.web_config_file;
  }
  if (f.interval) {
    auto d = ParsePositiveDuration(*f.interval);
    if (!d.ok()) return bad("interval", d.error());
    cfg.interval = *d;
  }
  if (!f.targets.empty()) {
    cfg.targets.clear();
    for (const auto& t : f.targets) {
      auto pin = ParseTargetPin(t);
      if (!pin.ok()) return bad("target", pin.error());
      cfg.targets.push_back(std::move(*pin));
    }
  }
  if (f.log_level) {
    auto l = ParseLogLevel(*f.log_level);
    if (!l.ok()) return bad("log.level", l.error());
    cfg.log_level = *l;
  }
  if (f.state_file) cfg.state_file = *f.state_file;
  if (f.cluster_name) {
    auto name = ParseClusterName(*f.cluster_name);
    if (!name.ok()) return bad("cluster.name", name.error());
    cfg.cluster_name = std::move(*name);
  }
  if (Status s = ApplyShardFlags(f, cfg.shard); !s) return s;
  cfg.once = f.once;
  if (f.output) {
    auto o = ParseOutputFormat(*f.output);
    if (!o.ok()) return bad("output", o.error());
    if (!f.once)
      return Invalid(
          "--output: applies to --once only (the server offers /metrics, "
          "/snapshot.json and /snapshot.md)");
    cfg.output = *o;
  }
  return Status::Ok();
}

Status CheckClusterLabels(const Config& cfg, std::string_view file) {
  std::set<std::string> seen;
  for (const auto& c : cfg.clusters) {
    if (!seen.insert(c.Label()).second)
      return Invalid((file.empty() ? std::string() : std::string(file) + ": ") +
                     "clusters: cluster label " + Quote(c.Label()) +
                     " is used twice (give one of them a different `name`)");
  }
  return Status::Ok();
}

bool IsDnsLabelish(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_'))
      return false;
  return true;
}

}  // namespace

Result<OutputFormat> ParseOutputFormat(std::string_view text) {
  static constexpr std::pair<std::string_view, OutputFormat> kFormats[] = {
      {"prometheus", OutputFormat::kPrometheus},
      {"table", OutputFormat::kTable},
      {"json", OutputFormat::kJson},
      {"markdown", OutputFormat::kMarkdown}};
  for (const auto& [name, format] : kFormats)
    if (Trim(text) == name) return format;
  return Invalid("unknown output format " + Quote(text) +
                 " (use prometheus, table, json or markdown)");
}

Result<TargetPin> ParseTargetPin(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Invalid("invalid target " + Quote(text) + ": " + std::string(why) +
                   " (use ns/pod-prefix:port or ns/svc/name:port)");
  };
  std::string_view s = Trim(text);
  size_t colon = s.rfind(':');
  if (colon == std::string_view::npos) return bad("missing :port");
  auto port = ParseInt(s.substr(colon + 1), 1, 65535);
  if (!port.ok()) return bad("port must be a number in 1..65535");
  std::string_view path = s.substr(0, colon);
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t slash = path.find('/', start);
    parts.push_back(path.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  TargetPin pin;
  pin.port = *port;
  pin.text = std::string(s);
  if (parts.size() == 2) {
    pin.kind = TargetPin::Kind::kPodPrefix;
  } else if (parts.size() == 3 && parts[1] == "svc") {
    pin.kind = TargetPin::Kind::kService;
    parts.erase(parts.begin() + 1);
  } else {
    return bad("expected namespace/name or namespace/svc/name before the port");
  }
  if (!IsDnsLabelish(parts[0])) return bad("bad namespace " + Quote(parts[0]));
  if (!IsDnsLabelish(parts[1])) return bad("bad name " + Quote(parts[1]));
  pin.namespace_ = std::string(parts[0]);
  pin.name = std::string(parts[1]);
  return pin;
}

Result<uint64_t> ParseByteSize(std::string_view text) {
  std::string_view s = Trim(text);
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0) return Invalid("invalid size " + Quote(text) + " (use e.g. 64MiB, 1GiB, 1048576)");
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + i, n);
  if (ec != std::errc() || end != s.data() + i)
    return Invalid("size " + Quote(text) + " too large");
  std::string_view unit = Trim(s.substr(i));
  static constexpr std::pair<std::string_view, uint64_t> kUnits[] = {
      {"", 1},      {"B", 1},         {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30},
      {"KB", 1000}, {"MB", 1000'000}, {"GB", 1000'000'000}};
  for (const auto& [name, mult] : kUnits) {
    if (unit != name) continue;
    if (n > UINT64_MAX / mult) return Invalid("size " + Quote(text) + " too large");
    return n * mult;
  }
  return Invalid("invalid size " + Quote(text) + ": unknown unit " + Quote(unit) +
                 " (use B, KiB, MiB, GiB, KB, MB or GB)");
}

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Invalid("invalid listen address " + Quote(text) + ": " + std::string(why) +
                   " (use host:port, e.g. 127.0.0.1:9787, [::1]:9787 or :9787)");
  };
  std::string_view s = Trim(text);
  ListenAddress out;
  std::string_view port;
  if (s.starts_with('[')) {
    size_t close = s.find(']');
    if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':')
      return bad("expected [ipv6]:port");
    out.host = std::string(s.substr(1, close - 1));
    port = s.substr(close + 2);
  } else {
    size_t colon = s.rfind(':');
    if (colon == std::string_view::npos) return bad("missing :port");
    if (s.substr(0, colon).find(':') != std::string_view::npos)
      return bad("write IPv6 addresses in brackets");
    out.host = std::string(s.substr(0, colon));
    port = s.substr(colon + 1);
  }
  if (out.host.empty()) out.host = "0.0.0.0";
  auto p = ParseInt(port, 0, 65535);
  if (!p.ok()) return bad("port must be a number in 0..65535");
  out.port = *p;
  return out;
}

Result<uint32_t> PodOrdinal(std::string_view pod) {
  const std::string shown = Quote(pod);
  if (pod.find("$(") != std::string_view::npos)
    return Invalid(shown +
                   " is not a pod name: a variable was not expanded (set POD_NAME from "
                   "the downward API: fieldRef metadata.name)");
  size_t dash = pod.rfind('-');
  if (dash == std::string_view::npos)
    return Invalid(shown + " has no '-': expected a StatefulSet pod name such as gpuattr-2");
  std::string_view digits = pod.substr(dash + 1);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(),
                                     [](unsigned char c) { return std::isdigit(c) != 0; }))
    return Invalid(shown +
                   ": no ordinal after the last '-' (expected a StatefulSet pod name "
                   "such as gpuattr-2)");
  uint32_t n = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size())
    return Invalid(shown + ": ordinal " + Quote(digits) + " is too large");
  return n;
}

Result<Config> LoadConfig(const CommandLine& flags, std::string_view file_name,
                          std::string_view file_text) {
  Config cfg;
  cfg.config_file = std::string(file_name);
  if (!Trim(file_text).empty()) {
    FileLoader loader(file_name.empty() ? "config" : file_name, cfg);
    if (Status s = loader.Load(file_text); !s) return s;
  }
  if (Status s = CheckClusterLabels(cfg, file_name); !s) return s;
  if (Status s = ApplyFlags(flags, cfg); !s) return s;
  if (Status s = CheckClusterLabels(cfg, ""); !s) return s;
  if (!cfg.web.config_file.empty() &&
      (!cfg.web.tls_cert_file.empty() || !cfg.web.basic_auth_users.empty()))
    return Invalid(
        "web.config_file (--web.config.file) replaces the deprecated web.tls and web.basic_auth: "
        "set TLS and users in the web config file only (docs/app.md)");
  if (!cfg.cluster_name.empty() && cfg.clusters.size() > 1)
    return Invalid((flags.cluster_name ? std::string("--cluster.name")
                                       : std::string(file_name) + ": cluster_name") +
                   " names one cluster, but " + std::to_string(cfg.clusters.size()) +
                   " are configured: give each its `name` under clusters instead");
  return cfg;
}

Result<Config> LoadConfigFromFlags(const CommandLine& flags) {
  if (!flags.config_file) return LoadConfig(flags, "", "");
  std::ifstream in(*flags.config_file, std::ios::binary);
  if (!in)
    return Invalid("--config.file: cannot read " + Quote(*flags.config_file) + ": " +
                   std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Invalid("--config.file: error reading " + Quote(*flags.config_file));
  return LoadConfig(flags, *flags.config_file, text.str());
}

}  // namespace gpuattr::app
