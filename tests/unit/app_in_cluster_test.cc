// In-cluster mode (kube/in_cluster.h) and how the session factory chooses it: a temporary
// service-account folder (token, ca.crt, namespace), kubeconfig files present or not, and the
// KUBERNETES_SERVICE_* values passed in (never the process's own environment).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "gpuattr/app/session_factory.h"
#include "gpuattr/kube/credentials.h"
#include "gpuattr/kube/in_cluster.h"
#include "support/test_certs.h"

namespace gpuattr::app {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class InCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpuattr-incluster-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    sa_ = root_ / "serviceaccount";
    fs::create_directories(sa_);
    fs::create_directories(root_ / "home");
    Write(sa_ / "token", "token-one\n");
    Write(sa_ / "ca.crt", testing::MakeTestPki().ca.cert_pem);
    Write(sa_ / "namespace", "gpuattr");
    env_.service_host = "10.96.0.1";
    env_.service_port = "443";
    env_.service_account_dir = sa_.string();
    source_.home = (root_ / "home").string();  // no ~/.kube/config there
  }
  void TearDown() override { fs::remove_all(root_); }

  static void Write(const fs::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
  }

  fs::path root_, sa_;
  kube::InClusterEnv env_;
  kube::KubeconfigSource source_;
};

TEST_F(InCluster, ConnectionFromTheServiceAccountFolder) {
  auto conn = kube::InClusterConnection(env_, "prod-eu");
  ASSERT_TRUE(conn.ok()) << conn.error().message;
  EXPECT_TRUE(conn->in_cluster);
  EXPECT_EQ(conn->server, "https://10.96.0.1:443");
  EXPECT_EQ(conn->context_name, "prod-eu");
  EXPECT_EQ(conn->token_file, (sa_ / "token").string());
  EXPECT_TRUE(conn->token.empty()) << "the token is re-read from its file, never kept static";
  EXPECT_EQ(conn->ca_file, (sa_ / "ca.crt").string());
  EXPECT_THAT(conn->ca_pem, HasSubstr("BEGIN CERTIFICATE"));
  EXPECT_EQ(conn->default_namespace, "gpuattr");
  EXPECT_FALSE(conn->insecure_skip_tls_verify);

  env_.service_host = "fd00::1";
  auto v6 = kube::InClusterConnection(env_, "x");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->server, "https://[fd00::1]:443");
}

TEST_F(InCluster, MissingOrBadFilesAreNamed) {
  fs::remove(sa_ / "namespace");  // optional
  EXPECT_TRUE(kube::InClusterConnection(env_, "x").ok());

  Write(sa_ / "ca.crt", "not a certificate");
  auto bad_ca = kube::InClusterConnection(env_, "x");
  ASSERT_FALSE(bad_ca.ok());
  EXPECT_THAT(bad_ca.error().message, HasSubstr((sa_ / "ca.crt").string()));
  fs::remove(sa_ / "ca.crt");
  auto no_ca = kube::InClusterConnection(env_, "x");
  ASSERT_FALSE(no_ca.ok());
  EXPECT_THAT(no_ca.error().message, HasSubstr("cannot read the service account's CA"));

  Write(sa_ / "ca.crt", testing::MakeTestPki().ca.cert_pem);
  Write(sa_ / "token", "  \n");
  auto empty = kube::InClusterConnection(env_, "x");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().message, HasSubstr("token " + (sa_ / "token").string() + " is empty"));
  fs::remove(sa_ / "token");
  auto none = kube::InClusterConnection(env_, "x");
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.error().message, HasSubstr((sa_ / "token").string()));
  EXPECT_THAT(none.error().message, HasSubstr("automountServiceAccountToken"));
}

TEST_F(InCluster, NoKubeconfigMeansNoExplicitPathAndNoExistingFile) {
  EXPECT_TRUE(kube::NoKubeconfig(source_));
  source_.kubeconfig = (root_ / "a").string() + ":" + (root_ / "b").string();
  EXPECT_TRUE(kube::NoKubeconfig(source_));  // $KUBECONFIG naming only missing files
  Write(root_ / "b", "apiVersion: v1\nkind: Config\n");
  EXPECT_FALSE(kube::NoKubeconfig(source_));
  source_.kubeconfig.reset();
  fs::create_directories(root_ / "home" / ".kube");
  Write(root_ / "home" / ".kube" / "config", "apiVersion: v1\n");
  EXPECT_FALSE(kube::NoKubeconfig(source_));
  kube::KubeconfigSource explicit_path;
  explicit_path.explicit_path = (root_ / "missing").string();
  EXPECT_FALSE(kube::NoKubeconfig(explicit_path));  // --kubeconfig never falls back
}

TEST_F(InCluster, ChosenWithoutKubeconfigInAPodLabelledByClusterName) {
  Config config;
  auto conns = ClusterConnections(config, source_, env_);
  ASSERT_TRUE(conns.ok()) << conns.error().message;
  ASSERT_EQ(conns->size(), 1u);
  EXPECT_EQ((*conns)[0].label, "in-cluster");
  EXPECT_TRUE((*conns)[0].connection.in_cluster);

  config.cluster_name = "prod-eu";
  conns = ClusterConnections(config, source_, env_);
  ASSERT_TRUE(conns.ok());
  EXPECT_EQ((*conns)[0].label, "prod-eu");
  EXPECT_EQ((*conns)[0].connection.context_name, "prod-eu");
}

TEST_F(InCluster, AContextNeedsAKubeconfig) {
  Config config;
  config.clusters = {ClusterConfig{"lab", ""}};
  auto conns = ClusterConnections(config, source_, env_);
  ASSERT_FALSE(conns.ok());
  EXPECT_THAT(conns.error().message, HasSubstr("in-cluster mode"));
  EXPECT_THAT(conns.error().message, HasSubstr("--context"));
}

TEST_F(InCluster, AKubeconfigWinsAsWithClientGo) {
  const fs::path kc = root_ / "kubeconfig";
  Write(kc, R"(apiVersion: v1
kind: Config
clusters: [{name: lab, cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}}]
users: [{name: lab, user: {token: t}}]
contexts: [{name: lab, context: {cluster: lab, user: lab}}]
current-context: lab
)");
  source_.kubeconfig = kc.string();
  Config config;
  auto conns = ClusterConnections(config, source_, env_);
  ASSERT_TRUE(conns.ok()) << conns.error().message;
  ASSERT_EQ(conns->size(), 1u);
  EXPECT_FALSE((*conns)[0].connection.in_cluster);
  EXPECT_EQ((*conns)[0].label, "lab");
  // --cluster.name relabels the one cluster of a kubeconfig too.
  config.cluster_name = "renamed";
  conns = ClusterConnections(config, source_, env_);
  ASSERT_TRUE(conns.ok());
  EXPECT_EQ((*conns)[0].label, "renamed");
}

TEST_F(InCluster, NeitherKubeconfigNorPodKeepsTheNoKubeconfigError) {
  kube::InClusterEnv outside;  // no KUBERNETES_SERVICE_HOST/PORT
  auto conns = ClusterConnections(Config{}, source_, outside);
  ASSERT_FALSE(conns.ok());
  EXPECT_THAT(conns.error().message, HasSubstr("no kubeconfig: KUBECONFIG is not set and"));
  EXPECT_THAT(conns.error().message, HasSubstr("(pass --kubeconfig PATH)"));
  // Only one of the two variables: not a pod either (client-go's ErrNotInCluster).
  outside.service_host = "10.96.0.1";
  conns = ClusterConnections(Config{}, source_, outside);
  ASSERT_FALSE(conns.ok());
  EXPECT_THAT(conns.error().message, HasSubstr("no kubeconfig"));
}

TEST_F(InCluster, TheRotatedTokenIsReadWithinAMinuteAndAtOnceAfterA401) {
  auto conn = kube::InClusterConnection(env_, "x");
  ASSERT_TRUE(conn.ok());
  auto now = std::chrono::system_clock::time_point(std::chrono::hours(1000));
  kube::Credentials::Options o;
  o.clock = [&now] { return now; };
  kube::Credentials creds(*conn, o);
  EXPECT_EQ(creds.Kind(), "tokenFile");
  EXPECT_EQ(creds.Current()->authorization, "Bearer token-one");
  // The kubelet rotates the projected token: the file is replaced.
  Write(sa_ / "token", "token-two");
  now += std::chrono::seconds(59);
  EXPECT_EQ(creds.Current()->authorization, "Bearer token-one");
  now += std::chrono::seconds(1);
  EXPECT_EQ(creds.Current()->authorization, "Bearer token-two");
  // A 401 (the apiserver no longer accepts the old token) re-reads at once.
  Write(sa_ / "token", "token-three");
  EXPECT_TRUE(creds.Invalidate());
  EXPECT_EQ(creds.Current()->authorization, "Bearer token-three");
  // A token that vanished is an error naming the service account's file, not a kubeconfig.
  fs::remove(sa_ / "token");
  creds.Invalidate();
  auto gone = creds.Current();
  ASSERT_FALSE(gone.ok());
  EXPECT_THAT(gone.error().message,
              HasSubstr("in-cluster: the service account's token: cannot read " +
                        (sa_ / "token").string()));
}

}  // namespace
}  // namespace gpuattr::app
