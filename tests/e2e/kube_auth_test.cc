// Every kubeconfig auth mode end to end over real TLS on 127.0.0.1: a small httplib::SSLServer
// (port chosen by the OS) checks the bearer token or the client certificate; kubeconfigs, CA files
// and exec plugins (shell scripts run through their shebang) live in a temp dir.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "gpuattr/kube/http_transport.h"
#include "gpuattr/kube/kubeconfig.h"
#include "gpuattr/util/log.h"
#include "support/paths.h"
#include "support/test_certs.h"

namespace gpuattr::kube {
namespace {

namespace fs = std::filesystem;
using gpuattr::testing::Base64;
using gpuattr::testing::CertAndKey;
using gpuattr::testing::MakeClientCert;
using gpuattr::testing::MakeServerCert;
using gpuattr::testing::MakeTestPki;
using gpuattr::testing::PkiFiles;
using gpuattr::testing::ReadFile;
using gpuattr::testing::TestPki;
using gpuattr::testing::WritePki;
using ::testing::HasSubstr;
using ::testing::Not;

void WriteText(const fs::path& p, const std::string& text, bool executable = false) {
  {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << text;
  }
  if (executable) {
    fs::permissions(p, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  }
}

// What the server saw on its last request.
struct Seen {
  std::string authorization, client_cn, sni, host, path;
  int requests = 0;
};

// A TLS apiserver stand-in. Client certificates are requested (not required) and verified
// against `client_ca`; `handler` decides the answer.
class TlsServer {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&, const Seen&)>;

  TlsServer(const CertAndKey& server, const CertAndKey& client_ca, Handler handler)
      : handler_(std::move(handler)) {
    server_ = std::make_unique<httplib::SSLServer>([&](SSL_CTX& ctx) {
      BIO* cb = BIO_new_mem_buf(server.cert_pem.data(), static_cast<int>(server.cert_pem.size()));
      X509* cert = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr);
      BIO_free(cb);
      BIO* kb = BIO_new_mem_buf(server.key_pem.data(), static_cast<int>(server.key_pem.size()));
      EVP_PKEY* key = PEM_read_bio_PrivateKey(kb, nullptr, nullptr, nullptr);
      BIO_free(kb);
      BIO* cab =
          BIO_new_mem_buf(client_ca.cert_pem.data(), static_cast<int>(client_ca.cert_pem.size()));
      X509* ca = PEM_read_bio_X509(cab, nullptr, nullptr, nullptr);
      BIO_free(cab);
      bool ok = cert && key && ca && SSL_CTX_use_certificate(&ctx, cert) == 1 &&
                SSL_CTX_use_PrivateKey(&ctx, key) == 1;
      X509_STORE_add_cert(SSL_CTX_get_cert_store(&ctx), ca);
      SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER, [](int, X509_STORE_CTX*) { return 1; });
      SSL_CTX_set_tlsext_servername_callback(&ctx, &TlsServer::OnSni);
      SSL_CTX_set_tlsext_servername_arg(&ctx, this);
      X509_free(cert);
      EVP_PKEY_free(key);
      X509_free(ca);
      return ok;
    });
    server_->Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
      Seen now;
      {
        std::lock_guard<std::mutex> lock(mu_);
        seen_.authorization = req.get_header_value("Authorization");
        seen_.host = req.get_header_value("Host");
        seen_.path = req.path;
        seen_.client_cn.clear();
        if (req.ssl) {
          X509* peer = SSL_get1_peer_certificate(const_cast<SSL*>(req.ssl));
          if (peer && SSL_get_verify_result(req.ssl) == X509_V_OK) {
            char cn[256] = {0};
            X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn, sizeof cn);
            seen_.client_cn = cn;
          }
          X509_free(peer);
        }
        seen_.sni = last_sni_;
        ++seen_.requests;
        now = seen_;
      }
      handler_(req, res, now);
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    // httplib's stop() is a no-op until the accept loop runs: a test that makes no request would
    // otherwise hang in the destructor. Bounded: 5 s at most.
    for (int i = 0; i < 500 && !server_->is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ~TlsServer() {
    server_->stop();
    thread_.join();
  }
  int port() const { return port_; }
  httplib::Server& raw() { return *server_; }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }
  Seen seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

 private:
  static int OnSni(SSL* ssl, int*, void* arg) {
    auto* self = static_cast<TlsServer*>(arg);
    const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    std::lock_guard<std::mutex> lock(self->mu_);
    self->last_sni_ = name ? name : "";
    return SSL_TLSEXT_ERR_OK;
  }

  Handler handler_;
  std::unique_ptr<httplib::SSLServer> server_;
  std::thread thread_;
  int port_ = -1;
  std::mutex mu_;
  Seen seen_;
  std::string last_sni_;
};

// 200 "ok" when the bearer token equals `token` (or a client cert was verified when `token` is
// empty), 401 otherwise.
TlsServer::Handler RequireToken(std::function<std::string()> token) {
  return [token](const httplib::Request&, httplib::Response& res, const Seen& seen) {
    std::string want = token();
    bool ok = want.empty() ? !seen.client_cn.empty() : seen.authorization == "Bearer " + want;
    res.status = ok ? 200 : 401;
    res.set_content(ok ? R"({"kind":"APIVersions"})" : R"({"kind":"Status","code":401})",
                    "application/json");
  };
}

class KubeAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::signal(SIGPIPE, SIG_IGN);  // as the daemon does (httplib may write to closed sockets)
    char tmpl[] = "/tmp/gpuattr-kubeauth-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    pki_ = MakeTestPki({"apiserver.test"});
    files_ = WritePki(pki_, dir_ / "pki");
    log::SetSink([this](std::string_view line) {
      std::lock_guard<std::mutex> lock(log_mu_);
      logs_.emplace_back(line);
    });
  }
  void TearDown() override {
    log::ResetSink();
    // Secrets never reach a log line.
    for (const auto& line : Logs()) {
      for (const auto& secret : secrets_) EXPECT_THAT(line, Not(HasSubstr(secret)));
      EXPECT_THAT(line, Not(HasSubstr("PRIVATE KEY")));
    }
    fs::remove_all(dir_);
  }
  std::vector<std::string> Logs() {
    std::lock_guard<std::mutex> lock(log_mu_);
    return logs_;
  }

  // A kubeconfig with one context "ctx" for `cluster_yaml` / `user_yaml` (indented bodies).
  fs::path WriteKubeconfig(const std::string& cluster_body, const std::string& user_body,
                           const std::string& name = "config") {
    std::string text =
        "apiVersion: v1\nkind: Config\ncurrent-context: ctx\n"
        "clusters:\n- name: test-cluster\n  cluster:\n" +
        cluster_body + "users:\n- name: test-user\n  user:\n" + user_body +
        "contexts:\n- name: ctx\n  context: {cluster: test-cluster, user: test-user}\n";
    fs::path p = dir_ / name;
    WriteText(p, text);
    return p;
  }
  std::string ClusterWithCaFile(const std::string& url) {
    return "    server: " + url + "\n    certificate-authority: pki/ca.crt\n";
  }

  Result<std::unique_ptr<Transport>> Connect(const fs::path& kubeconfig,
                                             TransportOptions options = {}) {
    KubeconfigSource src;
    src.explicit_path = kubeconfig.string();
    auto conns = LoadConnections(src, {});
    if (!conns.ok()) return conns.error();
    EXPECT_EQ(conns->size(), 1u);
    // The proxy variables come from the test, never from the machine running it.
    if (!options.getenv) options.getenv = [](const char*) -> const char* { return nullptr; };
    return MakeTransport(conns->front(), options);
  }

  static Request Req(const std::string& path = "/api") {
    Request r;
    r.path = path;
    r.timeout = std::chrono::milliseconds(10000);
    return r;
  }

  // An exec plugin script: appends a line to `count` per run and prints `credential_json`
  // (which may use $N, the run number).
  fs::path WritePlugin(const std::string& name, const std::string& body) {
    fs::path p = dir_ / name;
    WriteText(p, "#!/bin/sh\n" + body, true);
    return p;
  }
  int Runs(const std::string& counter = "runs") {
    std::ifstream in(dir_ / counter);
    int n = 0;
    std::string line;
    while (std::getline(in, line)) ++n;
    return n;
  }

  fs::path dir_;
  TestPki pki_;
  PkiFiles files_;
  std::vector<std::string> secrets_;
  std::mutex log_mu_;
  std::vector<std::string> logs_;
};

TEST_F(KubeAuthTest, ClientCertificateFilesWithRelativePaths) {
  TlsServer server(pki_.server, pki_.ca, RequireToken([] { return ""; }));
  auto cfg = WriteKubeconfig(ClusterWithCaFile(server.url()),
                             "    client-certificate: pki/client.crt\n"
                             "    client-key: pki/client.key\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto res = (*t)->Get(Req("/api?timeout=32s"));
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, R"({"kind":"APIVersions"})");
  EXPECT_EQ(res->headers["content-type"], "application/json");
  EXPECT_EQ(server.seen().client_cn, "gpuattr-test");
  EXPECT_EQ(server.seen().authorization, "");
  EXPECT_EQ(server.seen().path, "/api");
  EXPECT_EQ((*t)->ClusterName(), "ctx");
}

TEST_F(KubeAuthTest, ClientCertificateAndCaData) {
  TlsServer server(pki_.server, pki_.ca, RequireToken([] { return ""; }));
  CertAndKey alice = MakeClientCert(pki_.ca, "alice", {"team-a"});
  auto cfg = WriteKubeconfig("    server: " + server.url() + "\n    certificate-authority-data: " +
                                 Base64(pki_.ca.cert_pem) + "\n",
                             "    client-certificate-data: " + Base64(alice.cert_pem) +
                                 "\n    client-key-data: " + Base64(alice.key_pem) + "\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto res = (*t)->Get(Req());
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(server.seen().client_cn, "alice");
}

TEST_F(KubeAuthTest, StaticTokenAndKeepAliveAcrossRequests) {
  secrets_ = {"s3cret-static-token"};
  TlsServer server(pki_.server, pki_.ca, RequireToken([] { return "s3cret-static-token"; }));
  auto cfg = WriteKubeconfig(ClusterWithCaFile(server.url()), "    token: s3cret-static-token\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok()) << t.error().message;
  for (int i = 0; i < 3; ++i) {
    auto res = (*t)->Get(Req());
    ASSERT_TRUE(res.ok()) << res.error().message;
    EXPECT_EQ(res->status, 200);
  }
  EXPECT_EQ(server.seen().requests, 3);
  EXPECT_EQ(server.seen().client_cn, "");
}

TEST_F(KubeAuthTest, WrongTokenIsA401ResponseNotATransportError) {
  secrets_ = {"wrong-token-value"};
  TlsServer server(pki_.server, pki_.ca, RequireToken([] { return "right"; }));
  auto cfg = WriteKubeconfig(ClusterWithCaFile(server.url()), "    token: wrong-token-value\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok());
  auto res = (*t)->Get(Req());
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(server.seen().requests, 1);  // a static token is not retried
}

TEST_F(KubeAuthTest, TokenFileIsCachedAndReReadAfterA401) {
  secrets_ = {"file-token-one", "file-token-two"};
  std::mutex mu;
  std::string accepted = "file-token-one";
  TlsServer server(pki_.server, pki_.ca, RequireToken([&] {
                     std::lock_guard<std::mutex> lock(mu);
                     return accepted;
                   }));
  WriteText(dir_ / "token", "file-token-one\n");
  auto cfg = WriteKubeconfig(ClusterWithCaFile(server.url()), "    tokenFile: token\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto res = (*t)->Get(Req());
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 200);
  // Rotate the file and the server: the cached token gets a 401, the file is re-read, the retry
  // succeeds.
  WriteText(dir_ / "token", "file-token-two\n");
  {
    std::lock_guard<std::mutex> lock(mu);
    accepted = "file-token-two";
  }
  res = (*t)->Get(Req());
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(server.seen().requests, 3);
  EXPECT_EQ(server.seen().authorization, "Bearer file-token-two");
}

TEST_F(KubeAuthTest, ExecV1WithArgsEnvAndClusterInfo) {
  secrets_ = {"exec-v1-token"};
  TlsServer server(pki_.server, pki_.ca, RequireToken([] { return "exec-v1-token"; }));
  WritePlugin(
      "plugin.sh",
      "echo run >> \"$(dirname \"$0\")/runs\"\n"
      "printf '%s\\n' \"$@\" > \"$(dirname \"$0\")/args\"\n"
      "printf '%s' \"$FOO|$EMPTY|$HOME_SET\" > \"$(dirname \"$0\")/env\"\n"
      "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$(dirname \"$0\")/info\"\n"
      "echo 'plugin says hello' >&2\n"
      "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
      "\"status\":{\"token\":\"exec-v1-token\"}}'\n");
  auto cfg =
      WriteKubeconfig("    server: " + server.url() + "\n    certificate-authority: pki/ca.crt\n" +
                          "    extensions:\n    - name: client.authentication.k8s.io/exec\n"
                          "      extension: {audience: gpu, level: 3}\n",
                      "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                      "      command: ./plugin.sh\n      args: [get-token, --cluster, \"a b\"]\n"
                      "      env: [{name: FOO, value: bar}, {name: EMPTY, value: \"\"}]\n"
                      "      provideClusterInfo: true\n      interactiveMode: Never\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto res = (*t)->Get(Req());
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(ReadFile(dir_ / "args"), "get-token\n--cluster\na b\n");
  EXPECT_EQ(ReadFile(dir_ / "env"), "bar||");
  auto info = nlohmann::json::parse(ReadFile(dir_ / "info"));
  EXPECT_EQ(info["apiVersion"], "client.authentication.k8s.io/v1");
  EXPECT_EQ(info["kind"], "ExecCredential");
  EXPECT_EQ(info["spec"]["interactive"], false);
  EXPECT_EQ(info["spec"]["cluster"]["server"], server.url());
  EXPECT_EQ(info["spec"]["cluster"]["certificate-authority-data"], Base64(pki_.ca.cert_pem));
  EXPECT_EQ(info["spec"]["cluster"]["config"]["audience"], "gpu");
  EXPECT_EQ(info["spec"]["cluster"]["config"]["level"], 3);
  // The plugin's stderr is logged as its message; its stdout (the token) never is.
  bool saw_stderr = false;
  for (const auto& line : Logs()) saw_stderr |= line.find("plugin says hello") != std::string::npos;
  EXPECT_TRUE(saw_stderr);
  // Cached: a second request does not run the plugin again.
  ASSERT_TRUE((*t)->Get(Req()).ok());
  EXPECT_EQ(Runs(), 1);
}

TEST_F(KubeAuthTest, ExecV1beta1ClientCertificateWithoutClusterInfo) {
  CertAndKey bob = MakeClientCert(pki_.ca, "bob-from-exec");
  nlohmann::json cred = {{"apiVersion", "client.authentication.k8s.io/v1beta1"},
                         {"kind", "ExecCredential"},
                         {"status",
                          {{"clientCertificateData", bob.cert_pem},
                           {"clientKeyData", bob.key_pem},
                           {"expirationTimestamp", "2999-01-01T00:00:00Z"}}}};
  WriteText(dir_ / "cred.json", cred.dump());
  TlsServer server(pki_.server, pki_.ca, RequireToken([] { return ""; }));
  WritePlugin("plugin.sh",
              "echo run >> \"$(dirname \"$0\")/runs\"\n"
              "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$(dirname \"$0\")/info\"\n"
              "cat \"$(dirname \"$0\")/cred.json\"\n");
  auto cfg = WriteKubeconfig(ClusterWithCaFile(server.url()),
                             "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
                             "      command: " +
                                 (dir_ / "plugin.sh").string() + "\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok()) << t.error().message;
  for (int i = 0; i < 2; ++i) {
    auto res = (*t)->Get(Req());
    ASSERT_TRUE(res.ok()) << res.error().message;
    EXPECT_EQ(res->status, 200);
  }
  EXPECT_EQ(server.seen().client_cn, "bob-from-exec");
  EXPECT_EQ(server.seen().requests, 2);
  EXPECT_EQ(Runs(), 1);
  auto info = nlohmann::json::parse(ReadFile(dir_ / "info"));
  EXPECT_EQ(info["apiVersion"], "client.authentication.k8s.io/v1beta1");
  EXPECT_FALSE(info["spec"].contains("cluster"));
}

TEST_F(KubeAuthTest, ExpiredExecCredentialIsRefreshed) {
  // The plugin hands out tokens that are already expired: each request must re-run it.
  TlsServer server(pki_.server, pki_.ca,
                   [](const httplib::Request&, httplib::Response& res, const Seen& seen) {
                     res.status = seen.authorization.rfind("Bearer tok-", 0) == 0 ? 200 : 401;
                   });
  WritePlugin(
      "plugin.sh",
      "echo run >> \"$(dirname \"$0\")/runs\"\n"
      "N=$(wc -l < \"$(dirname \"$0\")/runs\" | tr -d ' ')\n"
      "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
      "\"status\":{\"token\":\"tok-'$N'\",\"expirationTimestamp\":\"2001-01-01T00:00:00Z\"}}'\n");
  auto cfg = WriteKubeconfig(ClusterWithCaFile(server.url()),
                             "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                             "      command: ./plugin.sh\n      interactiveMode: IfAvailable\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_TRUE((*t)->Get(Req()).ok());
  EXPECT_EQ(server.seen().authorization, "Bearer tok-1");
  ASSERT_TRUE((*t)->Get(Req()).ok());
  EXPECT_EQ(server.seen().authorization, "Bearer tok-2");
  EXPECT_EQ(Runs(), 2);
}

TEST_F(KubeAuthTest, ExecIsReRunOnceAfterA401) {
  TlsServer server(pki_.server, pki_.ca, RequireToken([] { return "tok-2"; }));
  WritePlugin(
      "plugin.sh",
      "echo run >> \"$(dirname \"$0\")/runs\"\n"
      "N=$(wc -l < \"$(dirname \"$0\")/runs\" | tr -d ' ')\n"
      "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
      "\"status\":{\"token\":\"tok-'$N'\"}}'\n");
  auto cfg = WriteKubeconfig(ClusterWithCaFile(server.url()),
                             "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                             "      command: ./plugin.sh\n      interactiveMode: Never\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto res = (*t)->Get(Req());
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(Runs(), 2);
  EXPECT_EQ(server.seen().requests, 2);
}

TEST_F(KubeAuthTest, PersistentA401IsRetriedOnlyOnce) {
  TlsServer server(pki_.server, pki_.ca, RequireToken([] { return "never-issued"; }));
  WritePlugin(
      "plugin.sh",
      "echo run >> \"$(dirname \"$0\")/runs\"\n"
      "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
      "\"status\":{\"token\":\"some-token\"}}'\n");
  auto cfg = WriteKubeconfig(ClusterWithCaFile(server.url()),
                             "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                             "      command: ./plugin.sh\n      interactiveMode: Never\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok());
  auto res = (*t)->Get(Req());
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(Runs(), 2);
  EXPECT_EQ(server.seen().requests, 2);
}

TEST_F(KubeAuthTest, MissingExecBinaryIsAClearError) {
  TlsServer server(pki_.server, pki_.ca, RequireToken([] { return "x"; }));
  auto cfg = WriteKubeconfig(ClusterWithCaFile(server.url()),
                             "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                             "      command: gpuattr-no-such-auth-plugin\n"
                             "      installHint: install it from example.com\n"
                             "      interactiveMode: Never\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok());
  auto res = (*t)->Get(Req());
  ASSERT_FALSE(res.ok());
  EXPECT_THAT(res.error().message,
              HasSubstr("exec plugin \"gpuattr-no-such-auth-plugin\" not found in PATH (user "
                        "\"test-user\" in " +
                        cfg.string() + ")"));
  EXPECT_THAT(res.error().message, HasSubstr("cluster \"ctx\""));
  EXPECT_THAT(res.error().message, HasSubstr("install it from example.com"));
  EXPECT_EQ(server.seen().requests, 0);
}

TEST_F(KubeAuthTest, WrongCaFailsNamingClusterAndCaFile) {
  secrets_ = {"wrong-ca-bearer-secret"};
  TlsServer server(pki_.server, pki_.ca, RequireToken([] { return "t"; }));
  auto cfg = WriteKubeconfig(
      "    server: " + server.url() + "\n    certificate-authority: pki/other-ca.crt\n",
      "    token: wrong-ca-bearer-secret\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto res = (*t)->Get(Req());
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().message, "cluster \"ctx\": TLS handshake with " + server.url() +
                                     " failed: server certificate not signed by the CA in " +
                                     files_.other_ca_crt.lexically_normal().string());
  EXPECT_EQ(server.seen().requests, 0);
}

TEST_F(KubeAuthTest, GivenCaIsTheOnlyTrustedCaEvenWhenSystemCasWouldAccept) {
  // Make the "system" CA store the server's real CA; the kubeconfig names the other CA. A
  // transport that also trusted system CAs would connect.
  TlsServer server(pki_.server, pki_.ca, RequireToken([] { return "t"; }));
  const char* old = std::getenv("SSL_CERT_FILE");
  std::string saved = old ? old : "";
  setenv("SSL_CERT_FILE", files_.ca_crt.c_str(), 1);
  auto cfg = WriteKubeconfig("    server: " + server.url() + "\n    certificate-authority-data: " +
                                 Base64(pki_.other_ca.cert_pem) + "\n",
                             "    token: t\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto res = (*t)->Get(Req());
  // With no CA in the kubeconfig, the (substituted) system store is used and accepts.
  auto cfg2 = WriteKubeconfig("    server: " + server.url() + "\n", "    token: t\n", "config2");
  auto t2 = Connect(cfg2);
  ASSERT_TRUE(t2.ok());
  auto res2 = (*t2)->Get(Req());
  if (old) {
    setenv("SSL_CERT_FILE", saved.c_str(), 1);
  } else {
    unsetenv("SSL_CERT_FILE");
  }
  ASSERT_FALSE(res.ok());
  EXPECT_THAT(res.error().message,
              HasSubstr("not signed by the CA in certificate-authority-data of cluster "
                        "\"test-cluster\""));
  ASSERT_TRUE(res2.ok()) << res2.error().message;
  EXPECT_EQ(res2->status, 200);
}

TEST_F(KubeAuthTest, InsecureSkipTlsVerifyConnectsAndWarnsOnce) {
  CertAndKey foreign = MakeServerCert(pki_.other_ca);
  TlsServer server(foreign, pki_.ca, RequireToken([] { return "t"; }));
  auto cfg = WriteKubeconfig(
      "    server: " + server.url() + "\n    insecure-skip-tls-verify: true\n", "    token: t\n");
  KubeconfigSource src;
  src.explicit_path = cfg.string();
  auto conns = LoadConnections(src, {});
  ASSERT_TRUE(conns.ok());
  conns->front().context_name = "insecure-ctx-" + dir_.filename().string();
  auto t = MakeTransport(conns->front());
  ASSERT_TRUE(t.ok());
  auto t_again = MakeTransport(conns->front());
  ASSERT_TRUE(t_again.ok());
  auto res = (*t)->Get(Req());
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(res->status, 200);
  int warnings = 0;
  for (const auto& line : Logs()) {
    if (line.find("level=warn") != std::string::npos &&
        line.find("insecure-skip-tls-verify") != std::string::npos &&
        line.find(conns->front().context_name) != std::string::npos)
      ++warnings;
  }
  EXPECT_EQ(warnings, 1);
}

TEST_F(KubeAuthTest, TlsServerNameIsVerifiedAndSentAsSni) {
  CertAndKey internal_only = MakeServerCert(pki_.ca, {"kubernetes.internal"}, false);
  TlsServer server(internal_only, pki_.ca, RequireToken([] { return "t"; }));
  auto without = WriteKubeconfig(ClusterWithCaFile(server.url()), "    token: t\n", "without");
  auto t = Connect(without);
  ASSERT_TRUE(t.ok());
  auto res = (*t)->Get(Req());
  ASSERT_FALSE(res.ok());
  EXPECT_THAT(res.error().message,
              HasSubstr("server certificate is not valid for \"127.0.0.1\" (set tls-server-name"));

  auto with = WriteKubeconfig(
      ClusterWithCaFile(server.url()) + "    tls-server-name: kubernetes.internal\n",
      "    token: t\n", "with");
  auto t2 = Connect(with);
  ASSERT_TRUE(t2.ok());
  auto res2 = (*t2)->Get(Req());
  ASSERT_TRUE(res2.ok()) << res2.error().message;
  EXPECT_EQ(res2->status, 200);
  EXPECT_EQ(server.seen().sni, "kubernetes.internal");
  EXPECT_EQ(server.seen().host, "127.0.0.1:" + std::to_string(server.port()));
}

// SNI is tls-server-name whatever the URL holds (here a host name, before only an IP worked);
// the connection and the Host header still name the URL's host.
TEST_F(KubeAuthTest, TlsServerNameIsTheSniForAHostNameUrlToo) {
  CertAndKey internal_only = MakeServerCert(pki_.ca, {"kubernetes.internal"}, false);
  TlsServer server(internal_only, pki_.ca, RequireToken([] { return "t"; }));
  const std::string url = "https://localhost:" + std::to_string(server.port());
  auto cfg = WriteKubeconfig(ClusterWithCaFile(url) + "    tls-server-name: kubernetes.internal\n",
                             "    token: t\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto res = (*t)->Get(Req());
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(server.seen().sni, "kubernetes.internal");
  EXPECT_EQ(server.seen().host, "localhost:" + std::to_string(server.port()));
  // Without tls-server-name the SNI is the URL's host, as before.
  CertAndKey local = MakeServerCert(pki_.ca, {"localhost"}, false);
  TlsServer plain(local, pki_.ca, RequireToken([] { return "t"; }));
  auto cfg2 =
      WriteKubeconfig(ClusterWithCaFile("https://localhost:" + std::to_string(plain.port())),
                      "    token: t\n", "plain");
  auto t2 = Connect(cfg2);
  ASSERT_TRUE(t2.ok());
  auto res2 = (*t2)->Get(Req());
  ASSERT_TRUE(res2.ok()) << res2.error().message;
  EXPECT_EQ(plain.seen().sni, "localhost");
}

// A loopback HTTP CONNECT proxy: one tunnel per accepted connection, bounded by time.
class ConnectProxy {
 public:
  ConnectProxy() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(fd_, 16);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~ConnectProxy() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  std::vector<std::string> request_lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  void Run() {
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!stop_ && std::chrono::steady_clock::now() < end) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      int client = ::accept(fd_, nullptr, nullptr);
      if (client < 0) continue;
      Tunnel(client, end);
      ::close(client);
    }
  }
  void Tunnel(int client, std::chrono::steady_clock::time_point end) {
    std::string head;
    char buf[16384];
    while (head.find("\r\n\r\n") == std::string::npos && head.size() < 8192) {
      pollfd p{client, POLLIN, 0};
      if (::poll(&p, 1, 2000) <= 0) return;
      ssize_t n = ::read(client, buf, sizeof buf);
      if (n <= 0) return;
      head.append(buf, static_cast<size_t>(n));
    }
    std::string line = head.substr(0, head.find("\r\n"));
    {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(line);
    }
    int port = 0;
    // Any host: the proxy stands in for DNS too, every target is this machine.
    char host[256] = {0};
    if (std::sscanf(line.c_str(), "CONNECT %255[^:]:%d", host, &port) != 2) {
      std::string no = "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n";
      (void)!::write(client, no.data(), no.size());
      return;
    }
    int upstream = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(upstream);
      return;
    }
    std::string ok = "HTTP/1.1 200 Connection established\r\n\r\n";
    (void)!::write(client, ok.data(), ok.size());
    while (!stop_ && std::chrono::steady_clock::now() < end) {
      pollfd ps[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
      int r = ::poll(ps, 2, 50);
      if (r < 0) break;
      if (r == 0) continue;
      bool closed = false;
      for (int i = 0; i < 2; ++i) {
        if (!(ps[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t n = ::read(ps[i].fd, buf, sizeof buf);
        if (n <= 0 || ::write(i == 0 ? upstream : client, buf, static_cast<size_t>(n)) != n)
          closed = true;
      }
      if (closed) break;
    }
    ::close(upstream);
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> lines_;
};

TEST_F(KubeAuthTest, HttpProxyUrlTunnelsWithConnect) {
  TlsServer server(pki_.server, pki_.ca, RequireToken([] { return "t"; }));
  ConnectProxy proxy;
  auto cfg = WriteKubeconfig(ClusterWithCaFile(server.url()) + "    proxy-url: http://127.0.0.1:" +
                                 std::to_string(proxy.port()) + "\n",
                             "    token: t\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto res = (*t)->Get(Req());
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(res->status, 200);
  ASSERT_FALSE(proxy.request_lines().empty());
  EXPECT_EQ(proxy.request_lines().front(),
            "CONNECT 127.0.0.1:" + std::to_string(server.port()) + " HTTP/1.1");
}

// Without proxy-url, HTTPS_PROXY / https_proxy and NO_PROXY as client-go reads them. The server
// URL is a non-loopback IP (loopback is never proxied); only the test proxy can reach it (it
// tunnels every CONNECT to this machine). Through the proxy, SNI is still tls-server-name.
TEST_F(KubeAuthTest, ProxyFromTheEnvironmentTunnelsUnlessNoProxyMatches) {
  CertAndKey internal_only = MakeServerCert(pki_.ca, {"kubernetes.internal"}, false);
  TlsServer server(internal_only, pki_.ca, RequireToken([] { return "t"; }));
  ConnectProxy proxy;
  const std::string target = "10.255.255.1:" + std::to_string(server.port());
  auto cfg = WriteKubeconfig(
      ClusterWithCaFile("https://" + target) + "    tls-server-name: kubernetes.internal\n",
      "    token: t\n");
  const std::string proxy_url = "http://127.0.0.1:" + std::to_string(proxy.port());
  auto with_env = [](std::map<std::string, std::string> env) {
    TransportOptions o;
    o.getenv = [env = std::move(env)](const char* name) -> const char* {
      auto it = env.find(name);
      return it == env.end() ? nullptr : it->second.c_str();
    };
    return o;
  };
  for (const char* variable : {"HTTPS_PROXY", "https_proxy"}) {
    SCOPED_TRACE(variable);
    auto t = Connect(cfg, with_env({{variable, proxy_url}, {"HTTP_PROXY", "http://127.0.0.1:1"}}));
    ASSERT_TRUE(t.ok()) << t.error().message;
    auto res = (*t)->Get(Req());
    ASSERT_TRUE(res.ok()) << res.error().message;
    EXPECT_EQ(res->status, 200);
    ASSERT_FALSE(proxy.request_lines().empty());
    EXPECT_EQ(proxy.request_lines().back(), "CONNECT " + target + " HTTP/1.1");
    EXPECT_EQ(server.seen().sni, "kubernetes.internal");
    EXPECT_EQ(server.seen().host, target);
  }
  // NO_PROXY matches (a CIDR here): straight to 10.255.255.1, which does not answer.
  const size_t tunnels = proxy.request_lines().size();
  auto direct = Connect(cfg, with_env({{"HTTPS_PROXY", proxy_url}, {"NO_PROXY", "10.0.0.0/8"}}));
  ASSERT_TRUE(direct.ok());
  Request quick = Req();
  quick.timeout = std::chrono::milliseconds(500);
  auto res = (*direct)->Get(quick);
  EXPECT_FALSE(res.ok());
  EXPECT_THAT(res.error().message, Not(HasSubstr("via proxy")));
  EXPECT_EQ(proxy.request_lines().size(), tunnels);
  // The kubeconfig's proxy-url wins over the environment.
  auto both = Connect(
      WriteKubeconfig(ClusterWithCaFile("https://" + target) +
                          "    tls-server-name: kubernetes.internal\n    proxy-url: " + proxy_url +
                          "\n",
                      "    token: t\n", "both"),
      with_env({{"HTTPS_PROXY", "http://127.0.0.1:1"}}));
  ASSERT_TRUE(both.ok());
  auto via_url = (*both)->Get(Req());
  ASSERT_TRUE(via_url.ok()) << via_url.error().message;
  EXPECT_EQ(proxy.request_lines().size(), tunnels + 1);
  // An unsupported proxy scheme in the environment is a clear error naming the variable.
  auto socks = Connect(cfg, with_env({{"HTTPS_PROXY", "socks5://127.0.0.1:1080"}}));
  ASSERT_FALSE(socks.ok());
  EXPECT_EQ(socks.error().code, ErrorCode::kUnsupported);
  EXPECT_THAT(socks.error().message, HasSubstr("environment variable HTTPS_PROXY"));
}

// Shutdown: Cancel() ends a request that waits for a silent server at once, whatever its
// timeout, and every later request fails without touching the network.
TEST_F(KubeAuthTest, CancelAbortsRequestsInFlightAtOnce) {
  std::atomic<bool> release{false};
  TlsServer server(pki_.server, pki_.ca,
                   [&](const httplib::Request& req, httplib::Response& res, const Seen&) {
                     if (req.path == "/slow") {  // silent for up to 10 s
                       for (int i = 0; i < 1000 && !release; ++i)
                         std::this_thread::sleep_for(std::chrono::milliseconds(10));
                     }
                     res.set_content("{}", "application/json");
                   });
  auto cfg = WriteKubeconfig(ClusterWithCaFile(server.url()), "    token: t\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok());
  std::shared_ptr<Transport> transport = std::move(*t);
  Request get = Req("/slow");
  get.timeout = std::chrono::seconds(60);
  Request watch = Req("/slow");
  watch.timeout = std::chrono::seconds(60);
  auto started = std::chrono::steady_clock::now();
  auto g = std::async(std::launch::async, [&] { return transport->Get(get); });
  auto w = std::async(std::launch::async, [&] {
    return transport->Stream(watch, [](std::string_view) { return true; });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // both are waiting now
  transport->Cancel();
  ASSERT_EQ(g.wait_for(std::chrono::seconds(2)), std::future_status::ready);
  ASSERT_EQ(w.wait_for(std::chrono::seconds(2)), std::future_status::ready);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(3));
  auto gr = g.get();
  auto wr = w.get();
  EXPECT_FALSE(gr.ok());
  EXPECT_FALSE(wr.ok());
  auto after = transport->Get(Req("/api"));
  ASSERT_FALSE(after.ok());
  EXPECT_THAT(after.error().message, HasSubstr("cancelled (shutting down)"));
  release = true;
}

TEST_F(KubeAuthTest, SocksProxyIsAClearUnsupportedError) {
  auto cfg = WriteKubeconfig(
      ClusterWithCaFile("https://127.0.0.1:1") + "    proxy-url: socks5://127.0.0.1:1080\n",
      "    token: t\n");
  auto t = Connect(cfg);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::kUnsupported);
  EXPECT_THAT(t.error().message, HasSubstr("only http:// proxies are supported"));
  EXPECT_THAT(t.error().message, HasSubstr("socks5"));
}

TEST_F(KubeAuthTest, ConnectionRefusedNamesClusterAndServer) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  ::close(fd);  // bound, never listened: nothing accepts on this port now
  std::string url = "https://127.0.0.1:" + std::to_string(port);
  auto cfg = WriteKubeconfig(ClusterWithCaFile(url), "    token: t\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok());
  auto res = (*t)->Get(Req());
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(res.error().message,
            "cluster \"ctx\": cannot connect to " + url + ": connection refused");
}

TEST_F(KubeAuthTest, BodyCapAbortsWhileStreaming) {
  TlsServer server(pki_.server, pki_.ca,
                   [](const httplib::Request& req, httplib::Response& res, const Seen&) {
                     if (req.path == "/chunked") {
                       res.set_chunked_content_provider(
                           "text/plain", [](size_t offset, httplib::DataSink& sink) {
                             std::string chunk(4096, 'x');
                             if (offset > (1u << 20)) {
                               sink.done();
                               return true;
                             }
                             return sink.write(chunk.data(), chunk.size());
                           });
                     } else {
                       res.set_content(std::string(200000, 'y'), "text/plain");
                     }
                   });
  auto cfg = WriteKubeconfig(ClusterWithCaFile(server.url()), "    token: t\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok());
  for (const std::string path : {"/sized", "/chunked"}) {
    Request r = Req(path);
    r.max_body_bytes = 10000;
    auto res = (*t)->Get(r);
    ASSERT_FALSE(res.ok()) << path;
    EXPECT_EQ(res.error().code, ErrorCode::kResourceExhausted);
    EXPECT_THAT(res.error().message, HasSubstr("larger than the 10000-byte limit"));
  }
  Request r = Req("/sized");
  auto whole = (*t)->Get(r);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_EQ(whole->body.size(), 200000u);
}

TEST_F(KubeAuthTest, StreamDeliversChunksAndStopsWhenTheSinkSaysSo) {
  TlsServer server(pki_.server, pki_.ca,
                   [](const httplib::Request& req, httplib::Response& res, const Seen&) {
                     if (req.path == "/api") {
                       res.set_content("{}", "application/json");
                       return;
                     }
                     res.set_chunked_content_provider(
                         "application/json", [](size_t offset, httplib::DataSink& sink) {
                           if (offset > 100000) {  // bounded even if the client never stops
                             sink.done();
                             return true;
                           }
                           std::string event = "{\"type\":\"ADDED\"}\n";
                           std::this_thread::sleep_for(std::chrono::milliseconds(5));
                           return sink.write(event.data(), event.size());
                         });
                   });
  auto cfg = WriteKubeconfig(ClusterWithCaFile(server.url()), "    token: t\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok());
  std::string got;
  int chunks = 0;
  auto res = (*t)->Stream(Req("/api/v1/pods?watch=1"), [&](std::string_view chunk) {
    got.append(chunk);
    return ++chunks < 3;
  });
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "");
  EXPECT_EQ(chunks, 3);
  EXPECT_THAT(got, HasSubstr("{\"type\":\"ADDED\"}"));
  // The transport is still usable afterwards.
  auto again = (*t)->Get(Req("/api"));
  EXPECT_TRUE(again.ok()) << again.error().message;
}

TEST_F(KubeAuthTest, StreamIsBoundedByTheReadTimeout) {
  std::atomic<bool> release{false};
  TlsServer server(pki_.server, pki_.ca,
                   [&](const httplib::Request&, httplib::Response& res, const Seen&) {
                     res.set_chunked_content_provider(
                         "application/json", [&](size_t offset, httplib::DataSink& sink) {
                           if (offset == 0) {
                             std::string e = "{}\n";
                             return sink.write(e.data(), e.size());
                           }
                           // then silence, until the test ends (bounded)
                           for (int i = 0; i < 200 && !release; ++i)
                             std::this_thread::sleep_for(std::chrono::milliseconds(10));
                           sink.done();
                           return true;
                         });
                   });
  auto cfg = WriteKubeconfig(ClusterWithCaFile(server.url()), "    token: t\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok());
  Request r = Req("/watch");
  r.timeout = std::chrono::milliseconds(300);
  int chunks = 0, opened = 0;
  auto res = (*t)->Stream(r, [&](std::string_view chunk) {
    ++(chunk.empty() ? opened : chunks);  // an empty chunk: the 2xx arrived, the stream is open
    return true;
  });
  release = true;
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code, ErrorCode::kTimeout);
  EXPECT_EQ(chunks, 1);
  EXPECT_EQ(opened, 1);
}

TEST_F(KubeAuthTest, ConcurrentRequestsShareOneTransport) {
  secrets_ = {"concurrent-token"};
  TlsServer server(pki_.server, pki_.ca, RequireToken([] { return "concurrent-token"; }));
  auto cfg = WriteKubeconfig(ClusterWithCaFile(server.url()), "    token: concurrent-token\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok());
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 5; ++j) {
        auto res = (*t)->Get(Req("/api/v1/nodes"));
        if (res.ok() && res->status == 200) ++ok;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 40);
  EXPECT_EQ(server.seen().requests, 40);
}

TEST_F(KubeAuthTest, MismatchedClientKeyIsRejectedUpFront) {
  auto cfg = WriteKubeconfig(ClusterWithCaFile("https://127.0.0.1:1"),
                             "    client-certificate: pki/client.crt\n"
                             "    client-key: pki/server.key\n");
  auto t = Connect(cfg);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.error().message, HasSubstr("the client key does not match the client certificate"));
  EXPECT_THAT(t.error().message, HasSubstr("user \"test-user\""));
  EXPECT_THAT(t.error().message, Not(HasSubstr("PRIVATE KEY")));
}

TEST_F(KubeAuthTest, ServerUrlPathPrefixIsPrepended) {
  TlsServer server(pki_.server, pki_.ca, RequireToken([] { return "t"; }));
  auto cfg =
      WriteKubeconfig(ClusterWithCaFile(server.url() + "/k8s/clusters/c-1/"), "    token: t\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE((*t)->Get(Req("/api/v1/pods?limit=500")).ok());
  EXPECT_EQ(server.seen().path, "/k8s/clusters/c-1/api/v1/pods");
}

}  // namespace
}  // namespace gpuattr::kube

namespace gpuattr::kube {
namespace {

// Our kubeconfig merging and context selection must agree with kubectl's on the same files:
// `kubectl config view --minify --flatten -o json` (flatten embeds the files that relative paths
// name, so it also checks path resolution).
class KubectlAgreementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("kubectl version --client >/dev/null 2>&1") != 0)
      GTEST_SKIP() << "kubectl is not installed";
    char tmpl[] = "/tmp/gpuattr-kubectl-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directories(dir_ / "a/certs");
    fs::create_directories(dir_ / "b");
    WriteText(dir_ / "a/certs/ca.crt", "CA-OF-A\n");
    WriteText(dir_ / "b/client.crt", "CLIENT-CERT-B\n");
    WriteText(dir_ / "b/client.key", "CLIENT-KEY-B\n");
    WriteText(dir_ / "b/token", "token-from-file\n");
    WriteText(dir_ / "a/config", R"(apiVersion: v1
kind: Config
current-context: ctx-a
clusters:
- name: shared
  cluster: {server: "https://a.example:6443", certificate-authority: certs/ca.crt}
- name: only-a
  cluster: {server: "https://only-a.example"}
users:
- name: shared-user
  user: {token: token-a}
contexts:
- name: ctx-a
  context: {cluster: shared, user: shared-user, namespace: ns-a}
- name: both
  context: {cluster: only-a, user: shared-user}
)");
    WriteText(dir_ / "b/config",
              "apiVersion: v1\nkind: Config\ncurrent-context: ctx-b\n"
              "clusters:\n"
              "- name: shared\n"
              "  cluster: {server: \"https://b.example\", "
              "insecure-skip-tls-verify: true}\n"
              "- name: only-b\n"
              "  cluster: {server: \"https://10.1.2.3:443\", tls-server-name: "
              "kubernetes.default, proxy-url: \"http://127.0.0.1:3128\", "
              "certificate-authority-data: " +
                  Base64("CA-OF-B\n") +
                  "}\n"
                  "users:\n"
                  "- name: shared-user\n"
                  "  user: {token: token-b}\n"
                  "- name: b-user\n"
                  "  user: {client-certificate: client.crt, client-key: "
                  "client.key, tokenFile: token}\n"
                  "contexts:\n"
                  "- name: ctx-b\n"
                  "  context: {cluster: only-b, user: b-user, namespace: gpu}\n"
                  "- name: both\n"
                  "  context: {cluster: only-b, user: b-user}\n"
                  "- name: mixed\n"
                  "  context: {cluster: shared, user: shared-user}\n");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  nlohmann::json Kubectl(const std::string& kubeconfig_env, const std::string& flags) {
    std::string cmd = "KUBECONFIG='" + kubeconfig_env + "' HOME='" + dir_.string() +
                      "' kubectl config view --minify --flatten -o json " + flags + " 2>&1";
    std::string out;
    FILE* f = ::popen(cmd.c_str(), "r");
    if (!f) return nullptr;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    int rc = ::pclose(f);
    EXPECT_EQ(rc, 0) << cmd << "\n" << out;
    try {
      return nlohmann::json::parse(out);
    } catch (const std::exception&) {
      ADD_FAILURE() << "kubectl output is not JSON: " << out;
      return nullptr;
    }
  }

  // Compares the connection we select with kubectl's minified view.
  void ExpectAgreement(const std::string& kubeconfig_env, const std::string& context,
                       const std::string& user_dir) {
    SCOPED_TRACE("KUBECONFIG=" + kubeconfig_env + " --context=" + context);
    nlohmann::json k = Kubectl(kubeconfig_env, context.empty() ? "" : "--context " + context);
    ASSERT_TRUE(k.is_object());
    KubeconfigSource src;
    src.kubeconfig = kubeconfig_env;
    std::vector<std::string> contexts;
    if (!context.empty()) contexts.push_back(context);
    auto conns = LoadConnections(src, contexts);
    ASSERT_TRUE(conns.ok()) << conns.error().message;
    const ClusterConnection& c = conns->front();
    const auto& kc = k["contexts"][0]["context"];
    const auto& cl = k["clusters"][0]["cluster"];
    const auto& us = k["users"][0]["user"];
    auto str = [](const nlohmann::json& j, const char* key) {
      return j.contains(key) ? j[key].get<std::string>() : std::string();
    };
    EXPECT_EQ(c.context_name, k["current-context"].get<std::string>());
    EXPECT_EQ(c.cluster_name, k["clusters"][0]["name"].get<std::string>());
    EXPECT_EQ(c.user_name, k["users"][0]["name"].get<std::string>());
    EXPECT_EQ(c.default_namespace, kc.contains("namespace") ? str(kc, "namespace") : "default");
    EXPECT_EQ(c.server, str(cl, "server"));
    EXPECT_EQ(c.ca_pem.empty() ? "" : Base64(c.ca_pem), str(cl, "certificate-authority-data"));
    EXPECT_EQ(c.insecure_skip_tls_verify, cl.value("insecure-skip-tls-verify", false));
    EXPECT_EQ(c.tls_server_name, str(cl, "tls-server-name"));
    EXPECT_EQ(c.proxy_url, str(cl, "proxy-url"));
    EXPECT_EQ(c.token, str(us, "token"));
    EXPECT_EQ(c.client_cert_pem.empty() ? "" : Base64(c.client_cert_pem),
              str(us, "client-certificate-data"));
    EXPECT_EQ(c.client_key_pem.empty() ? "" : Base64(c.client_key_pem), str(us, "client-key-data"));
    std::string token_file = str(us, "tokenFile");
    if (!token_file.empty() && token_file[0] != '/')
      token_file = (dir_ / user_dir / token_file).string();
    EXPECT_EQ(c.token_file, token_file);
  }

  fs::path dir_;
};

TEST_F(KubectlAgreementTest, MergedListsAndContextSelection) {
  const std::string a = (dir_ / "a/config").string(), b = (dir_ / "b/config").string();
  const std::string missing = (dir_ / "missing").string();
  ExpectAgreement(a + ":" + b, "", "a");                        // first current-context wins
  ExpectAgreement(b + ":" + a, "", "b");                        // ... in either order
  ExpectAgreement(a + "::" + missing + ":" + b, "ctx-b", "b");  // empty/missing entries skipped
  ExpectAgreement(a + ":" + b, "both", "a");                    // first definition of a context
  ExpectAgreement(b + ":" + a, "both", "b");
  ExpectAgreement(b + ":" + a, "mixed", "b");  // cluster and user entries from b win
  ExpectAgreement(a + ":" + b, "mixed", "a");  // context from b, cluster+user from a
}

}  // namespace
}  // namespace gpuattr::kube

namespace gpuattr::kube {
namespace {

TEST_F(KubeAuthTest, IdleConnectionClosedByTheServerIsReplaced) {
  TlsServer server(pki_.server, pki_.ca, RequireToken([] { return "t"; }));
  server.raw().set_keep_alive_timeout(1);
  auto cfg = WriteKubeconfig(ClusterWithCaFile(server.url()), "    token: t\n");
  auto t = Connect(cfg);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE((*t)->Get(Req()).ok());
  // Let the server drop the idle keep-alive connection the pool still holds.
  std::this_thread::sleep_for(std::chrono::milliseconds(1600));
  auto res = (*t)->Get(Req());
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(res->status, 200);
}

}  // namespace
}  // namespace gpuattr::kube
