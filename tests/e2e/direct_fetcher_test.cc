// The direct fetcher (scrape/fetch.h, docs/deploy.md#direct-scraping) against real listeners on
// 127.0.0.1: plain and TLS exporters (the test PKI's server certificate carries IP:127.0.0.1),
// keep-alive reuse, the body cap, HTTP errors, and a refused connect that names the
// NetworkPolicy.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <set>
#include <thread>

#include "gpuattr/scrape/fetch.h"
#include "support/test_certs.h"

namespace gpuattr::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kBody[] = "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\"} 42\n";

// An exporter on 127.0.0.1: /metrics answers kBody, /big a body of `big` bytes, /fail a 500.
class Exporter {
 public:
  explicit Exporter(std::unique_ptr<httplib::Server> server) : server_(std::move(server)) {
    server_->Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      ports_.insert(req.remote_port);
      accept_ = req.get_header_value("Accept");
      authorization_ = req.get_header_value("Authorization");
      res.set_content(kBody, "text/plain; version=0.0.4");
    });
    server_->Get("/big", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(1 << 20, '#'), "text/plain");
    });
    server_->Get("/fail", [](const httplib::Request&, httplib::Response& res) {
      res.status = 500;
      res.set_content("An error has occurred while serving metrics:\n\ncollector failed\n",
                      "text/plain");
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    for (int i = 0; i < 500 && !server_->is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ~Exporter() {
    server_->stop();
    thread_.join();
  }
  int port() const { return port_; }
  std::set<int> ports() {
    std::lock_guard<std::mutex> lock(mu_);
    return ports_;
  }
  std::string accept() {
    std::lock_guard<std::mutex> lock(mu_);
    return accept_;
  }
  std::string authorization() {
    std::lock_guard<std::mutex> lock(mu_);
    return authorization_;
  }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = -1;
  std::mutex mu_;
  std::set<int> ports_;  // client ports: one per connection
  std::string accept_, authorization_;
};

scrape::FetchTarget Target(int port, const std::string& path = "/metrics",
                           const std::string& scheme = "http") {
  scrape::FetchTarget t;
  t.proxy_path =
      "/api/v1/namespaces/gpu-operator/pods/dcgm-x:" + std::to_string(port) + "/proxy" + path;
  t.scheme = scheme;
  t.host = "127.0.0.1";
  t.port = port;
  t.what = "pod gpu-operator/dcgm-x";
  return t;
}

TEST(DirectFetcher, ReadsAPlainExporterOverOneKeptAliveConnection) {
  Exporter e(std::make_unique<httplib::Server>());
  auto fetcher = scrape::MakeDirectFetcher({});
  for (int i = 0; i < 3; ++i) {
    scrape::Fetch f = fetcher->Get(Target(e.port()), {});
    ASSERT_TRUE(f.ok) << f.error;
    EXPECT_EQ(f.http_status, 200);
    EXPECT_EQ(f.body, kBody);
    EXPECT_EQ(f.bytes, f.body.size());
  }
  EXPECT_EQ(e.ports().size(), 1u) << "each GET opened a new connection";
  EXPECT_THAT(e.accept(), HasSubstr("text/plain"));
  EXPECT_EQ(e.authorization(), "") << "no credentials go to an exporter";
}

TEST(DirectFetcher, CapsTheBodyAndNamesHttpErrors) {
  Exporter e(std::make_unique<httplib::Server>());
  auto fetcher = scrape::MakeDirectFetcher({});
  scrape::FetchOptions small;
  small.max_body_bytes = 64 << 10;
  scrape::Fetch big = fetcher->Get(Target(e.port(), "/big"), small);
  EXPECT_FALSE(big.ok);
  EXPECT_TRUE(big.over_cap) << big.error;
  scrape::Fetch fail = fetcher->Get(Target(e.port(), "/fail"), {});
  EXPECT_FALSE(fail.ok);
  EXPECT_EQ(fail.http_status, 500);
  EXPECT_THAT(fail.error, HasSubstr("pod gpu-operator/dcgm-x: HTTP 500 from http://127.0.0.1:" +
                                    std::to_string(e.port()) + "/fail: An error has occurred"));
}

TEST(DirectFetcher, ARefusedConnectNamesTheNetworkPolicy) {
  // A port nothing listens on: bound, then closed.
  int port = 0;
  {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    ::close(fd);  // never listened: connects are refused
  }
  auto fetcher = scrape::MakeDirectFetcher({});
  scrape::Fetch f = fetcher->Get(Target(port), {});
  EXPECT_FALSE(f.ok);
  EXPECT_EQ(f.http_status, 0);
  EXPECT_THAT(f.error, HasSubstr("pod gpu-operator/dcgm-x: cannot connect to http://127.0.0.1:" +
                                 std::to_string(port) + ": connection refused"));
  EXPECT_THAT(f.error, HasSubstr("NetworkPolicy"));
  EXPECT_THAT(f.error, HasSubstr("port " + std::to_string(port)));
}

class TlsExporter : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpuattr-direct-tls-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    pki_ = MakeTestPki();
    files_ = WritePki(pki_, dir_);
    exporter_ = std::make_unique<Exporter>(
        std::make_unique<httplib::SSLServer>(files_.server_crt.c_str(), files_.server_key.c_str()));
  }
  void TearDown() override {
    exporter_.reset();
    fs::remove_all(dir_);
  }
  fs::path dir_;
  TestPki pki_;
  PkiFiles files_;
  std::unique_ptr<Exporter> exporter_;
};

TEST_F(TlsExporter, IsReadWithTheGivenCaAndNameChecked) {
  scrape::DirectOptions o;
  o.ca_pem = pki_.ca.cert_pem;
  o.ca_file = files_.ca_crt.string();
  auto fetcher = scrape::MakeDirectFetcher(o);
  scrape::Fetch f = fetcher->Get(Target(exporter_->port(), "/metrics", "https"), {});
  ASSERT_TRUE(f.ok) << f.error;  // the certificate names IP 127.0.0.1, the pod's address
  EXPECT_EQ(f.body, kBody);

  o.server_name = "localhost";  // also in the certificate
  f = scrape::MakeDirectFetcher(o)->Get(Target(exporter_->port(), "/metrics", "https"), {});
  EXPECT_TRUE(f.ok) << f.error;
}

TEST_F(TlsExporter, AWrongCaOrNameFailsNamingIt) {
  scrape::DirectOptions o;
  o.ca_pem = pki_.other_ca.cert_pem;
  o.ca_file = "/etc/gpuattr/exporters-ca.crt";
  scrape::Fetch f =
      scrape::MakeDirectFetcher(o)->Get(Target(exporter_->port(), "/metrics", "https"), {});
  EXPECT_FALSE(f.ok);
  EXPECT_THAT(f.error, HasSubstr("pod gpu-operator/dcgm-x: TLS handshake with https://127.0.0.1"));
  EXPECT_THAT(f.error, HasSubstr("/etc/gpuattr/exporters-ca.crt"));

  o.ca_pem = pki_.ca.cert_pem;
  o.server_name = "dcgm-exporter.gpu-operator.svc";
  f = scrape::MakeDirectFetcher(o)->Get(Target(exporter_->port(), "/metrics", "https"), {});
  EXPECT_FALSE(f.ok);
  EXPECT_THAT(f.error, HasSubstr("dcgm-exporter.gpu-operator.svc"));
}

}  // namespace
}  // namespace gpuattr::testing
