// TLS and bcrypt basic auth configured through the exporter-toolkit web config file
// (--web.config.file), in process and through the gpuattr binary; client certificates.
#include <arpa/inet.h>
#include <crypt.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "gpuattr/app/web_config.h"
#include "gpuattr/http/server.h"
#include "support/paths.h"
#include "support/subprocess.h"
#include "support/test_certs.h"
#include "test_paths.h"

namespace gpuattr::http {
namespace {

using metrics::SnapshotStore;

using gpuattr::testing::WriteUnreachableKubeconfig;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

const std::string kBinary = testing::DaemonBinary();

// A hash made by libcrypt itself ($2y$ as htpasswd -B writes it, $2b$ as Python's bcrypt).
std::string Bcrypt(const char* password, const char* prefix) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  EXPECT_TRUE(crypt_gensalt_rn(prefix, 4, nullptr, 0, salt, sizeof salt));
  crypt_data data{};
  const char* hash = crypt_r(password, salt, &data);
  EXPECT_TRUE(hash);
  return hash ? hash : "";
}

std::shared_ptr<SnapshotStore> Store() {
  auto store = std::make_shared<SnapshotStore>();
  auto s = std::make_shared<model::Snapshot>();
  s->complete = true;
  model::ClusterSnapshot c;
  c.cluster = "lab";
  c.latest.up = true;
  c.cycles = 1;
  s->clusters.push_back(std::move(c));
  store->Publish(std::move(s));
  return store;
}

class WebConfigFile : public ::testing::Test {
 protected:
  void SetUp() override {
    // httplib's TLS client writes with OpenSSL (write(2)) to sockets the server may have closed
    // after refusing a handshake; the daemon ignores SIGPIPE too.
    std::signal(SIGPIPE, SIG_IGN);
    dir_ = fs::temp_directory_path() /
           ("gpuattr-webcfg-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    pki_ = gpuattr::testing::WritePki(gpuattr::testing::MakeTestPki(), dir_ / "pki");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // web.yml in dir_, with paths relative to it.
  std::string Write(const std::string& text) {
    fs::path p = dir_ / "web.yml";
    std::ofstream(p) << text;
    return p.string();
  }
  std::string TlsAndUsers() {
    return "tls_server_config:\n  cert_file: pki/server.crt\n  key_file: pki/server.key\n"
           "basic_auth_users:\n  prometheus: " +
           Bcrypt("s3cret", "$2y$") + "\n  grafana: '" + Bcrypt("other", "$2b$") + "'\n";
  }
  std::unique_ptr<MetricsServer> StartFrom(const std::string& web_yml, ServerLimits limits = {}) {
    auto security = app::LoadWebConfigFile(web_yml);
    EXPECT_TRUE(security.ok()) << security.error().message;
    if (!security.ok()) return nullptr;
    ServerOptions opt;
    opt.host = "127.0.0.1";
    opt.port = 0;
    opt.tls = security->tls;
    opt.users = security->users;
    opt.limits = limits;
    auto s = MetricsServer::Start(opt, Store());
    EXPECT_TRUE(s.ok()) << s.error().message;
    return s.ok() ? std::move(*s) : nullptr;
  }
  std::unique_ptr<httplib::SSLClient> Client(int port) {
    auto cli = std::make_unique<httplib::SSLClient>("127.0.0.1", port);
    cli->set_ca_cert_path(pki_.ca_crt.c_str());
    cli->enable_server_certificate_verification(true);
    cli->set_connection_timeout(5s);
    cli->set_read_timeout(5s);
    return cli;
  }

  fs::path dir_;
  gpuattr::testing::PkiFiles pki_;
};

TEST_F(WebConfigFile, TlsAndBcryptUsers) {
  auto srv = StartFrom(Write(TlsAndUsers()));
  ASSERT_TRUE(srv);
  auto client = Client(srv->port());
  httplib::SSLClient& cli = *client;

  auto none = cli.Get("/metrics");
  ASSERT_TRUE(none) << httplib::to_string(none.error());
  EXPECT_EQ(none->status, 401);
  EXPECT_THAT(none->body, Not(HasSubstr("gpuattr_")));

  cli.set_basic_auth("prometheus", "s3cret");
  auto right = cli.Get("/metrics");
  ASSERT_TRUE(right);
  EXPECT_EQ(right->status, 200);
  EXPECT_THAT(right->body, HasSubstr("gpuattr_cluster_up{cluster=\"lab\"} 1"));
  EXPECT_THAT(right->body, HasSubstr("process_resident_memory_bytes "));

  cli.set_basic_auth("grafana", "other");  // the $2b$ user
  auto second = cli.Get("/snapshot.json");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 200);

  cli.set_basic_auth("prometheus", "wrong");
  auto wrong = cli.Get("/metrics");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);

  cli.set_basic_auth("nobody", "s3cret");
  auto unknown = cli.Get("/healthz");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 401);

  // gzip over TLS: the bytes compressed at publication.
  cli.set_basic_auth("prometheus", "s3cret");
  cli.set_decompress(false);
  auto gz = cli.Get("/metrics", {{"Accept-Encoding", "gzip"}});
  ASSERT_TRUE(gz);
  EXPECT_EQ(gz->status, 200);
  EXPECT_EQ(gz->get_header_value("Content-Encoding"), "gzip");

  // Plain HTTP on the TLS port gets no answer.
  httplib::Client plain("127.0.0.1", srv->port());
  plain.set_read_timeout(2s);
  auto p = plain.Get("/healthz");
  EXPECT_TRUE(!p || p->status != 200);
}

// Whether a TLS client offering only `version`, `ciphers` (TLS 1.2 suites) and `groups` completes
// a handshake with the server on `port`.
bool Handshakes(int port, int version, const char* ciphers, const char* groups) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                        SSL_CTX_free);
  SSL_CTX_set_min_proto_version(ctx.get(), version);
  SSL_CTX_set_max_proto_version(ctx.get(), version);
  if (ciphers && SSL_CTX_set_cipher_list(ctx.get(), ciphers) != 1) return false;
  if (groups && SSL_CTX_set1_groups_list(ctx.get(), groups) != 1) return false;
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval five{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &five, sizeof five);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = false;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    SSL* ssl = SSL_new(ctx.get());
    SSL_set_fd(ssl, fd);
    ok = SSL_connect(ssl) == 1;
    SSL_free(ssl);
  }
  ::close(fd);
  return ok;
}

TEST_F(WebConfigFile, CipherSuitesAndCurvesAreExporterToolkitsWithItsSecureDefaults) {
  const std::string cert =
      "tls_server_config:\n  cert_file: pki/server.crt\n"
      "  key_file: pki/server.key\n";
  {
    auto srv = StartFrom(Write(cert));
    ASSERT_TRUE(srv);
    // ECDHE with AEAD: offered. CBC, or TLS 1.1: not by default.
    EXPECT_TRUE(Handshakes(srv->port(), TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256", nullptr));
    EXPECT_TRUE(Handshakes(srv->port(), TLS1_2_VERSION, "ECDHE-ECDSA-CHACHA20-POLY1305", nullptr));
    EXPECT_FALSE(Handshakes(srv->port(), TLS1_2_VERSION, "ECDHE-ECDSA-AES128-SHA", nullptr));
    EXPECT_FALSE(Handshakes(srv->port(), TLS1_2_VERSION, "ECDHE-ECDSA-AES256-SHA384", nullptr));
    EXPECT_FALSE(Handshakes(srv->port(), TLS1_1_VERSION, "DEFAULT:@SECLEVEL=0", nullptr));
    EXPECT_TRUE(Handshakes(srv->port(), TLS1_3_VERSION, nullptr, "P-521"));
  }
  {
    // What a user lists is what is offered, in Go's names.
    auto srv = StartFrom(Write(cert + "  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA]\n"
                                      "  curve_preferences: [CurveP384]\n"));
    ASSERT_TRUE(srv);
    // (TLS 1.2 clients must list the certificate's curve, P-256, too.)
    EXPECT_TRUE(Handshakes(srv->port(), TLS1_2_VERSION, "ECDHE-ECDSA-AES128-SHA", "P-384:P-256"));
    EXPECT_FALSE(
        Handshakes(srv->port(), TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256", "P-384:P-256"));
    EXPECT_TRUE(Handshakes(srv->port(), TLS1_3_VERSION, nullptr, "P-384"));
    EXPECT_FALSE(Handshakes(srv->port(), TLS1_3_VERSION, nullptr, "X25519:P-256"));
  }
}

TEST_F(WebConfigFile, ClientCertificatesAreVerified) {
  auto srv =
      StartFrom(Write("tls_server_config:\n  cert_file: pki/server.crt\n"
                      "  key_file: pki/server.key\n  client_ca_file: pki/ca.crt\n"));
  ASSERT_TRUE(srv);
  auto without = Client(srv->port());
  auto refused = without->Get("/healthz");
  EXPECT_FALSE(refused && refused->status == 200);

  httplib::SSLClient with("127.0.0.1", srv->port(), pki_.client_crt.string(),
                          pki_.client_key.string());
  with.set_ca_cert_path(pki_.ca_crt.c_str());
  with.enable_server_certificate_verification(true);
  auto ok = with.Get("/healthz");
  ASSERT_TRUE(ok) << httplib::to_string(ok.error());
  EXPECT_EQ(ok->status, 200);

  // A certificate from another CA is not one of ours.
  auto other = gpuattr::testing::MakeTestPki();
  auto other_files = gpuattr::testing::WritePki(other, dir_ / "other");
  httplib::SSLClient stranger("127.0.0.1", srv->port(), other_files.client_crt.string(),
                              other_files.client_key.string());
  stranger.set_ca_cert_path(pki_.ca_crt.c_str());
  auto no = stranger.Get("/healthz");
  EXPECT_FALSE(no && no->status == 200);
}

TEST_F(WebConfigFile, AStalledTlsHandshakeIsClosedAtTheHeaderDeadline) {
  ServerLimits limits;
  limits.header_timeout = 1s;
  auto srv = StartFrom(Write(TlsAndUsers()), limits);
  ASSERT_TRUE(srv);
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(srv->port()));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::send(fd, "\x16\x03\x01", 3, MSG_NOSIGNAL), 3);  // a ClientHello that never ends
  const auto start = std::chrono::steady_clock::now();
  pollfd p{fd, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  char buf[64];
  EXPECT_LE(::recv(fd, buf, sizeof buf, 0), 0);  // closed, nothing said
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  ::close(fd);
  // Meanwhile and after, real clients are served.
  auto cli = Client(srv->port());
  cli->set_basic_auth("prometheus", "s3cret");
  auto ok = cli->Get("/healthz");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST_F(WebConfigFile, TheBinaryServesWhatTheFileSays) {
  const std::string web = Write(TlsAndUsers());
  gpuattr::testing::Child child = gpuattr::testing::SpawnChild(
      {kBinary, "--kubeconfig", WriteUnreachableKubeconfig(dir_), "--web.listen-address",
       "127.0.0.1:0", "--web.config.file", web, "--interval", "1h", "--state.file",
       (dir_ / "state.json").string()},
      gpuattr::testing::EnvironmentWithout({"KUBECONFIG"}), dir_);
  ASSERT_GT(child.pid, 0);
  const int port =
      gpuattr::testing::WaitForServingPort(child.err, 10s, 1, " tls=true basic_auth=true");
  ASSERT_GT(port, 0) << gpuattr::testing::SlurpFile(child.err);
  auto cli = Client(port);
  auto denied = cli->Get("/healthz");
  ASSERT_TRUE(denied) << httplib::to_string(denied.error());
  EXPECT_EQ(denied->status, 401);
  cli->set_basic_auth("prometheus", "s3cret");
  auto ok = cli->Get("/healthz");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  ::kill(child.pid, SIGTERM);
  EXPECT_EQ(gpuattr::testing::WaitChild(child.pid, 10s), 0);
  const std::string log = gpuattr::testing::SlurpFile(child.err);
  EXPECT_THAT(log, Not(HasSubstr("$2y$")));  // hashes never reach the log
  EXPECT_THAT(log, Not(HasSubstr("deprecated")));
}

TEST_F(WebConfigFile, TheBinaryRefusesABadFileWithExitTwo) {
  const std::string web = Write("basic_auth_users:\n  prometheus: hunter2\n");
  gpuattr::testing::Child child = gpuattr::testing::SpawnChild(
      {kBinary, "--kubeconfig", WriteUnreachableKubeconfig(dir_), "--web.listen-address",
       "127.0.0.1:0", "--web.config.file", web, "--state.file", (dir_ / "state.json").string()},
      gpuattr::testing::EnvironmentWithout({"KUBECONFIG"}), dir_);
  ASSERT_GT(child.pid, 0);
  EXPECT_EQ(gpuattr::testing::WaitChild(child.pid, 10s), 2);
  const std::string err = gpuattr::testing::SlurpFile(child.err);
  EXPECT_THAT(err, HasSubstr(web + ": basic_auth_users.prometheus: not a bcrypt hash"));
  EXPECT_THAT(err, Not(HasSubstr("hunter2")));
}

// The port of the binary's `nth` "serving" log line (1: at start, 2: after the first restart of
// the server by a reload), 0 when it did not come within 10 s.
int ServingPort(const gpuattr::testing::Child& child, size_t nth) {
  return gpuattr::testing::WaitForServingPort(child.err, 10s, nth);
}

bool LogSays(const gpuattr::testing::Child& child, const std::string& text, size_t times) {
  for (int i = 0; i < 1000; ++i) {
    const std::string err = gpuattr::testing::SlurpFile(child.err);
    size_t n = 0;
    for (size_t at = err.find(text); at != std::string::npos; at = err.find(text, at + 1)) ++n;
    if (n >= times) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

// Issue 25: SIGHUP killed the daemon silently. Now it reloads the configuration (here the web
// config file): an unusable file is logged and counted while the running server stays; a good
// one takes effect (other users), without a restart of the process.
TEST_F(WebConfigFile, SighupReloadsTheWebConfigAndKeepsTheOldOneWhenTheNewIsBad) {
  const std::string web = Write(TlsAndUsers());
  gpuattr::testing::Child child = gpuattr::testing::SpawnChild(
      {kBinary, "--kubeconfig", WriteUnreachableKubeconfig(dir_), "--web.listen-address",
       "127.0.0.1:0", "--web.config.file", web, "--interval", "1h", "--state.file",
       (dir_ / "state.json").string()},
      gpuattr::testing::EnvironmentWithout({"KUBECONFIG"}), dir_);
  ASSERT_GT(child.pid, 0);
  const int first = ServingPort(child, 1);
  ASSERT_GT(first, 0) << gpuattr::testing::SlurpFile(child.err);
  auto status = [&](int port, const char* user, const char* password, const char* path) {
    auto cli = Client(port);
    cli->set_basic_auth(user, password);
    auto r = cli->Get(path);
    return r ? r->status : -1;
  };
  ASSERT_EQ(status(first, "prometheus", "s3cret", "/healthz"), 200);

  // A plain password is no bcrypt hash: the reload fails, the old users still get in.
  Write("basic_auth_users:\n  prometheus: hunter2\n");
  ::kill(child.pid, SIGHUP);
  ASSERT_TRUE(LogSays(child, "configuration reload failed", 1))
      << gpuattr::testing::SlurpFile(child.err);
  EXPECT_EQ(status(first, "prometheus", "s3cret", "/healthz"), 200);
  {
    auto cli = Client(first);
    cli->set_basic_auth("prometheus", "s3cret");
    auto metrics = cli->Get("/metrics");
    ASSERT_TRUE(metrics);
    EXPECT_THAT(metrics->body, HasSubstr("\ngpuattr_config_last_reload_successful 0\n"));
  }

  // A good file with only grafana: after the reload, prometheus is refused.
  const std::string hash = Bcrypt("other", "$2b$");
  Write(
      "tls_server_config:\n  cert_file: pki/server.crt\n  key_file: pki/server.key\n"
      "basic_auth_users:\n  grafana: '" +
      hash + "'\n");
  ::kill(child.pid, SIGHUP);
  ASSERT_TRUE(LogSays(child, "msg=\"configuration reloaded\"", 1))
      << gpuattr::testing::SlurpFile(child.err);
  const int second = ServingPort(child, 2);
  ASSERT_GT(second, 0) << gpuattr::testing::SlurpFile(child.err);
  EXPECT_EQ(status(second, "prometheus", "s3cret", "/healthz"), 401);
  EXPECT_EQ(status(second, "grafana", "other", "/healthz"), 200);
  // The previous series stay served until the new sessions' first cycle publishes.
  std::string body;
  for (int i = 0; i < 100 && body.find("_reload_successful 1\n") == std::string::npos; ++i) {
    auto cli = Client(second);
    cli->set_basic_auth("grafana", "other");
    auto metrics = cli->Get("/metrics");
    ASSERT_TRUE(metrics);
    body = metrics->body;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_THAT(body, HasSubstr("\ngpuattr_config_last_reload_successful 1\n"));
  ::kill(child.pid, SIGTERM);
  EXPECT_EQ(gpuattr::testing::WaitChild(child.pid, 10s), 0);
  const std::string log = gpuattr::testing::SlurpFile(child.err);
  EXPECT_THAT(log, Not(HasSubstr(hash)));       // hashes never reach the log
  EXPECT_THAT(log, Not(HasSubstr("hunter2")));  // nor the bad file's password
}

}  // namespace
}  // namespace gpuattr::http
