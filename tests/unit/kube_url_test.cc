// URLs (no network): kubeconfig server and proxy URLs, redaction, NO_PROXY, proxies from the
// environment.
#include "gpuattr/kube/url.h"

#include <gtest/gtest.h>

#include <map>

namespace gpuattr::kube {
namespace {

TEST(ServerUrl, ParsesHostsPortsAndPrefixes) {
  auto a = ParseServerUrl("https://10.0.0.1:6443");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->scheme, "https");
  EXPECT_EQ(a->host, "10.0.0.1");
  EXPECT_EQ(a->port, 6443);
  EXPECT_EQ(a->base_path, "");
  auto b = ParseServerUrl("HTTPS://rancher.example/k8s/clusters/c-abc/");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->scheme, "https");
  EXPECT_EQ(b->port, 443);
  EXPECT_EQ(b->base_path, "/k8s/clusters/c-abc");
  auto c = ParseServerUrl("https://[fd00::1]:6443");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->host, "fd00::1");
  EXPECT_EQ(c->port, 6443);
  auto d = ParseServerUrl("http://localhost");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->port, 80);
  for (const char* bad : {"10.0.0.1:6443", "https://", "https://h:0", "https://h:99999",
                          "https://h:x", "https://[::1"}) {
    EXPECT_FALSE(ParseServerUrl(bad).ok()) << bad;
  }
}

TEST(ParseUrl, UserinfoPathAndErrorsNamingTheValue) {
  auto p = ParseUrl("http://alice:s%40cret@proxy.corp:3128/x", "proxy-url");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->scheme, "http");
  EXPECT_EQ(p->userinfo, "alice:s%40cret");
  EXPECT_EQ(p->host, "proxy.corp");
  EXPECT_EQ(p->port, 3128);
  EXPECT_EQ(p->path, "/x");
  EXPECT_EQ(Redact(*p), "http://proxy.corp:3128");  // no credentials in messages
  auto v6 = ParseUrl("https://[fd00::1]", "server");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(Redact(*v6), "https://[fd00::1]");
  auto bad = ParseUrl("proxy.corp:3128", "cluster \"c\" proxy-url");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("cluster \"c\" proxy-url: ", 0), 0u) << bad.error().message;
}

TEST(PercentDecode, DecodesEscapesAndKeepsMalformedOnes) {
  EXPECT_EQ(PercentDecode("s%40cret%2F"), "s@cret/");
  EXPECT_EQ(PercentDecode("100%"), "100%");
  EXPECT_EQ(PercentDecode("%zz%4"), "%zz%4");
}

TEST(NoProxy, EntriesAsGoReadsThem) {
  EXPECT_TRUE(IsLoopback("localhost"));
  EXPECT_TRUE(IsLoopback("127.3.2.1"));
  EXPECT_TRUE(IsLoopback("::1"));
  EXPECT_FALSE(IsLoopback("128.0.0.1"));
  EXPECT_TRUE(MatchesNoProxyEntry("a.b.example.com", 443, ".example.com"));
  EXPECT_TRUE(MatchesNoProxyEntry("a.example.com", 443, "*.example.com"));
  EXPECT_TRUE(MatchesNoProxyEntry("example.com", 443, "EXAMPLE.com"));
  EXPECT_FALSE(MatchesNoProxyEntry("badexample.com", 443, "example.com"));
  EXPECT_TRUE(MatchesNoProxyEntry("10.1.2.3", 6443, "10.0.0.0/8"));
  EXPECT_FALSE(MatchesNoProxyEntry("10.1.2.3", 6443, "10.0.0.0/33"));
  EXPECT_TRUE(MatchesNoProxyEntry("api", 6443, "api:6443"));
  EXPECT_FALSE(MatchesNoProxyEntry("api", 443, "api:6443"));
  EXPECT_FALSE(MatchesNoProxyEntry("api", 443, "  "));
  EXPECT_TRUE(MatchesNoProxyEntry("anything", 1, "*"));
}

// The corners where Go's httpproxy differs from a naive suffix match.
TEST(NoProxy, DomainIpAndCidrCornersMatchGo) {
  // A leading dot or "*." means subdomains only; a bare domain also matches itself.
  EXPECT_FALSE(MatchesNoProxyEntry("example.com", 443, ".example.com"));
  EXPECT_FALSE(MatchesNoProxyEntry("example.com", 443, "*.example.com"));
  EXPECT_TRUE(MatchesNoProxyEntry("example.com", 443, "example.com"));
  EXPECT_TRUE(MatchesNoProxyEntry("a.example.com", 443, "example.com"));
  EXPECT_TRUE(MatchesNoProxyEntry("a.example.com", 443, ".example.com:443"));
  EXPECT_FALSE(MatchesNoProxyEntry("a.example.com", 6443, ".example.com:443"));
  // IPs: exact, with or without a port; IPv6 bare or bracketed.
  EXPECT_TRUE(MatchesNoProxyEntry("10.0.0.1", 6443, "10.0.0.1"));
  EXPECT_TRUE(MatchesNoProxyEntry("10.0.0.1", 6443, "10.0.0.1:6443"));
  EXPECT_FALSE(MatchesNoProxyEntry("10.0.0.1", 443, "10.0.0.1:6443"));
  EXPECT_FALSE(MatchesNoProxyEntry("10.0.0.10", 6443, "10.0.0.1"));
  EXPECT_TRUE(MatchesNoProxyEntry("fd00::1", 6443, "fd00::1"));
  EXPECT_TRUE(MatchesNoProxyEntry("fd00::1", 6443, "[fd00::1]:6443"));
  EXPECT_FALSE(MatchesNoProxyEntry("fd00::1", 443, "[fd00::1]:6443"));
  EXPECT_TRUE(MatchesNoProxyEntry("FD00:0::1", 6443, "fd00::1"));  // same address, other spelling
  // CIDRs, IPv4 and IPv6; a host name never falls in a CIDR, nor an IPv6 host in an IPv4 one.
  EXPECT_TRUE(MatchesNoProxyEntry("192.168.7.9", 443, "192.168.0.0/16"));
  EXPECT_FALSE(MatchesNoProxyEntry("192.169.0.1", 443, "192.168.0.0/16"));
  EXPECT_TRUE(MatchesNoProxyEntry("fd00:1::5", 443, "fd00::/8"));
  EXPECT_FALSE(MatchesNoProxyEntry("fe80::1", 443, "fd00::/8"));
  EXPECT_FALSE(MatchesNoProxyEntry("::ffff:10.0.0.1", 443, "fd00::/8"));
  EXPECT_FALSE(MatchesNoProxyEntry("api.example", 443, "10.0.0.0/8"));
  EXPECT_TRUE(MatchesNoProxyEntry("10.9.9.9", 443, "0.0.0.0/0"));
  EXPECT_FALSE(MatchesNoProxyEntry("10.9.9.9", 443, "10.0.0.0/x"));
  // Junk never matches.
  EXPECT_FALSE(MatchesNoProxyEntry("api", 443, ":443"));
  EXPECT_FALSE(MatchesNoProxyEntry("api", 443, "[api"));
}

}  // namespace
}  // namespace gpuattr::kube
