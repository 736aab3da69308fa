// TLS and basic auth of the HTTP server, from the Prometheus exporter-toolkit web config file
// (--web.config.file, docs/app.md), the format every Prometheus exporter reads:
//
//   tls_server_config:
//     cert_file: server.crt            # relative paths start at the file's folder
//     key_file: server.key
//     client_auth_type: RequireAndVerifyClientCert   # optional
//     client_ca_file: clients-ca.crt                 # optional
//     min_version: TLS12               # TLS10..TLS13; max_version too
//   basic_auth_users:
//     prometheus: $2y$10$...           # bcrypt (htpasswd -nBC 10 "" | tr -d ':\n')
//
// The older web.tls and web.basic_auth keys of gpuattr's own config (plain password files) are
// still read for this release, with a deprecation warning.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/app/config.h"
#include "gpuattr/http/basic_auth.h"
#include "gpuattr/http/tls_server.h"
#include "gpuattr/util/status.h"

namespace gpuattr::app {

struct WebSecurity {
  std::optional<http::TlsOptions> tls;
  std::vector<http::BcryptUser> users;
};

// Parses a web config file's text. Relative file names are resolved against `base_dir`; every
// hash is checked (http::CheckBcryptHash). Errors read "FILE: KEY: problem" and never show a
// hash. Keys of the format that gpuattr does not implement (cipher_suites, curve_preferences,
// client_allowed_sans, headers) are errors rather than silently ignored.
Result<WebSecurity> ParseWebConfig(std::string_view file_name, std::string_view text,
                                   const std::filesystem::path& base_dir);
// Reads and parses the file. An unreadable file is an error naming it.
Result<WebSecurity> LoadWebConfigFile(const std::string& path);

// Deprecated: the password of each web.basic_auth user, read from its file (a trailing newline
// is dropped). Errors name the file, never the password.
struct PlainCredential {
  std::string username;
  std::string password;
};
Result<std::vector<PlainCredential>> ReadCredentials(const std::vector<BasicAuthUser>& users);

// What the server uses: the web config file when web.config_file is set; else the deprecated
// web.tls and web.basic_auth keys (passwords bcrypt-hashed in memory at start); else nothing.
Result<WebSecurity> LoadWebSecurity(const WebConfig& web);
// True when the deprecated keys are in use (Run logs a warning).
bool UsesDeprecatedWebKeys(const WebConfig& web);

}  // namespace gpuattr::app
