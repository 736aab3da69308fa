// Credential caching and refresh with a fake clock and a fake plugin runner (no processes).
#include "gpuattr/kube/credentials.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gpuattr::kube {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;
using std::chrono::system_clock;
using ::testing::HasSubstr;

struct FakeWorld {
  system_clock::time_point now = system_clock::time_point(seconds(1800000000));
  int runs = 0;
  std::optional<seconds> lifetime;  // expiry = now + lifetime
  bool fail = false;
  ExecPluginRun last_run;

  Credentials::Options Options() {
    Credentials::Options o;
    o.clock = [this] { return now; };
    o.exec_runner = [this](const ExecPluginRun& run) -> Result<ExecCredential> {
      ++runs;
      last_run = run;
      if (fail) return MakeError(ErrorCode::kUnauthenticated, "plugin failed");
      ExecCredential c;
      c.token = "tok-" + std::to_string(runs);
      if (lifetime) c.expiry = now + *lifetime;
      return c;
    };
    return o;
  }
};

ClusterConnection ExecConnection() {
  ClusterConnection c;
  c.context_name = "ctx";
  c.user_name = "u";
  c.server = "https://h";
  c.user_source = "/kubeconfig";
  ExecConfig e;
  e.api_version = "client.authentication.k8s.io/v1";
  e.command = "plugin";
  c.exec = e;
  return c;
}

TEST(Credentials, ExecTokenIsCachedUntilShortlyBeforeExpiry) {
  FakeWorld w;
  w.lifetime = seconds(600);
  Credentials creds(ExecConnection(), w.Options());
  EXPECT_EQ(creds.Kind(), "exec");
  auto a = creds.Current();
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->authorization, "Bearer tok-1");
  w.now += seconds(500);
  EXPECT_EQ(creds.Current()->authorization, "Bearer tok-1");
  EXPECT_EQ(w.runs, 1);
  w.now += seconds(95);  // 5 s before expiry: inside the refresh margin
  EXPECT_EQ(creds.Current()->authorization, "Bearer tok-2");
  EXPECT_EQ(w.runs, 2);
  EXPECT_EQ(w.last_run.user_name, "u");
  EXPECT_EQ(w.last_run.kubeconfig_path, "/kubeconfig");
  EXPECT_EQ(w.last_run.server, "https://h");
}

TEST(Credentials, ExecWithoutExpiryIsCachedUntilInvalidated) {
  FakeWorld w;
  Credentials creds(ExecConnection(), w.Options());
  EXPECT_EQ(creds.Current()->authorization, "Bearer tok-1");
  w.now += seconds(86400);
  EXPECT_EQ(creds.Current()->authorization, "Bearer tok-1");
  EXPECT_TRUE(creds.Invalidate());
  EXPECT_EQ(creds.Current()->authorization, "Bearer tok-2");
  EXPECT_EQ(w.runs, 2);
}

TEST(Credentials, FailedPluginIsNotReRunForEveryRequest) {
  FakeWorld w;
  w.fail = true;
  Credentials creds(ExecConnection(), w.Options());
  EXPECT_FALSE(creds.Current().ok());
  EXPECT_FALSE(creds.Current().ok());
  EXPECT_EQ(w.runs, 1);
  w.now += seconds(6);
  w.fail = false;
  auto ok = creds.Current();
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(w.runs, 2);
}

TEST(Credentials, ExecCertificateGenerationChangesWithTheCertificate) {
  FakeWorld w;
  auto opts = w.Options();
  int n = 0;
  opts.exec_runner = [&](const ExecPluginRun&) -> Result<ExecCredential> {
    ++n;
    ExecCredential c;
    c.client_cert_pem = n < 3 ? "CERT-A" : "CERT-B";
    c.client_key_pem = "KEY";
    return c;
  };
  Credentials creds(ExecConnection(), opts);
  auto first = creds.Current();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->authorization, "");
  EXPECT_EQ(first->exec_cert_pem, "CERT-A");
  uint64_t g1 = first->exec_cert_generation;
  EXPECT_EQ(creds.Current()->exec_cert_generation, g1);
  creds.Invalidate();
  auto third = creds.Current();
  creds.Invalidate();
  auto fourth = creds.Current();
  EXPECT_EQ(fourth->exec_cert_pem, "CERT-B");
  EXPECT_NE(fourth->exec_cert_generation, g1);
  (void)third;
}

class TokenFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpuattr-cred-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(TokenFileTest, ReReadAtMostOnceAMinuteAndAfterInvalidate) {
  fs::path file = dir_ / "token";
  std::ofstream(file) << "one\n";
  ClusterConnection c;
  c.user_name = "u";
  c.user_source = "/kc";
  c.token_file = file.string();
  FakeWorld w;
  Credentials creds(c, w.Options());
  EXPECT_EQ(creds.Kind(), "tokenFile");
  EXPECT_EQ(creds.Current()->authorization, "Bearer one");
  std::ofstream(file) << "two";
  w.now += seconds(30);
  EXPECT_EQ(creds.Current()->authorization, "Bearer one");  // cached
  w.now += seconds(31);
  EXPECT_EQ(creds.Current()->authorization, "Bearer two");  // a minute passed
  std::ofstream(file) << "three";
  EXPECT_TRUE(creds.Invalidate());
  EXPECT_EQ(creds.Current()->authorization, "Bearer three");

  fs::remove(file);
  creds.Invalidate();
  auto gone = creds.Current();
  ASSERT_FALSE(gone.ok());
  EXPECT_THAT(gone.error().message,
              HasSubstr("user \"u\" in kubeconfig /kc: tokenFile: cannot read " + file.string()));
}

TEST(Credentials, StaticTokenWinsAndIsNotRefreshable) {
  ClusterConnection c = ExecConnection();
  c.token = "static";
  FakeWorld w;
  Credentials creds(c, w.Options());
  EXPECT_EQ(creds.Current()->authorization, "Bearer static");
  EXPECT_FALSE(creds.Invalidate());
  EXPECT_EQ(w.runs, 0);
}

TEST(Credentials, BasicAuthAndNone) {
  ClusterConnection c;
  c.username = "admin";
  c.password = "pw";
  Credentials basic(c);
  EXPECT_EQ(basic.Current()->authorization, "Basic YWRtaW46cHc=");
  EXPECT_FALSE(basic.Invalidate());
  Credentials none{ClusterConnection{}};
  EXPECT_EQ(none.Kind(), "none");
  EXPECT_EQ(none.Current()->authorization, "");
}

}  // namespace
}  // namespace gpuattr::kube
