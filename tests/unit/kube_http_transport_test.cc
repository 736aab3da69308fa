// Transport construction (no network): up-front validation of TLS material.
#include "gpuattr/kube/http_transport.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "gpuattr/kube/tls.h"
#include "support/test_certs.h"

namespace gpuattr::kube {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ClusterConnection Conn() {
  ClusterConnection c;
  c.context_name = "ctx";
  c.cluster_name = "cl";
  c.user_name = "u";
  c.kubeconfig_path = "/kc";
  c.user_source = "/kc";
  c.server = "https://127.0.0.1:6443";
  return c;
}

TEST(MakeTransport, RejectsBadMaterialUpFrontWithoutLeakingIt) {
  auto pki = gpuattr::testing::MakeTestPki();
  ClusterConnection c = Conn();
  c.ca_pem = "not a certificate";
  c.ca_file = "/etc/ca.crt";
  auto t = MakeTransport(c);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message,
            "cluster \"ctx\": the CA in /etc/ca.crt holds no PEM certificate (expected -----BEGIN "
            "CERTIFICATE-----)");

  c = Conn();
  c.client_cert_pem = pki.client.cert_pem;
  c.client_key_pem = "garbage-key-material";
  t = MakeTransport(c);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.error().message, HasSubstr("the client key is not a PEM private key"));
  EXPECT_THAT(t.error().message, Not(HasSubstr("garbage-key-material")));

  c = Conn();
  c.server = "ftp://h";
  EXPECT_EQ(MakeTransport(c).error().code, ErrorCode::kUnsupported);
  c.server = "https://user:pw@h";
  EXPECT_THAT(MakeTransport(c).error().message, Not(HasSubstr("pw")));

  c = Conn();
  c.proxy_url = "https://proxy:3128";
  EXPECT_THAT(MakeTransport(c).error().message,
              HasSubstr("only http:// proxies are supported (https:// is not)"));

  c = Conn();
  c.ca_pem = pki.ca.cert_pem + pki.other_ca.cert_pem;
  c.client_cert_pem = pki.client.cert_pem;
  c.client_key_pem = pki.client.key_pem;
  c.proxy_url = "http://user:p%40ss@proxy:3128";
  auto ok = MakeTransport(c);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ((*ok)->ClusterName(), "ctx");
}

TEST(Tls, CaBundleKeepsEveryCertificate) {
  auto pki = gpuattr::testing::MakeTestPki();
  auto bundle = CaBundle::FromPem(pki.ca.cert_pem + "\n" + pki.other_ca.cert_pem, "two CAs");
  ASSERT_TRUE(bundle.ok());
  EXPECT_EQ((*bundle)->size(), 2u);
  EXPECT_TRUE(IsIpLiteral("127.0.0.1"));
  EXPECT_TRUE(IsIpLiteral("::1"));
  EXPECT_FALSE(IsIpLiteral("localhost"));
  EXPECT_THAT(
      DescribeVerifyError(X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, "the CA in /x", "h"),
      "server certificate not signed by the CA in /x");
  EXPECT_THAT(DescribeVerifyError(X509_V_ERR_HOSTNAME_MISMATCH, "the CA in /x", "h"),
              HasSubstr("not valid for \"h\""));
}

}  // namespace
}  // namespace gpuattr::kube

namespace gpuattr::kube {
namespace {}  // namespace
}  // namespace gpuattr::kube

namespace gpuattr::kube {
namespace {

TEST(EnvProxy, FollowsHttpsProxyNoProxyAndLoopbackRules) {
  std::map<std::string, std::string> env;
  auto getenv = [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  auto proxy_for = [&](const std::string& url) {
    return ProxyFromEnvironment(*ParseServerUrl(url), getenv);
  };
  EXPECT_EQ(proxy_for("https://api.example:6443").url, "");
  env["https_proxy"] = "proxy.corp:3128";
  EXPECT_EQ(proxy_for("https://api.example:6443").url, "http://proxy.corp:3128");
  EXPECT_EQ(proxy_for("https://api.example:6443").source, "https_proxy");
  env["HTTPS_PROXY"] = "http://upper:8080";
  EXPECT_EQ(proxy_for("https://api.example:6443").url, "http://upper:8080");
  EXPECT_EQ(proxy_for("http://api.example").url, "");  // http uses HTTP_PROXY
  EXPECT_EQ(proxy_for("https://127.0.0.1:6443").url, "");
  EXPECT_EQ(proxy_for("https://localhost:6443").url, "");
  env["NO_PROXY"] = " .internal, example.org,10.0.0.0/8,api.other:6443";
  EXPECT_EQ(proxy_for("https://k8s.internal").url, "");
  EXPECT_EQ(proxy_for("https://example.org").url, "");
  EXPECT_EQ(proxy_for("https://a.example.org").url, "");
  EXPECT_NE(proxy_for("https://badexample.org").url, "");
  EXPECT_EQ(proxy_for("https://10.20.30.40:6443").url, "");
  EXPECT_NE(proxy_for("https://11.0.0.1:6443").url, "");
  EXPECT_EQ(proxy_for("https://api.other:6443").url, "");
  EXPECT_NE(proxy_for("https://api.other:443").url, "");
  env["NO_PROXY"] = "*";
  EXPECT_EQ(proxy_for("https://anything.example").url, "");
  // An empty upper-case variable counts as unset: the lower-case one is read.
  env["NO_PROXY"] = "";
  env["no_proxy"] = "api.example";
  EXPECT_EQ(proxy_for("https://api.example:6443").url, "");
  EXPECT_EQ(proxy_for("https://x.api.example:6443").url, "");
  EXPECT_EQ(proxy_for("https://other.example:6443").url, "http://upper:8080");
  EXPECT_EQ(proxy_for("https://other.example:6443").source, "HTTPS_PROXY");
  // HTTP_PROXY is for http:// servers only, never for https ones.
  env.erase("HTTPS_PROXY");
  env.erase("https_proxy");
  env["HTTP_PROXY"] = "http://plain:3128";
  EXPECT_EQ(proxy_for("https://other.example:6443").url, "");
  EXPECT_EQ(proxy_for("http://other.example").url, "http://plain:3128");
  EXPECT_EQ(proxy_for("http://other.example").source, "HTTP_PROXY");
}

}  // namespace
}  // namespace gpuattr::kube
