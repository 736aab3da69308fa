#include "gpuattr/kube/api_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/fake_clock.h"
#include "support/fake_transport.h"

namespace gpuattr::kube {
namespace {

using std::chrono::milliseconds;
using testing::FakeReply;
using testing::FakeTransport;
using ::testing::HasSubstr;
using ::testing::Not;

struct Fixture {
  std::shared_ptr<FakeTransport> transport = std::make_shared<FakeTransport>("kind-gpu");
  FakeClock clock;
  ApiClient client{transport, [this] {
                     ApiClientOptions o;
                     o.clock = &clock;
                     o.random = [] { return 0.0; };  // no jitter: deterministic waits
                     o.backoff.initial = milliseconds(100);
                     o.backoff.max = milliseconds(1000);
                     return o;
                   }()};
};

TEST(ClassifyPath, ListsWatchesGetsProxiesAndDiscovery) {
  auto k = ClassifyPath("/api/v1/pods?limit=500");
  EXPECT_EQ(k.verb, "list");
  EXPECT_EQ(k.resource, "pods");
  EXPECT_EQ(k.namespace_, "");
  EXPECT_EQ(k.api_group, "");

  k = ClassifyPath("/api/v1/nodes?watch=1&allowWatchBookmarks=true&resourceVersion=5");
  EXPECT_EQ(k.verb, "watch");
  EXPECT_EQ(k.resource, "nodes");

  k = ClassifyPath(
      "/api/v1/namespaces/gpu-operator/pods/nvidia-dcgm-exporter-abc:9400/proxy/metrics");
  EXPECT_EQ(k.verb, "get");
  EXPECT_EQ(k.resource, "pods/proxy");
  EXPECT_EQ(k.namespace_, "gpu-operator");

  k = ClassifyPath(
      "/api/v1/namespaces/monitoring/services/prometheus:9090/proxy/api/v1/query?query=up");
  EXPECT_EQ(k.verb, "get");
  EXPECT_EQ(k.resource, "services/proxy");

  k = ClassifyPath("/api/v1/namespaces/ml/pods/trainer");
  EXPECT_EQ(k.verb, "get");
  EXPECT_EQ(k.resource, "pods");

  k = ClassifyPath("/api/v1/namespaces/ml/services?limit=500");
  EXPECT_EQ(k.verb, "list");
  EXPECT_EQ(k.resource, "services");
  EXPECT_EQ(k.namespace_, "ml");

  k = ClassifyPath("/apis/resource.k8s.io/v1/resourceslices?limit=500");
  EXPECT_EQ(k.verb, "list");
  EXPECT_EQ(k.resource, "resourceslices");
  EXPECT_EQ(k.api_group, "resource.k8s.io");

  k = ClassifyPath("/apis/resource.k8s.io/v1beta1/resourceclaims?watch=true");
  EXPECT_EQ(k.verb, "watch");
  EXPECT_EQ(k.resource, "resourceclaims");

  for (const char* p : {"/api", "/apis", "/api/v1", "/apis/resource.k8s.io/v1", "/version"}) {
    k = ClassifyPath(p);
    EXPECT_EQ(k.verb, "get") << p;
    EXPECT_EQ(k.resource, "discovery") << p;
  }
}

TEST(ErrorForStatus, UnauthorizedNamesTheCluster) {
  auto e = ErrorForStatus(401, {}, ClassifyPath("/api/v1/pods"), "kind-gpu");
  EXPECT_EQ(e.code, ErrorCode::kUnauthenticated);
  EXPECT_THAT(e.message, HasSubstr("unauthorized: credentials rejected by cluster \"kind-gpu\""));
}

TEST(ErrorForStatus, ForbiddenNamesVerbResourceAndTheFix) {
  auto e = ErrorForStatus(403, {}, ClassifyPath("/api/v1/pods?limit=500"), "kind-gpu");
  EXPECT_EQ(e.code, ErrorCode::kPermissionDenied);
  EXPECT_THAT(e.message,
              HasSubstr("forbidden: cannot list resource \"pods\" at the cluster scope"));
  EXPECT_THAT(e.message,
              HasSubstr("grant list/watch on pods (config/kubernetes/clusterrole.yaml)"));

  e = ErrorForStatus(403, {}, ClassifyPath("/api/v1/namespaces/gpu/pods/dcgm-x:9400/proxy/metrics"),
                     "c");
  EXPECT_THAT(e.message, HasSubstr("cannot get resource \"pods/proxy\" in namespace \"gpu\""));
  EXPECT_THAT(e.message, HasSubstr("grant get on pods/proxy "));

  e = ErrorForStatus(403, {}, ClassifyPath("/apis/resource.k8s.io/v1/resourceslices?watch=1"), "c");
  EXPECT_THAT(e.message, HasSubstr("cannot watch resource \"resourceslices\""));
  EXPECT_THAT(e.message, HasSubstr("on resourceslices.resource.k8s.io"));
}

TEST(ErrorForStatus, OtherCodes) {
  Response status_body;
  status_body.body =
      R"({"kind":"Status","status":"Failure","message":"pods \"x\" not found","code":404})";
  auto e = ErrorForStatus(404, status_body, ClassifyPath("/api/v1/namespaces/a/pods/x"), "c");
  EXPECT_EQ(e.code, ErrorCode::kNotFound);
  EXPECT_THAT(e.message, HasSubstr("apiserver: pods \"x\" not found"));
  EXPECT_EQ(ErrorForStatus(410, {}, ClassifyPath("/api/v1/pods"), "c").code, ErrorCode::kGone);
  EXPECT_EQ(ErrorForStatus(429, {}, ClassifyPath("/api/v1/pods"), "c").code,
            ErrorCode::kResourceExhausted);
  auto e5 = ErrorForStatus(503, {}, ClassifyPath("/api/v1/pods"), "c");
  EXPECT_EQ(e5.code, ErrorCode::kUnavailable);
  EXPECT_THAT(e5.message, HasSubstr("HTTP 503"));
  // The status travels as a field, for every code (403's text names no number).
  EXPECT_EQ(e5.http_status, 503);
  for (int status : {401, 403, 404, 410, 418, 429, 500})
    EXPECT_EQ(ErrorForStatus(status, {}, ClassifyPath("/api/v1/pods"), "c").http_status, status);
  // An exporter's body through the proxy is not an apiserver Status: never quoted.
  Response exporter;
  exporter.body = "# HELP secret_stuff\n";
  EXPECT_THAT(ErrorForStatus(500, exporter, ClassifyPath("/api/v1/pods"), "c").message,
              Not(HasSubstr("secret_stuff")));
}

TEST(Backoff, GrowsIsCappedAndJittered) {
  BackoffPolicy policy;
  policy.initial = milliseconds(100);
  policy.max = milliseconds(1000);
  policy.factor = 2;
  policy.jitter = 0.5;
  Backoff none(policy, [] { return 0.0; });
  std::vector<int64_t> got;
  for (int i = 0; i < 7; ++i) got.push_back(none.Next().count());
  EXPECT_EQ(got, (std::vector<int64_t>{100, 200, 400, 800, 1000, 1000, 1000}));
  none.Reset();
  EXPECT_EQ(none.Next().count(), 100);

  // Jitter takes up to `jitter` of each step away, never adds: the cap holds.
  double u = 0.0;
  Backoff jittered(policy, [&u] {
    u += 0.3;
    if (u >= 1.0) u -= 1.0;
    return u;
  });
  int64_t base = 100;
  bool differs = false;
  for (int i = 0; i < 20; ++i) {
    int64_t w = jittered.Next().count();
    EXPECT_LE(w, base);
    EXPECT_GE(w, base / 2);
    EXPECT_LE(w, 1000);
    differs |= w != base;
    base = std::min<int64_t>(base * 2, 1000);
  }
  EXPECT_TRUE(differs);

  // The default random source stays within bounds too.
  Backoff real(policy);
  for (int i = 0; i < 50; ++i) {
    auto w = real.Next();
    EXPECT_GE(w.count(), 0);
    EXPECT_LE(w.count(), 1000);
  }
}

TEST(ParseRetryAfter, SecondsOnly) {
  EXPECT_EQ(ParseRetryAfter("3"), milliseconds(3000));
  EXPECT_EQ(ParseRetryAfter(" 10 "), milliseconds(10000));
  EXPECT_EQ(ParseRetryAfter(""), milliseconds(0));
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"), milliseconds(0));
  EXPECT_EQ(ParseRetryAfter("-1"), milliseconds(0));
}

TEST(ApiClient, SuccessReturnsTheBody) {
  Fixture f;
  f.transport->Enqueue("/api/v1/pods", FakeReply::Json(R"({"items":[]})"));
  auto r = f.client.Get("/api/v1/pods?limit=500");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->body, R"({"items":[]})");
  EXPECT_EQ(f.transport->LastRequest().headers.at("Accept"), "application/json");
  EXPECT_TRUE(f.clock.Sleeps().empty());
}

TEST(ApiClient, HonoursRetryAfterOn429) {
  Fixture f;
  FakeReply throttled = FakeReply::Json(R"({"kind":"Status","code":429})", 429);
  throttled.headers["retry-after"] = "3";
  f.transport->Enqueue("/api/v1/nodes", throttled);
  f.transport->Enqueue("/api/v1/nodes", FakeReply::Json(R"({"items":[]})"));
  auto r = f.client.Get("/api/v1/nodes?limit=500");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(f.clock.Sleeps(), (std::vector<milliseconds>{milliseconds(3000)}));
  EXPECT_EQ(f.transport->CountRequests("/api/v1/nodes"), 2u);
  EXPECT_EQ(f.client.counters().Get("list", "nodes", "429"), 1u);
  EXPECT_EQ(f.client.counters().Get("list", "nodes", "200"), 1u);
}

TEST(ApiClient, RetryAfterIsCapped) {
  Fixture f;
  FakeReply throttled = FakeReply::Json("{}", 429);
  throttled.headers["retry-after"] = "86400";
  f.transport->Enqueue("/api/v1/nodes", throttled);
  f.transport->Enqueue("/api/v1/nodes", FakeReply::Json("{}"));
  ASSERT_TRUE(f.client.Get("/api/v1/nodes").ok());
  EXPECT_EQ(f.clock.Sleeps(), (std::vector<milliseconds>{milliseconds(60000)}));
}

TEST(ApiClient, RetriesServerErrorsWithBackoffThenGivesUp) {
  Fixture f;
  f.transport->SetDefault("/api/v1/pods", FakeReply::Json("{}", 503));
  auto r = f.client.Get("/api/v1/pods?limit=500");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(r.error().message, HasSubstr("cluster \"kind-gpu\""));
  EXPECT_EQ(f.transport->CountRequests("/api/v1/pods"), 3u);  // max_attempts
  EXPECT_EQ(f.clock.Sleeps(), (std::vector<milliseconds>{milliseconds(100), milliseconds(200)}));
}

TEST(ApiClient, RetriesTransportFailures) {
  Fixture f;
  f.transport->Enqueue("/api", FakeReply::Fail(MakeError(ErrorCode::kUnavailable, "refused")));
  f.transport->Enqueue("/api", FakeReply::Json("{}"));
  ASSERT_TRUE(f.client.Get("/api").ok());
  EXPECT_EQ(f.client.counters().Get("get", "discovery", "error"), 1u);
  EXPECT_EQ(f.client.counters().Get("get", "discovery", "200"), 1u);
}

TEST(ApiClient, DoesNotRetryClientErrors) {
  Fixture f;
  f.transport->SetDefault("/api/v1/pods", FakeReply::Json("{}", 403));
  auto r = f.client.Get("/api/v1/pods?limit=500");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
  EXPECT_THAT(r.error().message, HasSubstr("cannot list resource \"pods\""));
  EXPECT_EQ(f.transport->CountRequests("/api/v1/pods"), 1u);
  EXPECT_TRUE(f.clock.Sleeps().empty());

  f.transport->SetDefault("/api/v1/namespaces", FakeReply::Json("{}", 404));
  EXPECT_EQ(f.client.Get("/api/v1/namespaces/a/pods/b").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(f.transport->CountRequests("/api/v1/namespaces"), 1u);
}

TEST(ApiClient, StopEndsRetryWaits) {
  Fixture f;
  f.transport->SetDefault("/api/v1/pods", FakeReply::Json("{}", 500));
  StopSignal stop;
  stop.Stop();
  GetOptions o;
  o.stop = &stop;
  o.max_attempts = 10;
  EXPECT_FALSE(f.client.Get("/api/v1/pods", o).ok());
  EXPECT_EQ(f.transport->CountRequests("/api/v1/pods"), 1u);
}

TEST(ApiClient, CountsEveryRequestByVerbResourceAndCode) {
  Fixture f;
  f.transport->SetDefault("/api/v1/pods", FakeReply::Json("{}"));
  f.transport->SetDefault("/api/v1/namespaces/gpu/pods/dcgm:9400/proxy", FakeReply::Json("x 1\n"));
  f.transport->SetDefault("/api/v1/namespaces/gpu/pods/gone:9400/proxy",
                          FakeReply::Json("{}", 404));
  f.transport->SetDefault("/api/v1/nodes?watch", FakeReply::Chunks({}));
  ASSERT_TRUE(f.client.Get("/api/v1/pods?limit=500").ok());
  ASSERT_TRUE(f.client.Get("/api/v1/pods?limit=500&continue=abc").ok());
  ASSERT_TRUE(f.client.Get("/api/v1/namespaces/gpu/pods/dcgm:9400/proxy/metrics").ok());
  ASSERT_FALSE(f.client.Get("/api/v1/namespaces/gpu/pods/gone:9400/proxy/metrics").ok());
  ASSERT_TRUE(f.client.Stream("/api/v1/nodes?watch=1", [](std::string_view) { return true; }).ok());
  ASSERT_FALSE(f.client.Get("/apis").ok());  // the fake answers 404

  std::vector<std::tuple<std::string, std::string, std::string, uint64_t>> got;
  for (const auto& c : f.client.RequestCounts())
    got.emplace_back(c.verb, c.resource, c.code, c.count);
  EXPECT_EQ(got, (decltype(got){{"get", "discovery", "404", 1},
                                {"get", "pods/proxy", "200", 1},
                                {"get", "pods/proxy", "404", 1},
                                {"list", "pods", "200", 2},
                                {"watch", "nodes", "200", 1}}));
  EXPECT_EQ(f.client.counters().Total("get", "pods/proxy"), 2u);
}

TEST(ApiClient, StreamMapsStatusToErrors) {
  Fixture f;
  FakeReply gone = FakeReply::Chunks({R"({"kind":"Status","code":410,"reason":"Expired"})"});
  gone.status = 410;
  f.transport->Enqueue("/api/v1/pods?watch", gone);
  auto r = f.client.Stream("/api/v1/pods?watch=1", [](std::string_view) { return true; });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kGone);
  EXPECT_EQ(f.client.counters().Get("watch", "pods", "410"), 1u);
}

}  // namespace
}  // namespace gpuattr::kube
