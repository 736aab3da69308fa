#include "gpuattr/kube/kubeconfig.h"

#include <yaml-cpp/binary.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "gpuattr/util/strings.h"
#include "gpuattr/util/yaml_reader.h"

namespace gpuattr::kube {
namespace {

namespace fs = std::filesystem;

// Errors name the file and the key path: "kubeconfig PATH: clusters[\"c\"].cluster.server: ...".
yaml::Reader ReaderFor(const std::string& path) { return yaml::Reader("kubeconfig " + path); }

std::string ResolvePath(const fs::path& dir, const std::string& p) {
  if (p.empty() || fs::path(p).is_absolute()) return p;
  return (dir / p).lexically_normal().string();
}

// YAML -> JSON with Go-yaml-like scalar typing (plain scalars that look like numbers, booleans
// or null become those; quoted scalars stay strings).
nlohmann::json ToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Sequence: {
      auto arr = nlohmann::json::array();
      for (const auto& item : n) arr.push_back(ToJson(item));
      return arr;
    }
    case YAML::NodeType::Map: {
      auto obj = nlohmann::json::object();
      for (const auto& kv : n) obj[kv.first.Scalar()] = ToJson(kv.second);
      return obj;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted
      if (s == "true" || s == "false") return s == "true";
      if (s == "null" || s == "~") return nullptr;
      try {
        size_t used = 0;
        long long i = std::stoll(s, &used);
        if (used == s.size()) return i;
        double d = std::stod(s, &used);
        if (used == s.size()) return d;
      } catch (const std::exception&) {
      }
      return s;
    }
    default:
      return nullptr;
  }
}

Status ParseExec(const yaml::Reader& r, const YAML::Node& node, const std::string& where,
                 const fs::path& dir, ExecConfig& exec) {
  if (!node.IsMap()) return r.Fail(where, "expected a mapping");
  GPUATTR_RETURN_IF_ERROR(r.String(node, where, "apiVersion", exec.api_version));
  GPUATTR_RETURN_IF_ERROR(r.String(node, where, "command", exec.command));
  GPUATTR_RETURN_IF_ERROR(r.StringList(node, where, "args", exec.args));
  GPUATTR_RETURN_IF_ERROR(r.Bool(node, where, "provideClusterInfo", exec.provide_cluster_info));
  GPUATTR_RETURN_IF_ERROR(r.String(node, where, "interactiveMode", exec.interactive_mode));
  GPUATTR_RETURN_IF_ERROR(r.String(node, where, "installHint", exec.install_hint));
  if (exec.command.empty()) return r.Fail(where + ".command", "missing");
  // kubectl resolves a command holding a path separator against the kubeconfig's directory and
  // looks bare names up in PATH.
  if (exec.command.find('/') != std::string::npos) exec.command = ResolvePath(dir, exec.command);
  const YAML::Node env = yaml::Reader::Child(node, "env");
  if (!env.IsDefined()) return Status::Ok();
  GPUATTR_ASSIGN_OR_RETURN(auto items, r.Sequence(env, where + ".env", "a list of {name, value}"));
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string item_where = yaml::Index(where + ".env", i);
    if (!items[i].IsMap()) return r.Fail(item_where, "expected {name, value}");
    std::string name, value;
    GPUATTR_RETURN_IF_ERROR(r.String(items[i], item_where, "name", name));
    GPUATTR_RETURN_IF_ERROR(r.String(items[i], item_where, "value", value));
    if (name.empty()) return r.Fail(item_where + ".name", "missing");
    exec.env.emplace_back(name, value);
  }
  return Status::Ok();
}

// Iterates a `clusters`/`users`/`contexts` list, calling fn(name, body, where) per entry.
template <typename Fn>
Status ForEachNamed(const yaml::Reader& r, const YAML::Node& root, const char* list,
                    const char* body_key, Fn fn) {
  const YAML::Node items = yaml::Reader::Child(root, list);
  if (!items.IsDefined()) return Status::Ok();
  GPUATTR_ASSIGN_OR_RETURN(auto entries, r.Sequence(items, list));
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string at = yaml::Index(list, i);
    const YAML::Node& item = entries[i];
    if (!item.IsMap())
      return r.Fail(at, "expected a mapping with name and " + std::string(body_key));
    std::string name;
    GPUATTR_RETURN_IF_ERROR(r.String(item, at, "name", name));
    if (name.empty()) return r.Fail(at + ".name", "missing");
    const std::string where = std::string(list) + "[" + Quote(name) + "]." + body_key;
    const YAML::Node raw = yaml::Reader::Child(item, body_key);
    // (Never assign to `raw`: yaml-cpp assignment writes through into the document.)
    const YAML::Node body = raw.IsDefined() ? raw : YAML::Node(YAML::NodeType::Map);
    if (!body.IsMap()) return r.Fail(where, "expected a mapping");
    GPUATTR_RETURN_IF_ERROR(fn(name, body, where));
  }
  return Status::Ok();
}

// clusters[].cluster: server, TLS settings, CA and the exec plugin's cluster extension.
Status ParseCluster(const yaml::Reader& r, const YAML::Node& c, const std::string& where,
                    const fs::path& dir, Kubeconfig::Cluster& cl) {
  GPUATTR_RETURN_IF_ERROR(r.String(c, where, "server", cl.server));
  GPUATTR_RETURN_IF_ERROR(r.String(c, where, "certificate-authority", cl.certificate_authority));
  GPUATTR_RETURN_IF_ERROR(
      r.String(c, where, "certificate-authority-data", cl.certificate_authority_data));
  GPUATTR_RETURN_IF_ERROR(r.String(c, where, "tls-server-name", cl.tls_server_name));
  GPUATTR_RETURN_IF_ERROR(r.String(c, where, "proxy-url", cl.proxy_url));
  GPUATTR_RETURN_IF_ERROR(
      r.Bool(c, where, "insecure-skip-tls-verify", cl.insecure_skip_tls_verify));
  cl.certificate_authority = ResolvePath(dir, cl.certificate_authority);
  const YAML::Node ext = yaml::Reader::Child(c, "extensions");
  if (ext.IsSequence()) {
    for (const auto& e : ext) {
      if (!e.IsMap()) continue;
      const YAML::Node name = e["name"], extension = e["extension"];  // (const: no insertion)
      if (name.IsScalar() && name.Scalar() == "client.authentication.k8s.io/exec" &&
          extension.IsDefined())
        cl.exec_extension_json = ToJson(extension).dump();  // `extension: null` too: "null"
    }
  }
  return Status::Ok();
}

// users[].user: client certificate and key, token, basic auth, auth-provider, exec plugin.
Status ParseUser(const yaml::Reader& r, const YAML::Node& u, const std::string& where,
                 const fs::path& dir, Kubeconfig::User& us) {
  GPUATTR_RETURN_IF_ERROR(r.String(u, where, "client-certificate", us.client_certificate));
  GPUATTR_RETURN_IF_ERROR(
      r.String(u, where, "client-certificate-data", us.client_certificate_data));
  GPUATTR_RETURN_IF_ERROR(r.String(u, where, "client-key", us.client_key));
  GPUATTR_RETURN_IF_ERROR(r.String(u, where, "client-key-data", us.client_key_data));
  GPUATTR_RETURN_IF_ERROR(r.String(u, where, "token", us.token));
  GPUATTR_RETURN_IF_ERROR(r.String(u, where, "tokenFile", us.token_file));
  GPUATTR_RETURN_IF_ERROR(r.String(u, where, "username", us.username));
  GPUATTR_RETURN_IF_ERROR(r.String(u, where, "password", us.password));
  us.client_certificate = ResolvePath(dir, us.client_certificate);
  us.client_key = ResolvePath(dir, us.client_key);
  us.token_file = ResolvePath(dir, us.token_file);
  const YAML::Node ap = yaml::Reader::Child(u, "auth-provider");
  if (ap.IsDefined()) {
    if (!ap.IsMap()) return r.Fail(where + ".auth-provider", "expected a mapping");
    GPUATTR_RETURN_IF_ERROR(r.String(ap, where + ".auth-provider", "name", us.auth_provider));
    if (us.auth_provider.empty()) us.auth_provider = "(unnamed)";
  }
  const YAML::Node ex = yaml::Reader::Child(u, "exec");
  if (ex.IsDefined()) {
    ExecConfig exec;
    GPUATTR_RETURN_IF_ERROR(ParseExec(r, ex, where + ".exec", dir, exec));
    us.exec = std::move(exec);
  }
  return Status::Ok();
}

Status ParseDocument(const yaml::Reader& r, const YAML::Node& root, const std::string& path,
                     Kubeconfig& out) {
  const fs::path dir = fs::path(path).parent_path();
  if (!root.IsDefined() || root.IsNull()) return Status::Ok();  // an empty file: an empty config
  if (!root.IsMap()) return r.Fail("", "expected a mapping");
  GPUATTR_RETURN_IF_ERROR(r.String(root, "", "current-context", out.current_context));
  GPUATTR_RETURN_IF_ERROR(ForEachNamed(
      r, root, "clusters", "cluster",
      [&](const std::string& name, const YAML::Node& c, const std::string& where) -> Status {
        Kubeconfig::Cluster cl;
        cl.source = path;
        GPUATTR_RETURN_IF_ERROR(ParseCluster(r, c, where, dir, cl));
        out.clusters[name] = std::move(cl);  // within one file the last entry wins (like kubectl)
        return Status::Ok();
      }));
  GPUATTR_RETURN_IF_ERROR(ForEachNamed(
      r, root, "users", "user",
      [&](const std::string& name, const YAML::Node& u, const std::string& where) -> Status {
        Kubeconfig::User us;
        us.source = path;
        GPUATTR_RETURN_IF_ERROR(ParseUser(r, u, where, dir, us));
        out.users[name] = std::move(us);
        return Status::Ok();
      }));
  return ForEachNamed(
      r, root, "contexts", "context",
      [&](const std::string& name, const YAML::Node& c, const std::string& where) -> Status {
        Kubeconfig::Context cx;
        cx.source = path;
        GPUATTR_RETURN_IF_ERROR(r.String(c, where, "cluster", cx.cluster));
        GPUATTR_RETURN_IF_ERROR(r.String(c, where, "user", cx.user));
        GPUATTR_RETURN_IF_ERROR(r.String(c, where, "namespace", cx.namespace_));
        out.contexts[name] = std::move(cx);
        return Status::Ok();
      });
}

enum class ReadOutcome { kOk, kMissing, kError };

ReadOutcome ReadWholeFile(const std::string& path, std::string& out, std::string& why) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return ReadOutcome::kMissing;
  if (fs::is_directory(path, ec)) {
    why = "is a directory";
    return ReadOutcome::kError;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = std::strerror(errno);
    return ReadOutcome::kError;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return ReadOutcome::kOk;
}

std::string JoinFiles(const std::vector<std::string>& files) {
  std::string s;
  for (const auto& f : files) s += (s.empty() ? "" : ", ") + f;
  return s.empty() ? "(none)" : s;
}

// Reads a file named by a kubeconfig key (certificate-authority, client-key, ...).
Result<std::string> ReadReferencedFile(const std::string& path, const std::string& what) {
  std::string data, why;
  switch (ReadWholeFile(path, data, why)) {
    case ReadOutcome::kOk:
      return data;
    case ReadOutcome::kMissing:
      return MakeError(ErrorCode::kNotFound, what + ": cannot read " + path + ": no such file");
    case ReadOutcome::kError:
      break;
  }
  return MakeError(ErrorCode::kInvalidArgument, what + ": cannot read " + path + ": " + why);
}

Result<std::string> DecodeData(const std::string& b64, const std::string& what) {
  // Tolerate line breaks and spaces (kubeconfigs written by hand or wrapped by tools).
  std::string compact;
  for (char c : b64)
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') compact += c;
  std::vector<unsigned char> bytes = YAML::DecodeBase64(compact);
  if (bytes.empty() && !compact.empty())
    return MakeError(ErrorCode::kInvalidArgument, what + ": not valid base64");
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace

KubeconfigSource KubeconfigSource::FromEnvironment(std::string explicit_path) {
  KubeconfigSource s;
  s.explicit_path = std::move(explicit_path);
  if (const char* k = std::getenv("KUBECONFIG")) s.kubeconfig = k;
  if (const char* h = std::getenv("HOME")) s.home = h;
  return s;
}

std::vector<std::string> KubeconfigFiles(const KubeconfigSource& source) {
  if (!source.explicit_path.empty()) return {source.explicit_path};
  std::vector<std::string> files;
  if (source.kubeconfig && !source.kubeconfig->empty()) {
    std::set<std::string> seen;
    std::stringstream ss(*source.kubeconfig);
    std::string entry;
    while (std::getline(ss, entry, ':')) {
      if (entry.empty() || !seen.insert(entry).second) continue;
      files.push_back(entry);
    }
    if (!files.empty()) return files;
  }
  return {(fs::path(source.home) / ".kube" / "config").string()};
}

Result<Kubeconfig> ParseKubeconfig(const std::string& text, const std::string& path) {
  Kubeconfig out;
  out.files.push_back(path);
  const yaml::Reader r = ReaderFor(path);
  GPUATTR_RETURN_IF_ERROR(
      r.Read(text, [&](const YAML::Node& root) { return ParseDocument(r, root, path, out); }));
  return out;
}

void MergeKubeconfig(Kubeconfig& into, const Kubeconfig& later) {
  for (const auto& f : later.files) into.files.push_back(f);
  for (const auto& [name, c] : later.clusters) into.clusters.emplace(name, c);
  for (const auto& [name, u] : later.users) into.users.emplace(name, u);
  for (const auto& [name, c] : later.contexts) into.contexts.emplace(name, c);
  if (into.current_context.empty()) into.current_context = later.current_context;
}

Result<Kubeconfig> LoadKubeconfig(const KubeconfigSource& source) {
  const bool from_list =
      source.explicit_path.empty() && source.kubeconfig && !source.kubeconfig->empty();
  std::vector<std::string> files = KubeconfigFiles(source);
  Kubeconfig merged;
  for (const auto& name : files) {
    std::string path = fs::absolute(name).lexically_normal().string();
    std::string text, why;
    switch (ReadWholeFile(path, text, why)) {
      case ReadOutcome::kMissing:
        if (from_list) continue;  // kubectl ignores missing KUBECONFIG entries
        if (!source.explicit_path.empty())
          return MakeError(ErrorCode::kNotFound,
                           "--kubeconfig " + source.explicit_path + ": no such file");
        return MakeError(ErrorCode::kNotFound, "no kubeconfig: KUBECONFIG is not set and " + path +
                                                   " does not exist (pass --kubeconfig PATH)");
      case ReadOutcome::kError:
        return MakeError(ErrorCode::kInvalidArgument,
                         "kubeconfig " + path + ": cannot read: " + why);
      case ReadOutcome::kOk:
        break;
    }
    Result<Kubeconfig> one = ParseKubeconfig(text, path);
    if (!one.ok()) return one.error();
    MergeKubeconfig(merged, *one);
  }
  if (merged.files.empty()) {
    return MakeError(ErrorCode::kNotFound, "no kubeconfig: none of the files in KUBECONFIG (" +
                                               JoinFiles(files) + ") exists");
  }
  return merged;
}

namespace {

// PEM material given inline (`<key>-data`, base64) or as a file (`<key>`); inline wins, as in
// kubectl. Leaves `out` empty when neither is set. Errors start with `where` and name the key.
Status ReadPem(const std::string& data, const std::string& file, const std::string& where,
               const std::string& key, std::string& out) {
  Result<std::string> pem = !data.empty()   ? DecodeData(data, where + key + "-data")
                            : !file.empty() ? ReadReferencedFile(file, where + key)
                                            : Result<std::string>(std::string());
  if (!pem.ok()) return pem.error();
  out = std::move(*pem);
  return Status::Ok();
}

// The cluster half of a connection: server, TLS settings and CA.
Status ConnectCluster(const std::string& name, const Kubeconfig::Cluster& c,
                      ClusterConnection& conn) {
  const std::string where = "cluster " + Quote(name) + " in kubeconfig " + c.source + ": ";
  if (c.server.empty()) return MakeError(ErrorCode::kInvalidArgument, where + "server: missing");
  conn.server = c.server;
  conn.tls_server_name = c.tls_server_name;
  conn.proxy_url = c.proxy_url;
  conn.insecure_skip_tls_verify = c.insecure_skip_tls_verify;
  if (c.insecure_skip_tls_verify &&
      (!c.certificate_authority.empty() || !c.certificate_authority_data.empty())) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        where + "certificate-authority and insecure-skip-tls-verify cannot both be set");
  }
  GPUATTR_RETURN_IF_ERROR(ReadPem(c.certificate_authority_data, c.certificate_authority, where,
                                  "certificate-authority", conn.ca_pem));
  if (c.certificate_authority_data.empty()) conn.ca_file = c.certificate_authority;
  return Status::Ok();
}

// The user half of a connection: client certificate and key, token, basic auth, exec plugin.
Status ConnectUser(const std::string& context, const std::string& name, const Kubeconfig::User& u,
                   const Kubeconfig::Cluster& cluster, ClusterConnection& conn) {
  conn.user_source = u.source;
  const std::string where = "user " + Quote(name) + " in kubeconfig " + u.source + ": ";
  if (!u.auth_provider.empty()) {
    return MakeError(ErrorCode::kUnsupported,
                     "context " + Quote(context) + ": user " + Quote(name) +
                         " uses auth-provider " + Quote(u.auth_provider) +
                         ", which is unsupported: use an exec credential plugin (e.g. "
                         "gke-gcloud-auth-plugin)");
  }
  GPUATTR_RETURN_IF_ERROR(ReadPem(u.client_certificate_data, u.client_certificate, where,
                                  "client-certificate", conn.client_cert_pem));
  GPUATTR_RETURN_IF_ERROR(
      ReadPem(u.client_key_data, u.client_key, where, "client-key", conn.client_key_pem));
  if (conn.client_cert_pem.empty() != conn.client_key_pem.empty()) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        where + (conn.client_cert_pem.empty() ? "client-key is set but client-certificate is not"
                                              : "client-certificate is set but client-key is not"));
  }
  conn.token = u.token;
  conn.token_file = u.token_file;
  conn.username = u.username;
  conn.password = u.password;
  conn.exec = u.exec;
  if (conn.exec) conn.exec->cluster_config_json = cluster.exec_extension_json;
  return Status::Ok();
}

}  // namespace

Result<std::vector<ClusterConnection>> SelectContexts(const Kubeconfig& config,
                                                      const std::vector<std::string>& contexts) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const auto& c : contexts)
    if (seen.insert(c).second) names.push_back(c);
  const std::string files = JoinFiles(config.files);
  if (names.empty()) {
    if (config.current_context.empty()) {
      return MakeError(ErrorCode::kInvalidArgument, "no current-context is set in kubeconfig (" +
                                                        files + "); pass --context NAME");
    }
    names.push_back(config.current_context);
  }

  std::vector<ClusterConnection> out;
  for (const auto& name : names) {
    auto cx = config.contexts.find(name);
    if (cx == config.contexts.end()) {
      return MakeError(ErrorCode::kNotFound,
                       "context " + Quote(name) + " not found in kubeconfig (" + files + ")");
    }
    const Kubeconfig::Context& context = cx->second;
    const std::string in_context = "context " + Quote(name) + " in " + context.source + ": ";
    ClusterConnection conn;
    conn.context_name = name;
    conn.kubeconfig_path = context.source;
    conn.cluster_name = context.cluster;
    conn.user_name = context.user;
    if (!context.namespace_.empty()) conn.default_namespace = context.namespace_;

    auto cl = config.clusters.find(context.cluster);
    if (context.cluster.empty() || cl == config.clusters.end()) {
      return MakeError(ErrorCode::kNotFound, in_context + "cluster " + Quote(context.cluster) +
                                                 " not found in kubeconfig (" + files + ")");
    }
    GPUATTR_RETURN_IF_ERROR(ConnectCluster(cl->first, cl->second, conn));
    if (!context.user.empty()) {
      auto us = config.users.find(context.user);
      if (us == config.users.end()) {
        return MakeError(ErrorCode::kNotFound, in_context + "user " + Quote(context.user) +
                                                   " not found in kubeconfig (" + files + ")");
      }
      GPUATTR_RETURN_IF_ERROR(ConnectUser(name, us->first, us->second, cl->second, conn));
    }
    out.push_back(std::move(conn));
  }
  return out;
}

Result<std::vector<ClusterConnection>> LoadConnections(const KubeconfigSource& source,
                                                       const std::vector<std::string>& contexts) {
  auto config = LoadKubeconfig(source);
  if (!config.ok()) return config.error();
  return SelectContexts(*config, contexts);
}

std::string CredentialsInClearText(const ClusterConnection& c) {
  if (ToLower(c.server.substr(0, c.server.find("://"))) != "http") return "";
  if (!c.token.empty()) return "token";
  if (!c.token_file.empty()) return "tokenFile";
  if (c.exec) return "exec";
  if (!c.username.empty() || !c.password.empty()) return "basic";
  return "";
}

}  // namespace gpuattr::kube
