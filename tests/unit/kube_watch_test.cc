#include "gpuattr/kube/watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "gpuattr/kube/object_cache.h"
#include "support/fake_clock.h"
#include "support/fake_transport.h"

namespace gpuattr::kube {
namespace {

using testing::FakeReply;
using testing::FakeTransport;
using ::testing::HasSubstr;

std::vector<std::string> Decode(const std::vector<std::string>& chunks, Status* error = nullptr) {
  WatchStreamDecoder d;
  std::vector<std::string> out;
  auto on = [&](const WatchEvent& ev) {
    static const char* kNames[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};
    std::string name(ev.object.Find("metadata").Find("name").str());
    out.push_back(std::string(kNames[static_cast<int>(ev.type)]) + ":" + name);
    return true;
  };
  for (const auto& c : chunks) {
    if (!d.Feed(c, on)) break;
  }
  if (d.error().ok()) (void)d.Finish(on);
  if (error != nullptr) *error = d.error();
  return out;
}

TEST(WatchStreamDecoder, EventsSplitAcrossChunksAndSeveralPerChunk) {
  std::string a = R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})";
  std::string b = R"({"type":"MODIFIED","object":{"metadata":{"name":"b"}}})";
  std::string c = R"({"type":"DELETED","object":{"metadata":{"name":"c"}}})";
  std::string all = a + "\n" + b + "\n" + c + "\n";
  std::vector<std::string> want = {"ADDED:a", "MODIFIED:b", "DELETED:c"};
  EXPECT_EQ(Decode({all}), want);
  // Every possible split into two chunks, and byte by byte.
  for (size_t i = 0; i <= all.size(); ++i) {
    EXPECT_EQ(Decode({all.substr(0, i), all.substr(i)}), want) << "split at " << i;
  }
  std::vector<std::string> bytes;
  for (char ch : all) bytes.emplace_back(1, ch);
  EXPECT_EQ(Decode(bytes), want);
}

TEST(WatchStreamDecoder, LastLineWithoutNewlineBookmarksAndCrlf) {
  EXPECT_EQ(Decode({"\r\n",
                    R"({"type":"BOOKMARK","object":{"metadata":{"name":"","resourceVersion":"9"}}})"
                    "\r\n",
                    R"({"type":"ADDED","object":{"metadata":{"name":"x"}}})"}),
            (std::vector<std::string>{"BOOKMARK:", "ADDED:x"}));
}

TEST(WatchStreamDecoder, BareStatusIsAnErrorEventAndUnknownTypesAreSkipped) {
  EXPECT_EQ(Decode({R"({"kind":"Status","code":410})"
                    "\n",
                    R"({"type":"SOMETHING_NEW","object":{}})"
                    "\n"}),
            (std::vector<std::string>{"ERROR:"}));
}

TEST(WatchStreamDecoder, MalformedLinesAreErrors) {
  Status err;
  EXPECT_TRUE(Decode({"{not json}\n"}, &err).empty());
  EXPECT_FALSE(err.ok());
  EXPECT_THAT(err.message(), HasSubstr("malformed watch event"));
  Decode({"[1,2]\n"}, &err);
  EXPECT_FALSE(err.ok());
  Decode({R"({"object":{}})"
          "\n"},
         &err);
  EXPECT_THAT(err.message(), HasSubstr("without \"type\""));

  WatchStreamDecoder small(16);
  EXPECT_FALSE(small.Feed(std::string(40, 'x'), [](const WatchEvent&) { return true; }));
  EXPECT_EQ(small.error().code(), ErrorCode::kResourceExhausted);
}

TEST(ListWatcher, Paths) {
  EXPECT_EQ(ListWatcher::ListPath("/api/v1/pods", 500, ""), "/api/v1/pods?limit=500");
  EXPECT_EQ(ListWatcher::ListPath("/api/v1/pods", 500, "eyJ2Ijo=+/x"),
            "/api/v1/pods?limit=500&continue=eyJ2Ijo%3D%2B%2Fx");
  EXPECT_EQ(
      ListWatcher::WatchPath("/api/v1/nodes", "123", std::chrono::seconds(300)),
      "/api/v1/nodes?watch=1&allowWatchBookmarks=true&resourceVersion=123&timeoutSeconds=300");
}

// Records what the watcher delivers.
class RecordingTarget : public WatchTarget {
 public:
  void BeginList() override {
    std::lock_guard<std::mutex> lock(mu);
    log.push_back("begin");
  }
  Status AddListed(JsonValue o) override {
    std::lock_guard<std::mutex> lock(mu);
    log.push_back("item:" + std::string(o.Find("metadata").Find("name").str()));
    return Status::Ok();
  }
  void EndList(bool complete) override {
    std::lock_guard<std::mutex> lock(mu);
    log.push_back(complete ? "end" : "abort");
  }
  Status Apply(WatchEventType t, JsonValue o) override {
    std::lock_guard<std::mutex> lock(mu);
    log.push_back((t == WatchEventType::kDeleted ? "del:" : "set:") +
                  std::string(o.Find("metadata").Find("name").str()));
    return Status::Ok();
  }
  std::vector<std::string> Log() {
    std::lock_guard<std::mutex> lock(mu);
    return log;
  }
  std::mutex mu;
  std::vector<std::string> log;
};

bool Eventually(const std::function<bool()>& pred) {
  for (int i = 0; i < 10000; ++i) {  // up to ~10 s
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return pred();
}

TEST(ListWatcher, ListsThenWatchesFromTheListResourceVersion) {
  auto transport = std::make_shared<FakeTransport>();
  FakeClock clock;
  ApiClientOptions o;
  o.clock = &clock;
  ApiClient client(transport, o);
  transport->Enqueue("/api/v1/nodes?limit", FakeReply::Json(R"({"metadata":{"resourceVersion":"41"},
                                         "items":[{"metadata":{"name":"n1"}}]})"));
  transport->Enqueue(
      "/api/v1/nodes?watch",
      FakeReply::Chunks(
          {R"({"type":"ADDED","object":{"metadata":{"name":"n2","resourceVersion":"42"}}})"
           "\n"},
          /*block=*/true));
  RecordingTarget target;
  ListWatcher w(client, {"nodes", "/api/v1/nodes"}, target);
  StopSignal stop;
  std::thread t([&] { w.Run(stop); });
  ASSERT_TRUE(Eventually([&] { return target.Log().size() == 4; }));
  stop.Stop();
  t.join();
  EXPECT_EQ(target.Log(), (std::vector<std::string>{"begin", "item:n1", "end", "set:n2"}));
  auto reqs = transport->Requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_THAT(reqs[1].path, HasSubstr("resourceVersion=41"));
  EXPECT_THAT(reqs[1].path, HasSubstr("allowWatchBookmarks=true"));
  WatchStatus s = w.status();
  EXPECT_TRUE(s.synced);
  EXPECT_EQ(s.resource_version, "42");
  EXPECT_EQ(s.lists, 1u);
  EXPECT_EQ(s.watches, 1u);
}

TEST(ListWatcher, AbortsAFailedListAndReportsTheError) {
  auto transport = std::make_shared<FakeTransport>("prod");
  FakeClock clock;
  ApiClientOptions o;
  o.clock = &clock;
  o.max_attempts = 1;
  ApiClient client(transport, o);
  transport->Enqueue("/api/v1/nodes?limit=500", FakeReply::Json(R"({"metadata":{"continue":"t"},
                                                                   "items":[{"metadata":{"name":"a"}}]})"));
  transport->Enqueue("/api/v1/nodes?limit=500&continue=t", FakeReply::Json("{}", 403));
  transport->SetDefault("/api/v1/nodes?limit=500", FakeReply::Json(R"({"items":[]})"));
  transport->SetDefault("/api/v1/nodes?watch", FakeReply::Blocking());
  RecordingTarget target;
  ListWatcher w(client, {"nodes", "/api/v1/nodes"}, target);
  StopSignal stop;
  std::thread t([&] { w.Run(stop); });
  ASSERT_TRUE(Eventually([&] { return w.status().synced; }));
  stop.Stop();
  t.join();
  EXPECT_EQ(target.Log(), (std::vector<std::string>{"begin", "item:a", "abort", "begin", "end"}));
  EXPECT_EQ(w.status().lists, 2u);
  EXPECT_EQ(clock.Sleeps().size(), 1u);  // one backoff between the two LISTs
}

// A LIST answer that is not a list aborts the LIST with an error that says why; the next LIST
// starts afresh after the backoff.
TEST(ListWatcher, AMalformedListPageAbortsTheListAndSaysWhy) {
  auto transport = std::make_shared<FakeTransport>("prod");
  FakeClock clock;
  clock.SetBlockingSleeps(true);
  ApiClientOptions o;
  o.clock = &clock;
  o.max_attempts = 1;
  ApiClient client(transport, o);
  transport->Enqueue("/api/v1/nodes?limit", FakeReply::Json("[1]"));
  transport->Enqueue("/api/v1/nodes?limit", FakeReply::Json(R"({"items":{}})"));
  transport->SetDefault("/api/v1/nodes?limit", FakeReply::Json(R"({"items":[
                                                  {"metadata":{"name":"a"}}]})"));
  transport->SetDefault("/api/v1/nodes?watch", FakeReply::Blocking());
  RecordingTarget target;
  ListWatcher w(client, {"nodes", "/api/v1/nodes"}, target);
  StopSignal stop;
  std::thread t([&] { w.Run(stop); });
  const std::string prefix = "list nodes on cluster \"prod\": malformed response: ";
  for (const std::string why : {"not a JSON object", "\"items\" is not an array"}) {
    // The backoff after this LIST holds the watcher still (the last one may still be waking).
    ASSERT_TRUE(Eventually([&] {
      return clock.BlockedSleepers() == 1 && w.status().last_error == prefix + why;
    })) << w.status().last_error;
    EXPECT_EQ(w.status().last_error_code, ErrorCode::kInvalidArgument);
    clock.Advance(std::chrono::minutes(10));
  }
  ASSERT_TRUE(Eventually([&] { return w.status().synced; }));
  stop.Stop();
  t.join();
  EXPECT_EQ(target.Log(), (std::vector<std::string>{"begin", "abort", "begin", "abort", "begin",
                                                    "item:a", "end"}));
  EXPECT_EQ(w.status().lists, 3u);
}

// gpuattr_cluster_up's sync rule reads when the kind was last connected: a LIST, a stream that
// opened (its 2xx arrived) and stays open, a stream that ended; failed attempts move nothing.
TEST(ListWatcher, ReportsWhetherItsWatchIsConnectedAndSinceWhen) {
  auto transport = std::make_shared<FakeTransport>();
  FakeClock clock;
  ApiClientOptions o;
  o.clock = &clock;
  o.max_attempts = 1;
  ApiClient client(transport, o);
  transport->Enqueue("/api/v1/nodes?limit", FakeReply::Json(R"({"metadata":{"resourceVersion":"1"},
                                                               "items":[]})"));
  transport->Enqueue("/api/v1/nodes?watch", FakeReply::Chunks({}, /*block=*/true));
  // Then the apiserver is gone: every further WATCH fails.
  transport->SetDefault("/api/v1/nodes?watch", FakeReply::Json(R"({"kind":"Status"})", 503));
  RecordingTarget target;
  ListWatcher w(client, {"nodes", "/api/v1/nodes"}, target);
  const double listed_at = UnixSeconds(clock.WallNow());
  StopSignal stop;
  std::thread t([&] { w.Run(stop); });
  ASSERT_TRUE(Eventually([&] { return w.status().streaming; }));
  EXPECT_EQ(w.status().last_connected_unix, listed_at);
  EXPECT_TRUE(w.status().last_error.empty());

  clock.SetBlockingSleeps(true);  // backoff waits until the test moves the clock
  clock.Advance(std::chrono::seconds(30));
  transport->EndStreams();  // the stream ends (the apiserver went away)
  ASSERT_TRUE(Eventually([&] { return clock.BlockedSleepers() == 1; }));
  WatchStatus ended = w.status();
  EXPECT_FALSE(ended.streaming);
  EXPECT_EQ(ended.last_connected_unix, listed_at + 30);  // when the stream ended
  clock.Advance(std::chrono::seconds(60));  // the backoff ends: the re-watch gets a 503
  ASSERT_TRUE(Eventually([&] { return !w.status().last_error.empty(); }));
  EXPECT_FALSE(w.status().streaming);
  EXPECT_EQ(w.status().last_connected_unix, listed_at + 30);  // failures do not move it
  stop.Stop();
  t.join();
}

TEST(KindsOutOfSync, ListedAndConnectedWithinTheWindow) {
  auto kind = [](std::string r, bool synced, bool streaming, double connected) {
    KindStatus k;
    k.resource = std::move(r);
    k.synced = synced;
    k.streaming = streaming;
    k.last_connected_unix = connected;
    return k;
  };
  const double now = 10000;
  EXPECT_TRUE(KindsOutOfSync({kind("pods", true, true, 1), kind("nodes", true, false, now - 40)},
                             now, 40, "lab")
                  .empty());  // a stream open now; a stream that ended 40 s ago: both fine
  KindStatus failing = kind("services", true, false, now - 41);
  failing.last_error = "apiserver error: cluster \"lab\" answered HTTP 503";
  auto out = KindsOutOfSync({kind("pods", true, true, 1), failing, kind("nodes", false, false, 0)},
                            now, 40, "lab");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0],
            "services on cluster \"lab\": out of sync, no watch connected for 41 s (more than 40 "
            "s) (last error: apiserver error: cluster \"lab\" answered HTTP 503)");
  EXPECT_EQ(out[1], "nodes on cluster \"lab\": not listed yet");
}

}  // namespace
}  // namespace gpuattr::kube
