// The ObjectCache's optional kinds over the in-memory transport: for the DRA kinds the version
// from the group's discovery document, the move to the next version on 404 only, quiet skipping
// when DRA is not served, and one note (no request loop) on 403; namespaces likewise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "gpuattr/kube/dra_versions.h"
#include "gpuattr/kube/object_cache.h"
#include "support/fake_clock.h"
#include "support/fake_transport.h"

namespace gpuattr::kube {
namespace {

using testing::FakeReply;
using testing::FakeTransport;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

constexpr char kGroup[] = "/apis/resource.k8s.io";
constexpr char kSlice[] =
    R"({"metadata":{"name":"n1-gpu","resourceVersion":"5"},"spec":{"driver":"gpu.nvidia.com",
        "nodeName":"n1","pool":{"name":"n1"},"devices":[{"name":"gpu-0","attributes":{
        "type":{"string":"gpu"},"uuid":{"string":"GPU-0"}}}]}})";
constexpr char kClaim[] =
    R"({"metadata":{"name":"c","namespace":"ml","resourceVersion":"6"},"status":{
        "allocation":{"devices":{"results":[{"request":"r","driver":"gpu.nvidia.com",
        "pool":"n1","device":"gpu-0"}]}},"reservedFor":[{"resource":"pods","name":"p"}]}})";

std::string GroupJson(const std::vector<std::string>& versions) {
  std::string out = R"({"kind":"APIGroup","name":"resource.k8s.io","versions":[)";
  for (size_t i = 0; i < versions.size(); ++i)
    out += (i ? "," : "") + std::string(R"({"groupVersion":"resource.k8s.io/)") + versions[i] +
           R"(","version":")" + versions[i] + R"("})";
  return out + "]}";
}

std::string ListJson(const std::string& item, const std::string& rv) {
  return R"({"kind":"List","metadata":{"resourceVersion":")" + rv + R"("},"items":[)" + item + "]}";
}

bool Eventually(const std::function<bool()>& pred) {
  for (int i = 0; i < 10000; ++i) {  // up to ~10 s, never a timing assertion
    if (pred()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return pred();
}

// Pods only (listed empty, then a blocking watch) plus the DRA kinds.
struct Harness {
  Harness() {
    ApiClientOptions o;
    o.clock = &clock;
    o.random = [] { return 0.5; };
    client = std::make_shared<ApiClient>(transport, o);
    options.nodes = false;
    options.services = false;
    transport->SetDefault("/api/v1/pods?limit", FakeReply::Json(R"({"items":[]})"));
    transport->SetDefault("/api/v1/pods?watch", FakeReply::Blocking());
  }
  ObjectCache& Start() {
    cache = std::make_unique<ObjectCache>(client, options);
    cache->Start();
    return *cache;
  }
  // Serves both kinds at `version`: one object each, then blocking watches.
  void Serve(const std::string& version) {
    const std::string base = std::string(kGroup) + "/" + version + "/";
    transport->SetDefault(base + "resourceslices?limit", FakeReply::Json(ListJson(kSlice, "7")));
    transport->SetDefault(base + "resourceclaims?limit", FakeReply::Json(ListJson(kClaim, "7")));
    transport->SetDefault(base + "resourceslices?watch", FakeReply::Blocking());
    transport->SetDefault(base + "resourceclaims?watch", FakeReply::Blocking());
  }
  DraKindStatus Status(const std::string& resource) const {
    for (const auto& d : cache->OptionalStatuses())
      if (d.resource == resource) return d;
    ADD_FAILURE() << "no DRA kind " << resource;
    return {};
  }

  std::shared_ptr<FakeTransport> transport = std::make_shared<FakeTransport>("kind-gpu");
  FakeClock clock;
  std::shared_ptr<ApiClient> client;
  ObjectCacheOptions options;
  std::unique_ptr<ObjectCache> cache;
};

TEST(DraVersions, PreferredOrderAmongServedVersions) {
  auto v = DraVersionsToWatch(GroupJson({"v1beta1", "v1alpha3", "v1", "v1beta2"}));
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(*v, (std::vector<std::string>{"v1", "v1beta2", "v1beta1"}));
  v = DraVersionsToWatch(GroupJson({"v1alpha3"}));
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->empty());
  auto bad = DraVersionsToWatch("<html>");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("/apis/resource.k8s.io"));
  EXPECT_FALSE(DraVersionsToWatch(R"({"kind":"Status"})").ok());
  EXPECT_EQ(DraListPath("v1beta2", "resourceclaims"),
            "/apis/resource.k8s.io/v1beta2/resourceclaims");
}

TEST(ObjectCacheDra, WatchesTheBestServedVersion) {
  Harness h;
  h.transport->Enqueue(kGroup, FakeReply::Json(GroupJson({"v1beta1", "v1"})));
  h.Serve("v1");
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(cache.WaitSynced(10s));
  ASSERT_TRUE(Eventually([&] { return cache.DraSettled(); }));
  for (const char* r : {"resourceslices", "resourceclaims"}) {
    DraKindStatus d = h.Status(r);
    EXPECT_EQ(d.state, DraState::kWatching) << r;
    EXPECT_EQ(d.version, "v1") << r;
    EXPECT_TRUE(d.synced) << r;
    EXPECT_EQ(d.note, "") << r;
  }
  auto snap = cache.Snapshot();
  ASSERT_EQ(snap->resource_slices.count("n1-gpu"), 1u);
  EXPECT_EQ(snap->resource_slices.at("n1-gpu").devices.at(0).uuid, "GPU-0");
  ASSERT_EQ(snap->resource_claims.count("ml/c"), 1u);
  EXPECT_EQ(snap->resource_claims.at("ml/c").reserved_for.at(0).name, "p");
  EXPECT_EQ(h.transport->CountRequests(std::string(kGroup) + "/v1beta1"), 0u);
  // Discovery once, then one LIST and one WATCH a kind.
  EXPECT_TRUE(Eventually([&] { return h.transport->CountRequests(kGroup) == 5u; }));
  // The watched DRA kinds show up among the kind statuses, synced and without error.
  size_t dra_kinds = 0;
  for (const auto& k : cache.KindStatuses())
    if (k.resource.starts_with("resource")) {
      ++dra_kinds;
      EXPECT_TRUE(k.synced);
      EXPECT_EQ(k.last_error, "");
    }
  EXPECT_EQ(dra_kinds, 2u);
}

TEST(ObjectCacheDra, MovesOnToTheNextVersionOnlyOn404) {
  Harness h;
  h.transport->Enqueue(kGroup, FakeReply::Json(GroupJson({"v1", "v1beta2"})));
  // v1 LISTs are not found (no reply configured: the fake answers 404); v1beta2 serves.
  h.Serve("v1beta2");
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(cache.WaitSynced(10s));
  ASSERT_TRUE(Eventually([&] { return h.Status("resourceclaims").synced; }));
  ASSERT_TRUE(Eventually([&] { return h.Status("resourceslices").synced; }));
  EXPECT_EQ(h.Status("resourceclaims").version, "v1beta2");
  EXPECT_EQ(h.transport->CountRequests(std::string(kGroup) + "/v1/resourceclaims"), 1u);
  EXPECT_EQ(cache.Snapshot()->resource_claims.size(), 1u);
  for (const auto& k : cache.KindStatuses()) EXPECT_EQ(k.last_error, "") << k.resource;
}

TEST(ObjectCacheDra, NotServedIsSkippedWithoutRetries) {
  Harness h;  // no reply for the group: 404
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(cache.WaitSynced(10s));
  ASSERT_TRUE(Eventually([&] { return cache.DraSettled(); }));
  for (const char* r : {"resourceslices", "resourceclaims"})
    EXPECT_EQ(h.Status(r).state, DraState::kAbsent) << r;
  EXPECT_EQ(h.transport->CountRequests(kGroup), 1u);
  EXPECT_TRUE(h.clock.Sleeps().empty());  // no backoff: nothing left to retry
  for (const auto& k : cache.KindStatuses()) EXPECT_EQ(k.resource, "pods");
}

TEST(ObjectCacheDra, AGroupWithoutAKnownVersionIsAbsent) {
  Harness h;
  h.transport->Enqueue(kGroup, FakeReply::Json(GroupJson({"v1alpha3"})));
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(Eventually([&] { return cache.DraSettled(); }));
  EXPECT_EQ(h.Status("resourceclaims").state, DraState::kAbsent);
  EXPECT_EQ(h.transport->CountRequests(kGroup), 1u);
}

TEST(ObjectCacheDra, ForbiddenGivesOneNoteAndWaitsLongBeforeAskingAgain) {
  Harness h;
  h.options.dra_forbidden_retry = 10min;
  h.clock.SetBlockingSleeps(true);
  h.transport->Enqueue(kGroup, FakeReply::Json(GroupJson({"v1"})));
  h.Serve("v1");
  h.transport->Enqueue(std::string(kGroup) + "/v1/resourceclaims?limit",
                       FakeReply::Json(R"({"kind":"Status","code":403})", 403));
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(cache.WaitSynced(10s));
  ASSERT_TRUE(Eventually([&] { return h.Status("resourceclaims").state == DraState::kForbidden; }));
  ASSERT_TRUE(Eventually([&] { return h.clock.BlockedSleepers() == 1; }));
  ASSERT_TRUE(Eventually([&] { return cache.DraSettled(); }));
  DraKindStatus d = h.Status("resourceclaims");
  EXPECT_EQ(d.version, "v1");
  EXPECT_THAT(d.note,
              ::testing::StartsWith(
                  "DRA resourceclaims (resource.k8s.io/v1) not read, retried every 10 min: "));
  EXPECT_THAT(d.note, ::testing::EndsWith(
                          "; the ClusterRole gpuattr-reader there grants list and watch on it"));
  EXPECT_THAT(d.note, HasSubstr("cannot list resource \"resourceclaims\""));
  EXPECT_THAT(d.note, HasSubstr("config/kubernetes/clusterrole.yaml"));
  EXPECT_THAT(d.note, HasSubstr("gpuattr-reader"));
  EXPECT_EQ(d.last_error, "");  // a note, not an error
  EXPECT_EQ(h.clock.Sleeps(), (std::vector<std::chrono::milliseconds>{10min}));
  EXPECT_EQ(h.transport->CountRequests(std::string(kGroup) + "/v1/resourceclaims"), 1u);
  for (const auto& k : cache.KindStatuses()) EXPECT_NE(k.resource, "resourceclaims");

  // A grant added meanwhile: the next try lists and watches, and the note goes away.
  h.clock.Advance(10min);
  ASSERT_TRUE(Eventually([&] { return h.Status("resourceclaims").synced; }));
  d = h.Status("resourceclaims");
  EXPECT_EQ(d.state, DraState::kWatching);
  EXPECT_EQ(d.note, "");
  EXPECT_EQ(cache.Snapshot()->resource_claims.size(), 1u);
}

TEST(ObjectCacheDra, OffMeansNoRequest) {
  Harness h;
  h.options.dra = false;
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(cache.WaitSynced(10s));
  EXPECT_TRUE(cache.DraSettled());
  EXPECT_TRUE(cache.DraStatuses().empty());
  EXPECT_EQ(h.transport->CountRequests("/apis"), 0u);
}

// Namespaces (the teams of the bill) are listed and watched like the other kinds; a 403 leaves
// them empty with one note naming what is missing and the ClusterRole, never holding up a cycle.
TEST(ObjectCacheNamespaces, ListedAndWatchedWithTheirLabels) {
  Harness h;
  h.options.dra = false;
  h.options.namespaces = true;
  h.transport->SetDefault(
      "/api/v1/namespaces?limit",
      FakeReply::Json(ListJson(
          R"({"metadata":{"name":"ml","resourceVersion":"3","labels":{"team":"vision"}}})", "4")));
  h.transport->SetDefault("/api/v1/namespaces?watch", FakeReply::Blocking());
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(cache.WaitSynced(10s));
  ASSERT_TRUE(Eventually([&] { return h.Status("namespaces").synced; }));
  EXPECT_TRUE(cache.DraSettled());
  const auto objects = cache.Snapshot();
  ASSERT_EQ(objects->namespaces.size(), 1u);
  EXPECT_EQ(objects->namespaces.at("ml").labels.at("team"), "vision");
  EXPECT_TRUE(cache.DraStatuses().empty());  // namespaces are no DRA kind
  EXPECT_EQ(h.Status("namespaces").note, "");
}

TEST(ObjectCacheNamespaces, ForbiddenGivesOneNoteNamingWhatIsMissing) {
  Harness h;
  h.options.dra = false;
  h.options.namespaces = true;
  h.options.dra_forbidden_retry = 10min;
  h.clock.SetBlockingSleeps(true);
  h.transport->SetDefault("/api/v1/namespaces?limit",
                          FakeReply::Json(R"({"kind":"Status","code":403})", 403));
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(cache.WaitSynced(10s));  // pods alone: namespaces never hold up the cycle
  ASSERT_TRUE(Eventually([&] { return h.Status("namespaces").state == DraState::kForbidden; }));
  ASSERT_TRUE(Eventually([&] { return cache.DraSettled(); }));
  const DraKindStatus d = h.Status("namespaces");
  EXPECT_THAT(d.note, ::testing::StartsWith(
                          "namespaces (v1) not read (without them no namespace labels: "
                          "gpuattr_namespace_labels and the teams of the bill are absent), "
                          "retried every 10 min: "));
  EXPECT_THAT(d.note, HasSubstr("cannot list resource \"namespaces\""));
  EXPECT_THAT(d.note, HasSubstr("gpuattr-reader"));
  EXPECT_EQ(d.last_error, "");
  EXPECT_EQ(h.transport->CountRequests("/api/v1/namespaces"), 1u);
  EXPECT_TRUE(cache.Snapshot()->namespaces.empty());
}

}  // namespace
}  // namespace gpuattr::kube
