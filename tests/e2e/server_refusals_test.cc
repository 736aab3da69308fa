// Every way the server turns a client away is counted under its reason (http/refusals.h), so that
// an attack on the endpoint shows in gpuattr_http_refused_total (docs/security.md#serving). Each
// test provokes one reason with raw sockets on 127.0.0.1 and checks that exactly that counter
// moved, by exactly as much as the test refused.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpuattr/http/basic_auth.h"
#include "gpuattr/http/refusals.h"
#include "gpuattr/http/server.h"
#include "gpuattr/metrics/families.h"
#include "gpuattr/metrics/store.h"
#include "support/raw_client.h"
#include "support/test_certs.h"

namespace gpuattr::testing {
namespace {

using namespace std::chrono_literals;
using http::MetricsServer;
using http::Refusal;
using http::RefusalCounters;
using http::ServerOptions;

// A published snapshot with ~2 MB of exposition: more than the kernel's buffers hold between the
// server and a client that does not read.
std::shared_ptr<metrics::SnapshotStore> Store() {
  auto store = std::make_shared<metrics::SnapshotStore>();
  auto s = std::make_shared<model::Snapshot>();
  s->complete = true;
  model::ClusterSnapshot c;
  c.cluster = "lab";
  c.latest.up = true;
  c.cycles = 1;
  for (int i = 0; i < 20000; ++i)
    c.latest.apiserver_requests[{"get", "pods/proxy", std::to_string(100000 + i)}] =
        static_cast<uint64_t>(i);
  s->clusters.push_back(std::move(c));
  store->Publish(std::move(s));
  return store;
}

class Refusals : public ::testing::Test {
 protected:
  void Start(ServerOptions opt) {
    opt.host = "127.0.0.1";
    opt.port = 0;
    opt.refusals = counters_;
    auto s = MetricsServer::Start(opt, Store());
    ASSERT_TRUE(s.ok()) << s.error().message;
    server_ = std::move(*s);
  }
  int port() const { return server_->port(); }
  // Every counter but `only` is still 0, and `only` is `n`.
  void ExpectOnly(Refusal only, uint64_t n) {
    for (size_t i = 0; i < static_cast<size_t>(Refusal::kCount); ++i) {
      const auto r = static_cast<Refusal>(i);
      EXPECT_EQ(counters_->Get(r), r == only ? n : 0) << http::RefusalName(r);
    }
  }
  // The loop thread counts after it wrote the answer the client already read; give it a moment.
  void WaitFor(Refusal r, uint64_t n) {
    for (int i = 0; i < 200 && counters_->Get(r) < n; ++i) std::this_thread::sleep_for(10ms);
  }

  std::shared_ptr<RefusalCounters> counters_ = std::make_shared<RefusalCounters>();
  std::unique_ptr<MetricsServer> server_;
};

TEST_F(Refusals, MalformedAndRefusedHeadsAreBadRequests) {
  Start({});
  Raw garbage(port());
  ASSERT_TRUE(garbage.Send("NONSENSE\r\n\r\n"));
  EXPECT_EQ(StatusOf(garbage.ReadUntilClosed(3s)), 400);
  Raw post(port());
  ASSERT_TRUE(post.Send("POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  EXPECT_EQ(StatusOf(post.ReadUntilClosed(3s)), 405);
  Raw big(port());
  ASSERT_TRUE(big.Send(Get("/metrics", "X-Big: " + std::string(17 * 1024, 'v') + "\r\n")));
  EXPECT_EQ(StatusOf(big.ReadUntilClosed(3s)), 431);
  // A good request and a 404 are not refusals.
  Raw good(port());
  ASSERT_TRUE(good.Send(Get("/metrics") + Get("/nope")));
  EXPECT_EQ(StatusOf(good.ReadResponse()), 200);
  EXPECT_EQ(StatusOf(good.ReadResponse()), 404);
  WaitFor(Refusal::kBadRequest, 3);
  ExpectOnly(Refusal::kBadRequest, 3);
}

TEST_F(Refusals, AHeadThatNeverEndsIsAHeadTimeout) {
  ServerOptions opt;
  opt.limits.header_timeout = 300ms;
  Start(opt);
  Raw stalled(port());
  ASSERT_TRUE(stalled.Send("GET /metrics HTTP/1.1\r\n"));
  EXPECT_EQ(StatusOf(stalled.ReadUntilClosed(3s)), 408);
  // An idle keep-alive connection that sent nothing is closed quietly: no refusal.
  Raw idle(port());
  ASSERT_TRUE(idle.connected());
  EXPECT_EQ(idle.ReadUntilClosed(3s), "");
  WaitFor(Refusal::kHeadTimeout, 1);
  ExpectOnly(Refusal::kHeadTimeout, 1);
}

TEST_F(Refusals, WrongPasswordsAreUnauthorized) {
  auto hash = http::BcryptHash("right", 4);  // the cheapest cost: this test is not about bcrypt
  ASSERT_TRUE(hash.ok());
  ServerOptions opt;
  opt.users = {{"prometheus", *hash}};
  Start(opt);
  Raw none(port());
  ASSERT_TRUE(none.Send(Get("/metrics")));
  EXPECT_EQ(StatusOf(none.ReadResponse()), 401);
  Raw wrong(port());
  ASSERT_TRUE(wrong.Send(Get("/metrics", "Authorization: Basic cHJvbWV0aGV1czp3cm9uZw==\r\n")));
  EXPECT_EQ(StatusOf(wrong.ReadResponse()), 401);  // prometheus:wrong, checked by bcrypt
  Raw right(port());
  ASSERT_TRUE(right.Send(Get("/metrics", "Authorization: Basic cHJvbWV0aGV1czpyaWdodA==\r\n")));
  EXPECT_EQ(StatusOf(right.ReadResponse()), 200);
  WaitFor(Refusal::kUnauthorized, 2);
  ExpectOnly(Refusal::kUnauthorized, 2);
}

TEST_F(Refusals, ConnectionsBeyondTheSlotsAreCountedByWhatHappenedToThem) {
  ServerOptions opt;
  opt.limits.max_connections = 2;
  opt.limits.health_connections = 1;
  opt.limits.max_connections_per_peer = 2;
  Start(opt);
  // Two clients from one address take both ordinary slots and never send a head.
  Raw a(port(), "127.0.0.2");
  ASSERT_TRUE(a.connected());
  std::this_thread::sleep_for(50ms);  // a is older than b
  Raw b(port(), "127.0.0.2");
  ASSERT_TRUE(b.connected());
  // The same address a third time: over its per-peer cap, closed at accept.
  Raw over_cap(port(), "127.0.0.2");
  EXPECT_EQ(over_cap.ReadUntilClosed(3s), "");
  WaitFor(Refusal::kPerPeerLimit, 1);
  ExpectOnly(Refusal::kPerPeerLimit, 1);
  {
    // Another address gets the health slot, where only the probes are answered.
    Raw other(port(), "127.0.0.3");
    ASSERT_TRUE(other.Send(Get("/metrics")));
    EXPECT_EQ(StatusOf(other.ReadResponse()), 503);
    WaitFor(Refusal::kHealthSlotOnly, 1);
  }  // closed: its slot is free once the server sees it go
  std::this_thread::sleep_for(100ms);
  // Every slot taken (a, b, and an idle client in the health slot): a new connection closes the
  // one that waited longest for its head, a, and is let in.
  Raw idle(port(), "127.0.0.4");
  ASSERT_TRUE(idle.connected());
  std::this_thread::sleep_for(100ms);
  Raw probe(port(), "127.0.0.5");
  ASSERT_TRUE(probe.Send(Get("/healthz")));
  EXPECT_EQ(StatusOf(probe.ReadResponse()), 200);
  EXPECT_EQ(a.ReadUntilClosed(3s), "");
  WaitFor(Refusal::kEvicted, 1);
  EXPECT_EQ(counters_->Get(Refusal::kPerPeerLimit), 1u);
  EXPECT_EQ(counters_->Get(Refusal::kHealthSlotOnly), 1u);
  EXPECT_EQ(counters_->Get(Refusal::kEvicted), 1u);
  EXPECT_EQ(counters_->Get(Refusal::kBadRequest), 0u);
  EXPECT_EQ(counters_->Get(Refusal::kHeadTimeout), 0u);
}

TEST_F(Refusals, AReaderSlowerThanTheMinimumRateIsCut) {
  ServerOptions opt;
  opt.limits.min_send_rate = 1024 * 1024;  // the kernel takes ~0.5 MB at once: cut within ~1 s
  opt.limits.send_grace = 200ms;
  Start(opt);
  Raw slow(port(), "", 4096);  // a small receive buffer that it never drains
  ASSERT_TRUE(slow.Send(Get("/metrics")));
  WaitFor(Refusal::kSlowReader, 1);
  ExpectOnly(Refusal::kSlowReader, 1);
}

TEST_F(Refusals, PlainHttpOnTheTlsPortIsAFailedHandshake) {
  const auto dir = std::filesystem::temp_directory_path() / "gpuattr-refusals-tls";
  const PkiFiles files = WritePki(MakeTestPki(), dir);
  ServerOptions opt;
  opt.tls = http::TlsOptions();
  opt.tls->cert_file = files.server_crt.string();
  opt.tls->key_file = files.server_key.string();
  Start(opt);
  Raw plain(port());
  ASSERT_TRUE(plain.Send(Get("/metrics")));
  plain.ReadUntilClosed(3s);
  WaitFor(Refusal::kTlsHandshake, 1);
  ExpectOnly(Refusal::kTlsHandshake, 1);
  server_.reset();
  std::filesystem::remove_all(dir);
}

// The counters reach /metrics through the snapshot, one series per reason from the start.
TEST(RefusalFamily, EveryReasonIsPublishedWithItsCount) {
  RefusalCounters counters;
  counters.Add(Refusal::kEvicted);
  counters.Add(Refusal::kEvicted);
  model::Snapshot s;
  s.complete = true;
  for (const auto& [reason, count] : counters.Counts()) s.http_refusals.emplace_back(reason, count);
  const std::string text = metrics::RenderText(s);
  EXPECT_NE(text.find("# TYPE gpuattr_http_refused_total counter"), std::string::npos);
  EXPECT_NE(text.find("gpuattr_http_refused_total{reason=\"evicted\"} 2\n"), std::string::npos)
      << text;
  for (size_t i = 0; i < static_cast<size_t>(Refusal::kCount); ++i) {
    const std::string reason(http::RefusalName(static_cast<Refusal>(i)));
    EXPECT_NE(text.find("gpuattr_http_refused_total{reason=\"" + reason + "\"}"), std::string::npos)
        << reason;
  }
}

}  // namespace
}  // namespace gpuattr::testing
