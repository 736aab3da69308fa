// --web.config.file in the exporter-toolkit format, and the deprecated web.tls/web.basic_auth.
#include "gpuattr/app/web_config.h"

#include <crypt.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gpuattr/app/options.h"
#include "support/paths.h"

namespace gpuattr::app {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string Hash(const char* password, const char* prefix = "$2y$") {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (!crypt_gensalt_rn(prefix, 4, nullptr, 0, salt, sizeof salt)) return "";
  crypt_data data{};
  const char* h = crypt_r(password, salt, &data);
  return h ? h : "";
}

Result<WebSecurity> Parse(const std::string& text) {
  return ParseWebConfig("web.yml", text, "/etc/gpuattr");
}

std::string ErrorOf(const std::string& text) {
  auto r = Parse(text);
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? "" : r.error().message;
}

TEST(WebConfig, ReadsTheExporterToolkitFormat) {
  const std::string prom = Hash("s3cret"), graf = Hash("other", "$2b$");
  auto r = Parse(
      "tls_server_config:\n  cert_file: server.crt\n  key_file: /abs/server.key\n"
      "  client_ca_file: clients.crt\n  min_version: TLS13\n"
      "http_server_config:\n  http2: false\n"
      "basic_auth_users:\n  prometheus: " +
      prom + "\n  grafana: '" + graf + "'\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->tls);
  EXPECT_EQ(r->tls->cert_file, "/etc/gpuattr/server.crt");  // relative to the file's folder
  EXPECT_EQ(r->tls->key_file, "/abs/server.key");
  EXPECT_EQ(r->tls->client_ca_file, "/etc/gpuattr/clients.crt");
  // exporter-toolkit: a client CA without a client_auth_type verifies and requires.
  EXPECT_EQ(r->tls->client_auth, http::ClientAuth::kRequireAndVerifyClientCert);
  EXPECT_EQ(r->tls->min_version, TLS1_3_VERSION);
  ASSERT_EQ(r->users.size(), 2u);
  EXPECT_EQ(r->users[0].username, "prometheus");
  EXPECT_EQ(r->users[0].hash, prom);
  EXPECT_EQ(r->users[1].hash, graf);

  auto empty = Parse("");
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->tls);
  EXPECT_TRUE(empty->users.empty());
  auto only_users = Parse("basic_auth_users: {prometheus: '" + prom + "'}\n");
  ASSERT_TRUE(only_users.ok());
  EXPECT_FALSE(only_users->tls);
  auto request = Parse(
      "tls_server_config: {cert_file: c, key_file: k, client_auth_type: "
      "RequestClientCert}\n");
  ASSERT_TRUE(request.ok()) << request.error().message;
  EXPECT_EQ(request->tls->client_auth, http::ClientAuth::kRequestClientCert);
  EXPECT_EQ(request->tls->min_version, TLS1_2_VERSION);  // the default
}

TEST(WebConfig, ErrorsNameFileAndKeyAndNeverAHash) {
  EXPECT_THAT(ErrorOf("tls_server_config: {key_file: k}\n"),
              StartsWith("web.yml: tls_server_config.cert_file: missing"));
  EXPECT_THAT(ErrorOf("tls_server_config: {cert_file: c}\n"),
              StartsWith("web.yml: tls_server_config.key_file: missing"));
  EXPECT_THAT(ErrorOf("tls_server_config: {cert_file: c, key_file: k, client_auth_type: Maybe}\n"),
              StartsWith("web.yml: tls_server_config.client_auth_type: unknown type \"Maybe\""));
  EXPECT_THAT(ErrorOf("tls_server_config: {cert_file: c, key_file: k, client_auth_type: "
                      "RequireAndVerifyClientCert}\n"),
              StartsWith("web.yml: tls_server_config.client_ca_file: missing"));
  EXPECT_THAT(ErrorOf("tls_server_config: {cert_file: c, key_file: k, min_version: TLS14}\n"),
              StartsWith("web.yml: tls_server_config.min_version: unknown version"));
  EXPECT_THAT(ErrorOf("tls_server_config: {cert_file: c, key_file: k, min_version: TLS13, "
                      "max_version: TLS12}\n"),
              StartsWith("web.yml: tls_server_config.max_version: is below"));
  EXPECT_THAT(ErrorOf("tls_server_config: {cert_file: c, key_file: k, cipher_suites: [x]}\n"),
              StartsWith("web.yml: tls_server_config.cipher_suites: unknown cipher suite \"x\" "
                         "(one of TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, "));
  EXPECT_THAT(ErrorOf("tls_server_config: {cert_file: c, key_file: k, cipher_suites: "
                      "[TLS_AES_128_GCM_SHA256]}\n"),
              HasSubstr("is a TLS 1.3 suite: those are not configurable"));
  EXPECT_THAT(ErrorOf("tls_server_config: {cert_file: c, key_file: k, cipher_suites: []}\n"),
              StartsWith("web.yml: tls_server_config.cipher_suites: empty"));
  EXPECT_THAT(ErrorOf("tls_server_config: {cert_file: c, key_file: k, curve_preferences: "
                      "[P256]}\n"),
              StartsWith("web.yml: tls_server_config.curve_preferences: unknown curve \"P256\" "
                         "(CurveP256, CurveP384, CurveP521, X25519)"));
  for (const char* old : {"TLS10", "TLS11"})
    EXPECT_THAT(ErrorOf(std::string("tls_server_config: {cert_file: c, key_file: k, "
                                    "min_version: ") +
                        old + "}\n"),
                HasSubstr("is not offered: TLS 1.0 and 1.1 are deprecated (RFC 8996)"));
  EXPECT_THAT(ErrorOf("http_server_config: {headers: {X-Frame-Options: deny}}\n"),
              StartsWith("web.yml: http_server_config.headers: not supported"));
  EXPECT_THAT(ErrorOf("tls_config: {}\n"), StartsWith("web.yml: tls_config: unknown key"));
  EXPECT_THAT(ErrorOf("basic_auth_users: [a, b]\n"), StartsWith("web.yml: basic_auth_users: "));
  EXPECT_THAT(ErrorOf("basic_auth_users: {'a:b': x}\n"),
              StartsWith("web.yml: basic_auth_users.a:b"));
  const std::string plain = ErrorOf("basic_auth_users: {prometheus: hunter2}\n");
  EXPECT_THAT(plain, StartsWith("web.yml: basic_auth_users.prometheus: not a bcrypt hash"));
  EXPECT_THAT(plain, Not(HasSubstr("hunter2")));
  EXPECT_THAT(ErrorOf("a: [\n"), StartsWith("web.yml:"));
}

TEST(WebConfig, CipherSuitesAndCurvesInGoNamesBecomeOpenSsls) {
  auto r = Parse(
      "tls_server_config:\n  cert_file: c\n  key_file: k\n"
      "  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, "
      "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305]\n"
      "  curve_preferences: [X25519, CurveP521]\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->tls);
  EXPECT_EQ(r->tls->cipher_suites, (std::vector<std::string>{"ECDHE-RSA-AES256-GCM-SHA384",
                                                             "ECDHE-ECDSA-CHACHA20-POLY1305"}));
  EXPECT_EQ(r->tls->curves, (std::vector<std::string>{"X25519", "P-521"}));
  auto defaults = Parse("tls_server_config: {cert_file: c, key_file: k}\n");
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->tls->cipher_suites.empty()) << "empty: the secure defaults";
}

TEST(WebConfig, AnUnreadableFileIsNamed) {
  auto r = LoadWebConfigFile("/nonexistent/web.yml");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message,
              HasSubstr("--web.config.file: cannot read \"/nonexistent/web.yml\""));
}

TEST(WebConfig, TheFlagAndTheKeyReachTheConfigAndExcludeTheOldKeys) {
  auto flags = ParseCommandLine({"--web.config.file", "/etc/gpuattr/web.yml"});
  ASSERT_TRUE(flags.ok()) << flags.error().message;
  auto cfg = LoadConfig(*flags, "", "");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->web.config_file, "/etc/gpuattr/web.yml");
  auto from_file = LoadConfig(CommandLine{}, "c.yaml", "web: {config_file: web.yml}\n");
  ASSERT_TRUE(from_file.ok()) << from_file.error().message;
  EXPECT_EQ(from_file->web.config_file, "web.yml");
  auto both = LoadConfig(*flags, "c.yaml", "web: {tls: {cert_file: c, key_file: k}}\n");
  ASSERT_FALSE(both.ok());
  EXPECT_THAT(both.error().message, HasSubstr("replaces the deprecated web.tls"));
}

TEST(WebConfig, DeprecatedPasswordFilesBecomeBcryptUsers) {
  char path[] = "/tmp/gpuattr-webpw-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "s3cret\n", 7), 7);
  close(fd);
  WebConfig web;
  web.tls_cert_file = "c.pem";
  web.tls_key_file = "k.pem";
  web.basic_auth_users = {{"prom", path}};
  EXPECT_TRUE(UsesDeprecatedWebKeys(web));
  auto sec = LoadWebSecurity(web);
  unlink(path);
  ASSERT_TRUE(sec.ok()) << sec.error().message;
  ASSERT_TRUE(sec->tls);
  EXPECT_EQ(sec->tls->cert_file, "c.pem");
  ASSERT_EQ(sec->users.size(), 1u);
  EXPECT_THAT(sec->users[0].hash, StartsWith("$2b$"));
  auto auth = http::BasicAuth::Make(sec->users);
  ASSERT_TRUE(auth.ok());
  EXPECT_TRUE((*auth)->Check("Basic cHJvbTpzM2NyZXQ="));  // prom:s3cret
  EXPECT_FALSE((*auth)->Check("Basic cHJvbTpzM2NyZXR4"));

  EXPECT_FALSE(UsesDeprecatedWebKeys(WebConfig{}));
  auto none = LoadWebSecurity(WebConfig{});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->tls);
  EXPECT_TRUE(none->users.empty());
}

// docs/app.md's example web config file is one gpuattr accepts, and its hash is of "test".
TEST(WebConfig, TheDocumentedExampleIsValid) {
  const std::string doc =
      gpuattr::testing::ReadFile(gpuattr::testing::SourceDir() / "docs" / "app.md");
  const size_t start = doc.find("# /etc/gpuattr/web.yml\n");
  ASSERT_NE(start, std::string::npos) << "docs/app.md lost its web config example";
  const std::string example = doc.substr(start, doc.find("```", start) - start);
  auto r = ParseWebConfig("docs/app.md", example, "/etc/gpuattr");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->tls);
  EXPECT_EQ(r->tls->cert_file, "/etc/gpuattr/server.crt");
  ASSERT_EQ(r->users.size(), 1u);
  auto auth = http::BasicAuth::Make(r->users);
  ASSERT_TRUE(auth.ok());
  EXPECT_TRUE((*auth)->Check("Basic cHJvbWV0aGV1czp0ZXN0"));  // prometheus:test
}

}  // namespace
}  // namespace gpuattr::app
