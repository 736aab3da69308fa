// LoadConfig: the settings table's defaults, then the config file, then the flags, then the
// checks that span settings. Each setting's key, flag and parser are in src/app/settings.cc.
#include "gpuattr/app/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "config_values.h"
#include "gpuattr/accounting/teams.h"
#include "gpuattr/app/settings.h"
#include "gpuattr/util/strings.h"
#include "gpuattr/util/yaml_reader.h"
#include "setting_ops.h"

namespace gpuattr::app {
namespace {

const Setting* FindKey(std::string_view key) {
  for (const Setting& s : Settings())
    if (s.key == key) return &s;
  return nullptr;
}

// The keys directly under `section` ("" is the top level), in the table's order: settings and
// sub-sections alike.
std::vector<std::string_view> ChildKeys(std::string_view section) {
  std::vector<std::string_view> keys;
  for (const Setting& s : Settings()) {
    std::string_view key = s.key;
    if (key.empty()) continue;
    if (!section.empty()) {
      if (!key.starts_with(section) || key.size() <= section.size() || key[section.size()] != '.')
        continue;
      key.remove_prefix(section.size() + 1);
    }
    key = key.substr(0, key.find('.'));
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  return keys;
}

std::vector<yaml::RefusedKey> RetiredUnder(std::string_view section) {
  std::vector<yaml::RefusedKey> out;
  for (const RetiredKey& k : RetiredKeys()) {
    const size_t dot = k.key.rfind('.');
    const std::string_view parent = dot == std::string_view::npos ? "" : k.key.substr(0, dot);
    if (parent == section) out.push_back({k.key.substr(parent.empty() ? 0 : dot + 1), k.reason});
  }
  return out;
}

// One mapping of the file: its keys are checked against the table, then each is read by its
// setting, or is a section read the same way. A null section is an empty one.
Status ReadSection(const yaml::Reader& r, const YAML::Node& node, const std::string& section,
                   Config& cfg) {
  const std::vector<std::string_view> keys = ChildKeys(section);
  GPUATTR_RETURN_IF_ERROR(r.Keys(node, section, keys, RetiredUnder(section)));
  for (std::string_view key : keys) {
    const YAML::Node value = yaml::Reader::Child(node, key);
    if (!value.IsDefined()) continue;
    const std::string path = yaml::Join(section, key);
    if (const Setting* s = FindKey(path))
      GPUATTR_RETURN_IF_ERROR(s->ops->read(r, value, path, cfg));
    else
      GPUATTR_RETURN_IF_ERROR(ReadSection(r, value, path, cfg));
  }
  return Status::Ok();
}

// Checks between keys of the file (the deprecated web.tls and web.basic_auth have no flags).
Status CheckFile(const yaml::Reader& r, const Config& cfg) {
  if (cfg.web.tls_cert_file.empty() != cfg.web.tls_key_file.empty())
    return r.Fail("web.tls", "set both cert_file and key_file, or neither");
  std::set<std::string> users;
  for (size_t i = 0; i < cfg.web.basic_auth_users.size(); ++i) {
    const std::string& name = cfg.web.basic_auth_users[i].username;
    if (!users.insert(name).second)
      return r.Fail(yaml::Index("web.basic_auth.users", i) + ".username",
                    "duplicate user " + Quote(name));
  }
  return Status::Ok();
}

// --shard I --total-shards N, or --pod NAME --total-shards N (kube-state-metrics' flags); the
// table has read each value, this checks them together.
Status CheckShardFlags(const CommandLine& f, ShardConfig& shard) {
  const bool by_index = f.Has("shard"), by_pod = f.Has("pod"), total = f.Has("total-shards");
  if (!by_index && !by_pod && !total) return Status::Ok();
  if (by_index && by_pod)
    return Invalid(
        "--shard and --pod both give the shard: use one (--pod takes it from the pod "
        "name's ordinal)");
  if (!total)
    return Invalid(std::string(by_index ? "--shard" : "--pod") +
                   " needs --total-shards N (the number of shards)");
  if (by_index) {
    if (shard.index >= shard.total)
      return Invalid("--shard: " + std::to_string(shard.index) + " is out of range [0, " +
                     std::to_string(shard.total - 1) +
                     "] (shards are numbered 0 to --total-shards - 1)");
  } else if (by_pod) {
    auto ordinal = PodOrdinal(shard.pod);
    if (!ordinal.ok()) return Invalid("--pod: " + ordinal.error().message);
    if (*ordinal >= shard.total)
      return Invalid("--pod " + Quote(shard.pod) + ": ordinal " + std::to_string(*ordinal) +
                     " is not below --total-shards " + std::to_string(shard.total) +
                     " (set --total-shards to the StatefulSet's replicas)");
    shard.index = *ordinal;
  } else if (shard.total > 1) {
    return Invalid("--total-shards " + std::to_string(shard.total) +
                   " needs --shard I or --pod NAME (which shard this process is)");
  }
  return Status::Ok();
}

// Flags win over the file. Each message names the flag.
Status ApplyFlags(const CommandLine& flags, Config& cfg) {
  for (const Setting& s : Settings()) {
    const std::vector<std::string>* values = flags.Values(s.flag);
    if (s.flag.empty() || !values || !s.ops || !s.ops->apply) continue;
    if (Status st = s.ops->apply(*values, cfg); !st)
      return Invalid("--" + s.flag + ": " + st.message());
  }
  GPUATTR_RETURN_IF_ERROR(CheckShardFlags(flags, cfg.shard));
  if (flags.Has("output") && !cfg.once)
    return Invalid(
        "--output: applies to --once only (the server offers /metrics, "
        "/snapshot.json and /snapshot.md)");
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

}  // namespace

Result<Config> LoadConfig(const CommandLine& flags, std::string_view file_name,
                          std::string_view file_text) {
  Config cfg;
  cfg.config_file = std::string(file_name);
  if (!Trim(file_text).empty()) {
    const yaml::Reader r(file_name.empty() ? "config" : std::string(file_name));
    GPUATTR_RETURN_IF_ERROR(
        r.Read(file_text, [&](const YAML::Node& root) { return ReadSection(r, root, "", cfg); }));
    GPUATTR_RETURN_IF_ERROR(CheckFile(r, cfg));
  }
  GPUATTR_RETURN_IF_ERROR(CheckClusterLabels(cfg, file_name));
  GPUATTR_RETURN_IF_ERROR(ApplyFlags(flags, cfg));
  GPUATTR_RETURN_IF_ERROR(CheckClusterLabels(cfg, ""));
  if (!cfg.web.config_file.empty() &&
      (!cfg.web.tls_cert_file.empty() || !cfg.web.basic_auth_users.empty()))
    return Invalid(
        "web.config_file (--web.config.file) replaces the deprecated web.tls and web.basic_auth: "
        "set TLS and users in the web config file only (docs/app.md)");
  if (!cfg.metric_allowlist.empty() && !cfg.metric_denylist.empty())
    return Invalid(
        "metric_allowlist (--metric-allowlist) and metric_denylist (--metric-denylist) are "
        "mutually exclusive, as in kube-state-metrics: set only one of them");
  if (Status s = accounting::CheckNamespaceLabelNames(cfg.accounting.namespace_labels); !s)
    return Invalid((file_name.empty() ? std::string() : std::string(file_name) + ": ") +
                   "accounting.namespace_labels: " + s.message());
  if (cfg.rightsizing.min_observation > cfg.rightsizing.window)
    return Invalid(
        (file_name.empty() ? std::string() : std::string(file_name) + ": ") +
        "rightsizing.min_observation (" + FormatDuration(cfg.rightsizing.min_observation) +
        ") is longer than rightsizing.window (" + FormatDuration(cfg.rightsizing.window) +
        "): no workload could ever be observed long enough");
  if (!cfg.cluster_name.empty() && cfg.clusters.size() > 1)
    return Invalid((flags.Has("cluster.name") ? std::string("--cluster.name")
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
