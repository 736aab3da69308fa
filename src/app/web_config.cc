#include "gpuattr/app/web_config.h"

#include <openssl/crypto.h>
#include <openssl/ssl.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <tuple>

#include "gpuattr/util/strings.h"
#include "yaml_file.h"

namespace gpuattr::app {
namespace {

using http::ClientAuth;

// bcrypt cost for the deprecated plain password files: the hash lives only in memory next to a
// password that is on disk anyway, so the lowest cost is enough and keeps checks fast.
constexpr int kDeprecatedHashCost = 4;

Error Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

class Parser {
 public:
  Parser(std::string_view file, std::filesystem::path base) : file_(file), base_(std::move(base)) {}

  Result<WebSecurity> Parse(std::string_view text) {
    if (Status s = ReadYamlFile(file_, text, [this](const YAML::Node& root) { return Root(root); });
        !s)
      return s.error();
    return std::move(out_);
  }

 private:
  Error Bad(std::string_view key, std::string_view problem) const {
    return Invalid(file_ + ": " + std::string(key) + ": " + std::string(problem));
  }

  // A mapping whose keys are known (`unsupported`: keys of the format gpuattr does not
  // implement). A null node is an empty map.
  Status Keys(const YAML::Node& node, const std::string& path,
              std::initializer_list<std::string_view> known,
              std::initializer_list<std::string_view> unsupported = {}) const {
    if (!node.IsDefined() || node.IsNull()) return Status::Ok();
    if (!node.IsMap()) return Bad(path.empty() ? "(top level)" : path, "expected a mapping");
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) return Bad(path.empty() ? "(top level)" : path, "non-scalar key");
      const std::string key = kv.first.as<std::string>();
      const std::string where = path.empty() ? key : path + "." + key;
      if (std::find(unsupported.begin(), unsupported.end(), key) != unsupported.end())
        return Bad(where, "not supported by gpuattr (docs/app.md lists what is)");
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        std::string list;
        for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        return Bad(where, "unknown key (known keys here: " + list + ")");
      }
    }
    return Status::Ok();
  }

  Result<std::string> String(const YAML::Node& map, const std::string& path,
                             const char* key) const {
    if (!map.IsDefined() || map.IsNull()) return std::string();
    YAML::Node v = map[key];
    if (!v.IsDefined() || v.IsNull()) return std::string();
    if (!v.IsScalar()) return Bad(path + "." + key, "expected a single value");
    return v.as<std::string>();
  }

  std::string Path(const std::string& name) const {
    if (name.empty()) return name;
    std::filesystem::path p(name);
    return p.is_absolute() ? name : (base_ / p).string();
  }

  static std::optional<int> TlsVersion(std::string_view v) {
    if (v == "TLS10") return TLS1_VERSION;
    if (v == "TLS11") return TLS1_1_VERSION;
    if (v == "TLS12") return TLS1_2_VERSION;
    if (v == "TLS13") return TLS1_3_VERSION;
    return std::nullopt;
  }

  static std::optional<ClientAuth> ClientAuthType(std::string_view v) {
    if (v == "NoClientCert") return ClientAuth::kNoClientCert;
    if (v == "RequestClientCert") return ClientAuth::kRequestClientCert;
    if (v == "RequireAnyClientCert") return ClientAuth::kRequireAnyClientCert;
    if (v == "VerifyClientCertIfGiven") return ClientAuth::kVerifyClientCertIfGiven;
    if (v == "RequireAndVerifyClientCert") return ClientAuth::kRequireAndVerifyClientCert;
    return std::nullopt;
  }

  Status Root(const YAML::Node& root) {
    if (Status s = Keys(root, "", {"tls_server_config", "http_server_config", "basic_auth_users"});
        !s)
      return s;
    if (!root.IsDefined() || root.IsNull()) return Status::Ok();
    if (Status s = Tls(root["tls_server_config"]); !s) return s;
    const YAML::Node http = root["http_server_config"];
    // http2 is accepted and has no effect: gpuattr serves HTTP/1.1.
    if (Status s = Keys(http, "http_server_config", {"http2"}, {"headers"}); !s) return s;
    return Users(root["basic_auth_users"]);
  }

  Status Tls(const YAML::Node& n) {
    const std::string path = "tls_server_config";
    if (Status s = Keys(n, path,
                        {"cert_file", "key_file", "client_auth_type", "client_ca_file",
                         "min_version", "max_version", "prefer_server_cipher_suites"},
                        {"cert", "key", "client_ca", "cipher_suites", "curve_preferences",
                         "client_allowed_sans"});
        !s)
      return s;
    if (!n.IsDefined() || n.IsNull()) return Status::Ok();
    http::TlsOptions tls;
    std::string client_auth, min_version, max_version;
    for (auto [key, field] :
         {std::pair{"cert_file", &tls.cert_file}, std::pair{"key_file", &tls.key_file},
          std::pair{"client_ca_file", &tls.client_ca_file},
          std::pair{"client_auth_type", &client_auth}, std::pair{"min_version", &min_version},
          std::pair{"max_version", &max_version}}) {
      auto v = String(n, path, key);
      if (!v.ok()) return v.status();
      *field = std::move(*v);
    }
    if (tls.cert_file.empty() && tls.key_file.empty()) {
      if (!tls.client_ca_file.empty() || !client_auth.empty())
        return Bad(path, "client certificates need TLS: set cert_file and key_file");
      return Status::Ok();  // an empty section: plain HTTP, as exporter-toolkit does
    }
    if (tls.cert_file.empty()) return Bad(path + ".cert_file", "missing (key_file is set)");
    if (tls.key_file.empty()) return Bad(path + ".key_file", "missing (cert_file is set)");
    tls.cert_file = Path(tls.cert_file);
    tls.key_file = Path(tls.key_file);
    tls.client_ca_file = Path(tls.client_ca_file);
    if (!client_auth.empty()) {
      auto a = ClientAuthType(client_auth);
      if (!a)
        return Bad(path + ".client_auth_type",
                   "unknown type " + Quote(client_auth) +
                       " (NoClientCert, RequestClientCert, RequireAnyClientCert, "
                       "VerifyClientCertIfGiven, RequireAndVerifyClientCert)");
      tls.client_auth = *a;
    } else if (!tls.client_ca_file.empty()) {
      tls.client_auth = ClientAuth::kRequireAndVerifyClientCert;  // exporter-toolkit's default
    }
    if ((tls.client_auth == ClientAuth::kVerifyClientCertIfGiven ||
         tls.client_auth == ClientAuth::kRequireAndVerifyClientCert) &&
        tls.client_ca_file.empty())
      return Bad(path + ".client_ca_file", "missing (client_auth_type " + client_auth +
                                               " verifies client certificates against it)");
    for (auto [key, text, field] : {std::tuple{"min_version", &min_version, &tls.min_version},
                                    std::tuple{"max_version", &max_version, &tls.max_version}}) {
      if (text->empty()) continue;
      auto v = TlsVersion(*text);
      if (!v) return Bad(path + "." + key, "unknown version " + Quote(*text) + " (TLS10..TLS13)");
      *field = *v;
    }
    if (tls.max_version && tls.max_version < tls.min_version)
      return Bad(path + ".max_version", "is below min_version");
    out_.tls = std::move(tls);
    return Status::Ok();
  }

  Status Users(const YAML::Node& n) {
    if (!n.IsDefined() || n.IsNull()) return Status::Ok();
    if (!n.IsMap()) return Bad("basic_auth_users", "expected a mapping of user: bcrypt hash");
    for (const auto& kv : n) {
      if (!kv.first.IsScalar()) return Bad("basic_auth_users", "non-scalar user name");
      const std::string user = kv.first.as<std::string>();
      const std::string path = "basic_auth_users." + user;
      if (user.empty()) return Bad("basic_auth_users", "empty user name");
      if (user.find(':') != std::string::npos) return Bad(path, "a user name cannot hold ':'");
      if (!kv.second.IsScalar()) return Bad(path, "expected a bcrypt hash");
      std::string hash = kv.second.as<std::string>();
      if (Status s = http::CheckBcryptHash(hash); !s) return Bad(path, s.message());
      out_.users.push_back({user, std::move(hash)});
    }
    return Status::Ok();
  }

  std::string file_;
  std::filesystem::path base_;
  WebSecurity out_;
};

}  // namespace

Result<WebSecurity> ParseWebConfig(std::string_view file_name, std::string_view text,
                                   const std::filesystem::path& base_dir) {
  return Parser(file_name, base_dir).Parse(text);
}

Result<WebSecurity> LoadWebConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Invalid("--web.config.file: cannot read " + Quote(path) + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Invalid("--web.config.file: error reading " + Quote(path));
  return ParseWebConfig(path, text.str(), std::filesystem::path(path).parent_path());
}

Result<std::vector<PlainCredential>> ReadCredentials(const std::vector<BasicAuthUser>& users) {
  std::vector<PlainCredential> out;
  for (const auto& u : users) {
    std::ifstream in(u.password_file, std::ios::binary);
    if (!in)
      return Invalid("web.basic_auth: cannot read password_file \"" + u.password_file +
                     "\" of user \"" + u.username + "\": " + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    std::string pw = text.str();
    if (!pw.empty() && pw.back() == '\n') pw.pop_back();
    if (!pw.empty() && pw.back() == '\r') pw.pop_back();
    if (pw.empty())
      return Invalid("web.basic_auth: password_file \"" + u.password_file + "\" of user \"" +
                     u.username + "\" is empty");
    out.push_back({u.username, std::move(pw)});
  }
  return out;
}

bool UsesDeprecatedWebKeys(const WebConfig& web) {
  return !web.tls_cert_file.empty() || !web.tls_key_file.empty() || !web.basic_auth_users.empty();
}

Result<WebSecurity> LoadWebSecurity(const WebConfig& web) {
  if (!web.config_file.empty()) return LoadWebConfigFile(web.config_file);
  WebSecurity out;
  if (!web.tls_cert_file.empty() || !web.tls_key_file.empty()) {
    http::TlsOptions tls;
    tls.cert_file = web.tls_cert_file;
    tls.key_file = web.tls_key_file;
    out.tls = std::move(tls);
  }
  auto plain = ReadCredentials(web.basic_auth_users);
  if (!plain.ok()) return plain.error();
  for (PlainCredential& c : *plain) {
    auto hash = http::BcryptHash(c.password, kDeprecatedHashCost);
    OPENSSL_cleanse(c.password.data(), c.password.size());
    if (!hash.ok())
      return Invalid("web.basic_auth: user " + Quote(c.username) + ": " + hash.error().message);
    out.users.push_back({c.username, std::move(*hash)});
  }
  return out;
}

}  // namespace gpuattr::app
