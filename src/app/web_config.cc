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
#include "gpuattr/util/yaml_reader.h"

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
  Parser(std::string_view file, std::filesystem::path base)
      : r_(std::string(file)), base_(std::move(base)) {}

  Result<WebSecurity> Parse(std::string_view text) {
    GPUATTR_RETURN_IF_ERROR(r_.Read(text, [this](const YAML::Node& root) { return Root(root); }));
    return std::move(out_);
  }

 private:
  // Keys of the format that gpuattr does not implement: errors rather than silently ignored.
  static std::vector<yaml::RefusedKey> Unsupported(std::initializer_list<std::string_view> keys) {
    std::vector<yaml::RefusedKey> out;
    for (auto k : keys) out.push_back({k, "not supported by gpuattr (docs/app.md lists what is)"});
    return out;
  }

  std::string Path(const std::string& name) const {
    if (name.empty()) return name;
    std::filesystem::path p(name);
    return p.is_absolute() ? name : (base_ / p).string();
  }

  static std::optional<int> TlsVersion(std::string_view v) {
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
    GPUATTR_RETURN_IF_ERROR(
        r_.Keys(root, "", {"tls_server_config", "http_server_config", "basic_auth_users"}));
    GPUATTR_RETURN_IF_ERROR(Tls(yaml::Reader::Child(root, "tls_server_config")));
    // http2 is accepted and has no effect: gpuattr serves HTTP/1.1.
    GPUATTR_RETURN_IF_ERROR(r_.Keys(yaml::Reader::Child(root, "http_server_config"),
                                    "http_server_config", {"http2"}, Unsupported({"headers"})));
    return Users(yaml::Reader::Child(root, "basic_auth_users"));
  }

  Status Tls(const YAML::Node& n) {
    const std::string path = "tls_server_config";
    GPUATTR_RETURN_IF_ERROR(r_.Keys(
        n, path,
        {"cert_file", "key_file", "client_auth_type", "client_ca_file", "min_version",
         "max_version", "prefer_server_cipher_suites", "cipher_suites", "curve_preferences"},
        Unsupported({"cert", "key", "client_ca", "client_allowed_sans"})));
    if (!n.IsDefined()) return Status::Ok();
    http::TlsOptions tls;
    std::string client_auth, min_version, max_version;
    for (auto [key, field] :
         {std::pair{"cert_file", &tls.cert_file}, std::pair{"key_file", &tls.key_file},
          std::pair{"client_ca_file", &tls.client_ca_file},
          std::pair{"client_auth_type", &client_auth}, std::pair{"min_version", &min_version},
          std::pair{"max_version", &max_version}}) {
      GPUATTR_RETURN_IF_ERROR(r_.String(n, path, key, *field));
    }
    if (tls.cert_file.empty() && tls.key_file.empty()) {
      if (!tls.client_ca_file.empty() || !client_auth.empty())
        return r_.Fail(path, "client certificates need TLS: set cert_file and key_file");
      return Status::Ok();  // an empty section: plain HTTP, as exporter-toolkit does
    }
    if (tls.cert_file.empty()) return r_.Fail(path + ".cert_file", "missing (key_file is set)");
    if (tls.key_file.empty()) return r_.Fail(path + ".key_file", "missing (cert_file is set)");
    tls.cert_file = Path(tls.cert_file);
    tls.key_file = Path(tls.key_file);
    tls.client_ca_file = Path(tls.client_ca_file);
    if (!client_auth.empty()) {
      auto a = ClientAuthType(client_auth);
      if (!a)
        return r_.Fail(path + ".client_auth_type",
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
      return r_.Fail(path + ".client_ca_file", "missing (client_auth_type " + client_auth +
                                                   " verifies client certificates against it)");
    for (auto [key, text, field] : {std::tuple{"min_version", &min_version, &tls.min_version},
                                    std::tuple{"max_version", &max_version, &tls.max_version}}) {
      if (text->empty()) continue;
      if (*text == "TLS10" || *text == "TLS11")
        return r_.Fail(path + "." + key, Quote(*text) +
                                             " is not offered: TLS 1.0 and 1.1 are deprecated "
                                             "(RFC 8996); use TLS12 or TLS13");
      auto v = TlsVersion(*text);
      if (!v)
        return r_.Fail(path + "." + key, "unknown version " + Quote(*text) + " (TLS12, TLS13)");
      *field = *v;
    }
    if (tls.max_version && tls.max_version < tls.min_version)
      return r_.Fail(path + ".max_version", "is below min_version");
    GPUATTR_RETURN_IF_ERROR(
        Names(n, path, "cipher_suites", http::CipherSuiteName, tls.cipher_suites));
    GPUATTR_RETURN_IF_ERROR(Names(n, path, "curve_preferences", http::CurveName, tls.curves));
    out_.tls = std::move(tls);
    return Status::Ok();
  }

  // A list of Go names turned into OpenSSL's by `convert`; an empty list is an error (Go would
  // offer nothing).
  Status Names(const YAML::Node& n, const std::string& path, const char* key,
               Result<std::string> (*convert)(std::string_view), std::vector<std::string>& out) {
    if (!yaml::Reader::Child(n, key).IsDefined()) return Status::Ok();
    std::vector<std::string> given;
    GPUATTR_RETURN_IF_ERROR(r_.StringList(n, path, key, given));
    if (given.empty()) return r_.Fail(path + "." + key, "empty: leave it out for the defaults");
    for (const std::string& g : given) {
      auto name = convert(g);
      if (!name.ok()) return r_.Fail(path + "." + key, name.error().message);
      out.push_back(std::move(*name));
    }
    return Status::Ok();
  }

  Status Users(const YAML::Node& n) {
    if (!n.IsDefined()) return Status::Ok();
    if (!n.IsMap()) return r_.Fail("basic_auth_users", "expected a mapping of user: bcrypt hash");
    for (const auto& kv : n) {
      if (!kv.first.IsScalar()) return r_.Fail("basic_auth_users", "non-scalar user name");
      const std::string user = kv.first.as<std::string>();
      const std::string path = "basic_auth_users." + user;
      if (user.empty()) return r_.Fail("basic_auth_users", "empty user name");
      if (user.find(':') != std::string::npos) return r_.Fail(path, "a user name cannot hold ':'");
      if (!kv.second.IsScalar()) return r_.Fail(path, "expected a bcrypt hash");
      std::string hash = kv.second.as<std::string>();
      if (Status s = http::CheckBcryptHash(hash); !s) return r_.Fail(path, s.message());
      out_.users.push_back({user, std::move(hash)});
    }
    return Status::Ok();
  }

  yaml::Reader r_;
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
