#include "gpuattr/kube/object_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "support/fake_clock.h"
#include "support/fake_transport.h"

namespace gpuattr::kube {
namespace {

using testing::FakeReply;
using testing::FakeTransport;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

std::string PodJson(const std::string& ns, const std::string& name, const std::string& rv,
                    const std::string& node = "gpu-1") {
  return R"({"metadata":{"namespace":")" + ns + R"(","name":")" + name +
         R"(","resourceVersion":")" + rv + R"("},"spec":{"nodeName":")" + node +
         R"(","containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]},"status":{"phase":"Running"}})";
}

std::string ListJson(const std::vector<std::string>& items, const std::string& rv,
                     const std::string& cont = "") {
  std::string out = R"({"kind":"List","metadata":{"resourceVersion":")" + rv + R"(")";
  if (!cont.empty()) out += R"(,"continue":")" + cont + R"(")";
  out += R"(},"items":[)";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + items[i];
  return out + "]}";
}

std::string Event(const std::string& type, const std::string& object) {
  return R"({"type":")" + type + R"(","object":)" + object + "}\n";
}

bool Eventually(const std::function<bool()>& pred) {
  for (int i = 0; i < 10000; ++i) {  // up to ~10 s, never a timing assertion
    if (pred()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return pred();
}

// A cache over a fake apiserver with a fake clock; pods only unless told otherwise.
struct Harness {
  explicit Harness(bool all_kinds = false) {
    ApiClientOptions o;
    o.clock = &clock;
    o.random = [] { return 0.5; };
    client = std::make_shared<ApiClient>(transport, o);
    ObjectCacheOptions co;
    co.nodes = all_kinds;
    co.services = all_kinds;
    co.dra = false;  // the optional DRA kinds: kube_dra_cache_test.cc
    options = co;
  }
  ObjectCache& Start() {
    cache = std::make_unique<ObjectCache>(client, options);
    cache->Start();
    return *cache;
  }
  size_t Lists(const std::string& base = "/api/v1/pods?limit") const {
    return transport->CountRequests(base);
  }
  size_t Watches(const std::string& base = "/api/v1/pods?watch") const {
    return transport->CountRequests(base);
  }

  std::shared_ptr<FakeTransport> transport = std::make_shared<FakeTransport>("kind-gpu");
  FakeClock clock;
  std::shared_ptr<ApiClient> client;
  ObjectCacheOptions options;
  std::unique_ptr<ObjectCache> cache;
};

TEST(ObjectCache, PaginatesAcrossThreePages) {
  Harness h;
  h.transport->Enqueue(
      "/api/v1/pods?limit=500",
      FakeReply::Json(ListJson({PodJson("a", "p1", "1"), PodJson("a", "p2", "2")}, "", "tok1")));
  h.transport->Enqueue("/api/v1/pods?limit=500&continue=tok1",
                       FakeReply::Json(ListJson({PodJson("b", "p3", "3")}, "", "tok2")));
  h.transport->Enqueue("/api/v1/pods?limit=500&continue=tok2",
                       FakeReply::Json(ListJson({PodJson("c", "p4", "4")}, "100")));
  h.transport->SetDefault("/api/v1/pods?watch", FakeReply::Blocking());
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(cache.WaitSynced(10s));

  auto snap = cache.Snapshot();
  std::vector<std::string> keys;
  for (const auto& [k, p] : snap->pods) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"a/p1", "a/p2", "b/p3", "c/p4"}));
  EXPECT_EQ(snap->pods.at("b/p3").containers.at(0).limits.at("nvidia.com/gpu"), 1);

  ASSERT_TRUE(Eventually([&] { return h.Watches() == 1; }));
  auto reqs = h.transport->Requests();
  ASSERT_GE(reqs.size(), 4u);
  EXPECT_EQ(reqs[0].path, "/api/v1/pods?limit=500");
  EXPECT_EQ(reqs[1].path, "/api/v1/pods?limit=500&continue=tok1");
  EXPECT_EQ(reqs[2].path, "/api/v1/pods?limit=500&continue=tok2");
  EXPECT_THAT(reqs[3].path, HasSubstr("watch=1"));
  EXPECT_THAT(reqs[3].path, HasSubstr("resourceVersion=100"));  // the last page's RV
  EXPECT_EQ(h.client->counters().Get("list", "pods", "200"), 3u);
}

TEST(ObjectCache, WatchAddsAndDeletes) {
  Harness h;
  h.transport->Enqueue("/api/v1/pods?limit",
                       FakeReply::Json(ListJson({PodJson("ml", "old", "5")}, "10")));
  h.transport->Enqueue("/api/v1/pods?watch",
                       FakeReply::Chunks({Event("ADDED", PodJson("ml", "new", "11")),
                                          Event("DELETED", PodJson("ml", "old", "12"))},
                                         /*block=*/true));
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(cache.WaitSynced(10s));
  ASSERT_TRUE(Eventually([&] {
    auto s = cache.Snapshot();
    return s->pods.size() == 1 && s->FindPod("ml", "new") != nullptr;
  }));
  auto snap = cache.Snapshot();
  EXPECT_EQ(snap->FindPod("ml", "old"), nullptr);
  EXPECT_EQ(snap->FindPod("ml", "new")->resource_version, "11");
  EXPECT_EQ(h.Lists(), 1u);
}

TEST(ObjectCache, SnapshotsAreImmutableAndRevisionsMonotonic) {
  Harness h;
  h.transport->Enqueue("/api/v1/pods?limit",
                       FakeReply::Json(ListJson({PodJson("a", "p", "1")}, "1")));
  h.transport->Enqueue(
      "/api/v1/pods?watch",
      FakeReply::Chunks({Event("MODIFIED", PodJson("a", "p", "2", "gpu-2"))}, true));
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(cache.WaitSynced(10s));
  ASSERT_TRUE(Eventually([&] { return cache.Snapshot()->pods.at("a/p").node_name == "gpu-2"; }));
  auto later = cache.Snapshot();
  EXPECT_EQ(cache.Snapshot().get(), later.get());  // nothing changed: the same snapshot
  EXPECT_GE(later->revision, 2u);
}

TEST(ObjectCache, EarlierSnapshotsNeverChange) {
  Harness h;
  h.transport->Enqueue("/api/v1/pods?limit",
                       FakeReply::Json(ListJson({PodJson("a", "p", "1")}, "1")));
  FakeReply deleted = FakeReply::Chunks({Event("DELETED", PodJson("a", "p", "2"))}, true);
  deleted.gate = "delete";
  h.transport->Enqueue("/api/v1/pods?watch", deleted);
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(cache.WaitSynced(10s));
  auto before = cache.Snapshot();
  ASSERT_EQ(before->pods.size(), 1u);
  h.transport->OpenGate("delete");
  ASSERT_TRUE(Eventually([&] { return cache.Snapshot()->pods.empty(); }));
  auto after = cache.Snapshot();
  EXPECT_GT(after->revision, before->revision);
  EXPECT_EQ(before->pods.size(), 1u);  // the old snapshot still holds the pod
  EXPECT_NE(before->FindPod("a", "p"), nullptr);
}

// Copy-on-write: a cluster keeps one copy of its objects. A change while nobody holds a snapshot
// is made in place (the next snapshot is the same object, at a newer revision); a change while a
// snapshot is held copies first (the holder's view stays as it was).
TEST(ObjectCache, ChangesAreMadeInPlaceWhenNoSnapshotIsHeld) {
  Harness h;
  h.transport->Enqueue("/api/v1/pods?limit",
                       FakeReply::Json(ListJson({PodJson("a", "p", "1")}, "1")));
  FakeReply first = FakeReply::Chunks({Event("ADDED", PodJson("a", "q", "2"))}, true);
  first.gate = "first";
  h.transport->Enqueue("/api/v1/pods?watch", first);
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(cache.WaitSynced(10s));
  const ClusterObjects* address = nullptr;
  uint64_t revision = 0;
  {
    auto snap = cache.Snapshot();
    address = snap.get();
    revision = snap->revision;
  }  // released before the change
  h.transport->OpenGate("first");
  // Waits without holding a snapshot (that would make the change copy).
  ASSERT_TRUE(Eventually([&] { return cache.KindStatuses().at(0).objects == 2; }));
  auto after = cache.Snapshot();
  EXPECT_EQ(after.get(), address);  // changed in place: no copy was needed
  EXPECT_GT(after->revision, revision);
  EXPECT_EQ(after->pods.size(), 2u);
}

TEST(ObjectCache, HttpGoneRelistsExactlyOnce) {
  Harness h;
  h.transport->Enqueue("/api/v1/pods?limit",
                       FakeReply::Json(ListJson({PodJson("a", "p1", "1")}, "10")));
  h.transport->Enqueue("/api/v1/pods?limit",
                       FakeReply::Json(ListJson({PodJson("a", "p2", "20")}, "20")));
  FakeReply gone = FakeReply::Chunks({R"({"kind":"Status","code":410,"reason":"Expired"})"});
  gone.status = 410;
  h.transport->Enqueue("/api/v1/pods?watch", gone);
  h.transport->Enqueue("/api/v1/pods?watch", FakeReply::Blocking());
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(Eventually([&] { return h.Watches() == 2; }));
  EXPECT_EQ(h.Lists(), 2u);
  auto reqs = h.transport->Requests();
  EXPECT_THAT(reqs.back().path, HasSubstr("resourceVersion=20"));
  auto snap = cache.Snapshot();
  EXPECT_EQ(snap->pods.size(), 1u);  // the relist replaced the store
  EXPECT_NE(snap->FindPod("a", "p2"), nullptr);
  EXPECT_EQ(h.client->counters().Get("watch", "pods", "410"), 1u);
}

TEST(ObjectCache, ErrorEventGoneRelistsExactlyOnce) {
  Harness h;
  h.transport->Enqueue("/api/v1/pods?limit", FakeReply::Json(ListJson({}, "10")));
  h.transport->Enqueue("/api/v1/pods?limit",
                       FakeReply::Json(ListJson({PodJson("a", "p", "30")}, "30")));
  h.transport->Enqueue(
      "/api/v1/pods?watch",
      FakeReply::Chunks(
          {Event("ADDED", PodJson("a", "q", "11")),
           Event("ERROR", R"({"kind":"Status","code":410,"message":"too old resource version"})")},
          /*block=*/true));
  h.transport->Enqueue("/api/v1/pods?watch", FakeReply::Blocking());
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(Eventually([&] { return h.Watches() == 2; }));
  EXPECT_EQ(h.Lists(), 2u);
  EXPECT_THAT(h.transport->Requests().back().path, HasSubstr("resourceVersion=30"));
  EXPECT_EQ(cache.Snapshot()->pods.size(), 1u);
  EXPECT_TRUE(h.clock.Sleeps().empty());  // a relist needs no backoff
}

TEST(ObjectCache, SteadyStateResumesAnEndedWatchWithoutListing) {
  Harness h;
  h.transport->Enqueue("/api/v1/pods?limit", FakeReply::Json(ListJson({}, "10")));
  // Three watches that end normally (the apiserver's timeoutSeconds), with a bookmark in between.
  h.transport->Enqueue("/api/v1/pods?watch",
                       FakeReply::Chunks({Event("ADDED", PodJson("a", "p", "11"))}));
  h.transport->Enqueue("/api/v1/pods?watch",
                       FakeReply::Chunks({Event(
                           "BOOKMARK", R"({"kind":"Pod","metadata":{"resourceVersion":"15"}})")}));
  h.transport->Enqueue("/api/v1/pods?watch", FakeReply::Chunks({}));
  h.transport->Enqueue("/api/v1/pods?watch", FakeReply::Blocking());
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(Eventually([&] { return h.Watches() == 4; }));
  EXPECT_EQ(h.Lists(), 1u);
  auto reqs = h.transport->Requests();
  ASSERT_EQ(reqs.size(), 5u);
  EXPECT_THAT(reqs[1].path, HasSubstr("resourceVersion=10"));
  EXPECT_THAT(reqs[2].path, HasSubstr("resourceVersion=11"));
  EXPECT_THAT(reqs[3].path, HasSubstr("resourceVersion=15"));  // bookmark moved it
  EXPECT_THAT(reqs[4].path, HasSubstr("resourceVersion=15"));
  EXPECT_EQ(cache.Snapshot()->pods.size(), 1u);
  EXPECT_EQ(h.client->counters().Total("list", "pods"), 1u);
}

TEST(ObjectCache, WatchErrorsBackOffAndRewatchWithoutListing) {
  Harness h;
  h.transport->Enqueue("/api/v1/pods?limit", FakeReply::Json(ListJson({}, "10")));
  h.transport->Enqueue("/api/v1/pods?watch",
                       FakeReply::Fail(MakeError(ErrorCode::kUnavailable, "connection reset")));
  h.transport->Enqueue("/api/v1/pods?watch", FakeReply::Json("{}", 500));
  h.transport->Enqueue("/api/v1/pods?watch", FakeReply::Blocking());
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(Eventually([&] { return h.Watches() == 3; }));
  EXPECT_EQ(h.Lists(), 1u);
  // Default policy 500 ms doubling, jitter 0.5 × u=0.5 takes a quarter off.
  EXPECT_EQ(h.clock.Sleeps(), (std::vector<std::chrono::milliseconds>{375ms, 750ms}));
  (void)cache;
}

TEST(ObjectCache, ListErrorsAreReportedPerKindAndRetriedAfterBackoff) {
  Harness h(/*all_kinds=*/true);
  h.clock.SetBlockingSleeps(true);  // hold the failing informer in its backoff
  h.transport->Enqueue("/api/v1/nodes?limit", FakeReply::Json("{}", 403));
  h.transport->SetDefault("/api/v1/", FakeReply::Json(ListJson({}, "1")));  // every other list
  h.transport->SetDefault("/api/v1/pods?watch", FakeReply::Blocking());
  h.transport->SetDefault("/api/v1/nodes?watch", FakeReply::Blocking());
  h.transport->SetDefault("/api/v1/services?watch", FakeReply::Blocking());
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(Eventually([&] { return h.clock.BlockedSleepers() == 1; }));
  EXPECT_FALSE(cache.synced());
  EXPECT_FALSE(cache.WaitSynced(1ms));
  ASSERT_TRUE(Eventually([&] {
    int synced = 0;
    for (const auto& k : cache.KindStatuses()) synced += k.synced ? 1 : 0;
    return synced == 2;
  }));
  for (const auto& s : cache.KindStatuses()) {
    if (s.resource != "nodes") continue;
    EXPECT_FALSE(s.synced);
    EXPECT_EQ(s.lists, 1u);
    EXPECT_THAT(s.last_error, HasSubstr("forbidden: cannot list resource \"nodes\""));
    EXPECT_THAT(s.last_error, HasSubstr("cluster \"kind-gpu\""));
  }
  EXPECT_EQ(h.Lists("/api/v1/nodes?limit"), 1u);  // no retry before the backoff ends
  EXPECT_EQ(h.clock.Sleeps(), (std::vector<std::chrono::milliseconds>{375ms}));

  h.clock.Advance(375ms);
  ASSERT_TRUE(cache.WaitSynced(10s));
  EXPECT_EQ(h.Lists("/api/v1/nodes?limit"), 2u);
  for (const auto& s : cache.KindStatuses()) EXPECT_EQ(s.last_error, "") << s.resource;
}

TEST(ObjectCache, AllKindsSyncAndSkipUndecodableObjects) {
  Harness h(/*all_kinds=*/true);
  h.transport->Enqueue(
      "/api/v1/pods?limit",
      FakeReply::Json(
          ListJson({PodJson("a", "good", "1"),
                    R"({"metadata":{"namespace":"a","name":"bad"},"spec":{"containers":7}})"},
                   "1")));
  h.transport->Enqueue(
      "/api/v1/nodes?limit",
      FakeReply::Json(
          ListJson({R"({"metadata":{"name":"gpu-1","labels":{"nvidia.com/gpu.replicas":"4"}},
                                   "status":{"capacity":{"nvidia.com/gpu.shared":"16"}}})"},
                   "1")));
  h.transport->Enqueue(
      "/api/v1/services?limit",
      FakeReply::Json(ListJson(
          {R"({"metadata":{"namespace":"mon","name":"prom"},"spec":{"ports":[{"port":9090}]}})"},
          "1")));
  h.transport->SetDefault("/api/v1/", FakeReply::Blocking());
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(cache.WaitSynced(10s));
  auto snap = cache.Snapshot();
  EXPECT_EQ(snap->pods.size(), 1u);
  EXPECT_EQ(snap->nodes.at("gpu-1").capacity.at("nvidia.com/gpu.shared"), 16);
  EXPECT_EQ(snap->nodes.at("gpu-1").labels.at("nvidia.com/gpu.replicas"), "4");
  EXPECT_EQ(snap->FindService("mon", "prom")->ports.at(0).port, 9090);
  for (const auto& s : cache.KindStatuses()) {
    EXPECT_TRUE(s.synced) << s.resource;
    EXPECT_EQ(s.lists, 1u);
    EXPECT_EQ(s.objects, 1u);
    EXPECT_EQ(s.decode_errors, s.resource == "pods" ? 1u : 0u);
    EXPECT_EQ(s.last_error, "");  // a bad object is not a failed LIST
    if (s.resource == "pods") {
      EXPECT_THAT(s.last_decode_error, HasSubstr("pod \"a/bad\": field spec.containers"));
    }
  }
}

TEST(ObjectCache, DeletedObjectLeavesEvenWhenItDoesNotDecode) {
  Harness h;
  h.transport->Enqueue("/api/v1/pods?limit",
                       FakeReply::Json(ListJson({PodJson("a", "p", "1")}, "1")));
  h.transport->Enqueue(
      "/api/v1/pods?watch",
      FakeReply::Chunks(
          {Event("DELETED", R"({"metadata":{"namespace":"a","name":"p"},"spec":{"nodeName":5}})")},
          true));
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(cache.WaitSynced(10s));
  ASSERT_TRUE(Eventually([&] { return cache.Snapshot()->pods.empty(); }));
  // The error is recorded right after the removal.
  EXPECT_TRUE(Eventually([&] { return cache.KindStatuses().at(0).decode_errors == 1; }));
}

TEST(ObjectCache, StopIsPromptWhileWatching) {
  Harness h(/*all_kinds=*/true);
  h.transport->SetDefault("/api/v1/", FakeReply::Json(ListJson({}, "1")));
  h.transport->SetDefault("/api/v1/pods?watch", FakeReply::Blocking());
  h.transport->SetDefault("/api/v1/nodes?watch", FakeReply::Blocking());
  h.transport->SetDefault("/api/v1/services?watch", FakeReply::Blocking());
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(cache.WaitSynced(10s));
  ASSERT_TRUE(Eventually([&] { return h.transport->OpenStreams() == 3; }));
  auto stopped = std::async(std::launch::async, [&] { cache.Stop(); });
  ASSERT_EQ(stopped.wait_for(30s), std::future_status::ready) << "Stop() hung";
  EXPECT_EQ(h.transport->OpenStreams(), 0);
  EXPECT_FALSE(cache.WaitSynced(10s));  // stopped
}

TEST(ObjectCache, ListOnlyModeMakesNoWatch) {
  Harness h(/*all_kinds=*/true);
  h.options.keep_watching = false;
  h.transport->SetDefault("/api/v1/", FakeReply::Json(ListJson({}, "1")));
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(cache.WaitSynced(10s));
  cache.Stop();
  EXPECT_EQ(h.transport->CountRequests("/api/v1/"), 3u);
  EXPECT_EQ(h.client->counters().Total("watch", "pods"), 0u);
}

TEST(ObjectCache, StopCallsTheStreamCanceller) {
  int cancels = 0;  // outlives the harness: its cache calls the canceller again when destroyed
  Harness h;
  h.transport->SetDefault("/api/v1/pods?limit", FakeReply::Json(ListJson({}, "1")));
  h.transport->SetDefault("/api/v1/pods?watch", FakeReply::Blocking());
  h.options.cancel_streams = [&] {
    ++cancels;
    h.transport->EndStreams();
  };
  ObjectCache& cache = h.Start();
  ASSERT_TRUE(cache.WaitSynced(10s));
  ASSERT_TRUE(Eventually([&] { return h.transport->OpenStreams() == 1; }));
  cache.Stop();
  EXPECT_EQ(cancels, 1);
  EXPECT_EQ(h.transport->OpenStreams(), 0);
  EXPECT_EQ(h.Lists(), 1u);
}

TEST(ObjectCache, StopIsPromptDuringABackoffOnTheRealClock) {
  auto transport = std::make_shared<FakeTransport>();
  ApiClientOptions o;  // the real clock
  o.max_attempts = 1;
  auto client = std::make_shared<ApiClient>(transport, o);
  ObjectCacheOptions co;
  co.nodes = co.services = false;
  co.watch.backoff.initial = std::chrono::hours(1);
  co.watch.backoff.max = std::chrono::hours(1);
  transport->SetDefault("/api/v1/pods", FakeReply::Json("{}", 500));
  ObjectCache cache(client, co);
  cache.Start();
  ASSERT_TRUE(Eventually([&] { return transport->CountRequests("/api/v1/pods") == 1; }));
  auto stopped = std::async(std::launch::async, [&] { cache.Stop(); });
  ASSERT_EQ(stopped.wait_for(30s), std::future_status::ready) << "Stop() waited out the backoff";
  EXPECT_EQ(transport->CountRequests("/api/v1/pods"), 1u);
}

}  // namespace
}  // namespace gpuattr::kube
