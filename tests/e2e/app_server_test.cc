// The HTTP server on 127.0.0.1 with an OS-chosen port.
#include <crypt.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "gpuattr/http/server.h"
#include "gpuattr/metrics/families.h"
#include "gpuattr/metrics/process_metrics.h"

namespace gpuattr::http {
namespace {

using metrics::RenderText;
using metrics::SnapshotStore;

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::shared_ptr<SnapshotStore> StoreWith(std::string cluster, bool complete) {
  auto store = std::make_shared<SnapshotStore>();
  auto s = std::make_shared<model::Snapshot>();
  s->complete = complete;
  model::ClusterSnapshot c;
  c.cluster = std::move(cluster);
  c.latest.up = complete;
  c.cycles = complete ? 1 : 0;
  c.cycle_duration_seconds = 0.5;
  for (int i = 0; i < 200; ++i)  // enough text for compression to matter
    c.latest.apiserver_requests[{"get", "pods/proxy", std::to_string(200 + i)}] =
        static_cast<uint64_t>(i);
  s->clusters.push_back(std::move(c));
  store->Publish(std::move(s));
  return store;
}

std::unique_ptr<MetricsServer> MustStart(const ServerOptions& opt,
                                         std::shared_ptr<SnapshotStore> store) {
  auto s = MetricsServer::Start(opt, std::move(store));
  EXPECT_TRUE(s.ok()) << s.error().message;
  return s.ok() ? std::move(*s) : nullptr;
}

ServerOptions Loopback() {
  ServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  return o;
}

std::string Gunzip(const std::string& in) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 16 + MAX_WBITS), Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buf[16384];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END);
  inflateEnd(&zs);
  return out;
}

TEST(AppServer, MetricsPlainAndGzip) {
  auto store = StoreWith("kind-gpu", true);
  auto srv = MustStart(Loopback(), store);
  ASSERT_TRUE(srv);
  ASSERT_GT(srv->port(), 0);
  httplib::Client cli("127.0.0.1", srv->port());
  cli.set_decompress(false);

  auto plain = cli.Get("/metrics");
  ASSERT_TRUE(plain) << httplib::to_string(plain.error());
  EXPECT_EQ(plain->status, 200);
  EXPECT_EQ(plain->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_FALSE(plain->has_header("Content-Encoding"));
  // The exposition rendered at publication, then this scrape's process_* tail.
  const std::string rendered = RenderText(*store->Get());
  EXPECT_EQ(plain->body.substr(0, rendered.size()), rendered);
  EXPECT_THAT(
      plain->body.substr(rendered.size()),
      HasSubstr("# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes "));
  EXPECT_THAT(plain->body, HasSubstr("gpuattr_cluster_up{cluster=\"kind-gpu\"} 1\n"));

  auto gz = cli.Get("/metrics", {{"Accept-Encoding", "gzip"}});
  ASSERT_TRUE(gz);
  EXPECT_EQ(gz->status, 200);
  EXPECT_EQ(gz->get_header_value("Content-Encoding"), "gzip");
  EXPECT_LT(gz->body.size(), plain->body.size());
  // The same text (the process values of another scrape differ).
  const std::string unzipped = Gunzip(gz->body);
  EXPECT_EQ(unzipped.substr(0, rendered.size()), rendered);
  EXPECT_THAT(unzipped.substr(rendered.size()), HasSubstr("process_open_fds "));
}

TEST(AppServer, HealthReadinessStatusAndNotFound) {
  auto store = StoreWith("<script>alert(1)</script>", false);
  auto srv = MustStart(Loopback(), store);
  ASSERT_TRUE(srv);
  httplib::Client cli("127.0.0.1", srv->port());

  auto health = cli.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok\n");

  auto before = cli.Get("/readyz");
  ASSERT_TRUE(before);
  EXPECT_EQ(before->status, 503);
  EXPECT_THAT(before->body, HasSubstr("first cycle"));

  auto page = cli.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_THAT(page->get_header_value("Content-Type"), StartsWith("text/html"));
  EXPECT_THAT(page->body, Not(HasSubstr("<script>alert")));  // the page's own script only
  EXPECT_THAT(page->body, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  auto json = cli.Get("/snapshot.json");
  ASSERT_TRUE(json);
  EXPECT_EQ(json->status, 200);
  EXPECT_EQ(json->get_header_value("Content-Type"), "application/json");
  EXPECT_THAT(json->body, HasSubstr("\"schema_version\": 1"));
  EXPECT_THAT(json->body, HasSubstr("\"complete\": false"));
  auto md = cli.Get("/snapshot.md");
  ASSERT_TRUE(md);
  EXPECT_EQ(md->status, 200);
  EXPECT_THAT(md->get_header_value("Content-Type"), StartsWith("text/markdown"));
  EXPECT_THAT(md->body, HasSubstr("The first cycle has not finished yet."));

  // The loop publishes the first complete snapshot: ready from now on.
  auto done = std::make_shared<model::Snapshot>(*store->Get());
  done->complete = true;
  store->Publish(done);
  auto after = cli.Get("/readyz");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200);

  auto missing = cli.Get("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_THAT(missing->body, HasSubstr("404"));
}

// A bcrypt hash made by libcrypt itself, with a salt of the given prefix ($2b$ or $2y$).
std::string Bcrypt(const char* password, const char* prefix) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  EXPECT_TRUE(crypt_gensalt_rn(prefix, 4, nullptr, 0, salt, sizeof salt));
  crypt_data data{};
  const char* hash = crypt_r(password, salt, &data);
  EXPECT_TRUE(hash && std::string(hash).starts_with(prefix));
  return hash ? hash : "";
}

TEST(AppServer, BasicAuth) {
  ServerOptions opt = Loopback();
  opt.users = {{"prom", Bcrypt("s3cret", "$2y$")}, {"grafana", Bcrypt("other", "$2b$")}};
  auto srv = MustStart(opt, StoreWith("c", true));
  ASSERT_TRUE(srv);
  httplib::Client cli("127.0.0.1", srv->port());

  auto none = cli.Get("/metrics");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_THAT(none->get_header_value("WWW-Authenticate"), StartsWith("Basic realm="));
  EXPECT_THAT(none->body, Not(HasSubstr("gpuattr_")));

  cli.set_basic_auth("prom", "wrong");
  auto wrong = cli.Get("/metrics");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);

  cli.set_basic_auth("prom", "s3cret");
  auto right = cli.Get("/metrics");
  ASSERT_TRUE(right);
  EXPECT_EQ(right->status, 200);
  EXPECT_THAT(right->body, HasSubstr("gpuattr_cluster_up"));

  cli.set_basic_auth("grafana", "other");
  auto second = cli.Get("/healthz");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 200);

  cli.set_basic_auth("nobody", "s3cret");  // an unknown user
  auto unknown = cli.Get("/metrics");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 401);
}

TEST(AppServer, CheckBasicAuthParsesTheHeader) {
  auto auth = BasicAuth::Make({{"prom", Bcrypt("s3cret", "$2y$")}});
  ASSERT_TRUE(auth.ok()) << auth.error().message;
  BasicAuth& users = **auth;
  EXPECT_TRUE(users.Check("Basic cHJvbTpzM2NyZXQ="));  // prom:s3cret
  EXPECT_TRUE(users.Check("basic cHJvbTpzM2NyZXQ="));
  EXPECT_FALSE(users.Check("Basic cHJvbTpzM2NyZXR4"));  // prom:s3cretx
  EXPECT_FALSE(users.Check("Bearer cHJvbTpzM2NyZXQ="));
  EXPECT_FALSE(users.Check("Basic !!!"));
  EXPECT_FALSE(users.Check(""));
  auto none = BasicAuth::Make({});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE((*none)->Check("Basic cHJvbTpzM2NyZXQ="));
}

TEST(AppServer, BindFailureNamesTheAddress) {
  auto first = MustStart(Loopback(), StoreWith("c", true));
  ASSERT_TRUE(first);
  ServerOptions same = Loopback();
  same.port = first->port();
  auto second = MetricsServer::Start(same, StoreWith("c", true));
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.error().message,
              HasSubstr("cannot listen on 127.0.0.1:" + std::to_string(first->port())));
}

TEST(AppServer, StopIsPromptAndIdempotent) {
  auto srv = MustStart(Loopback(), StoreWith("c", true));
  ASSERT_TRUE(srv);
  int port = srv->port();
  srv->Stop();
  srv->Stop();
  httplib::Client cli("127.0.0.1", port);
  cli.set_connection_timeout(std::chrono::seconds(2));
  EXPECT_FALSE(cli.Get("/healthz"));
}

class TlsFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("gpuattr-tls-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    for (const char* name : {"a", "b"}) {
      std::string cmd =
          "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
          "-addext subjectAltName=IP:127.0.0.1 -keyout " +
          (dir_ / (std::string(name) + ".key")).string() + " -out " +
          (dir_ / (std::string(name) + ".crt")).string() + " >/dev/null 2>&1";
      if (std::system(cmd.c_str()) != 0) GTEST_SKIP() << "openssl could not make a test cert";
    }
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string P(const char* f) { return (dir_ / f).string(); }
  std::filesystem::path dir_;
};

TEST_F(TlsFiles, ServesHttps) {
  ServerOptions opt = Loopback();
  opt.tls = TlsOptions();
  opt.tls->cert_file = P("a.crt");
  opt.tls->key_file = P("a.key");
  auto srv = MustStart(opt, StoreWith("c", true));
  ASSERT_TRUE(srv);
  httplib::SSLClient cli("127.0.0.1", srv->port());
  cli.set_ca_cert_path(P("a.crt").c_str());
  cli.enable_server_certificate_verification(true);
  auto res = cli.Get("/metrics");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->body, HasSubstr("gpuattr_cluster_up"));
  // Plain HTTP against the TLS port gets nothing useful.
  httplib::Client plain("127.0.0.1", srv->port());
  plain.set_read_timeout(std::chrono::seconds(2));
  auto p = plain.Get("/metrics");
  EXPECT_TRUE(!p || p->status != 200);
}

TEST_F(TlsFiles, UnusableFilesAreNamed) {
  ServerOptions opt = Loopback();
  opt.tls = TlsOptions();
  opt.tls->cert_file = P("a.crt");
  opt.tls->key_file = P("b.key");  // belongs to another cert
  auto mismatch = MetricsServer::Start(opt, StoreWith("c", true));
  ASSERT_FALSE(mismatch.ok());
  EXPECT_THAT(mismatch.error().message, HasSubstr(P("a.crt")));
  EXPECT_THAT(mismatch.error().message, HasSubstr(P("b.key")));
  opt.tls->key_file = P("missing.key");
  auto missing = MetricsServer::Start(opt, StoreWith("c", true));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("missing.key"));
}

}  // namespace
}  // namespace gpuattr::http
