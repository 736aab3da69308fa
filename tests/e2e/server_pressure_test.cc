// The server under the load of issue 25's review, in this process (which runs it): the pages of a
// 300-node cluster asked for by 128 clients that never read them, 300 slowloris connections with
// 100 slow readers, and 120 connections guessing passwords. Each time the probes and the
// legitimate scraper must still be answered promptly, and memory must stay bounded
// (docs/security.md#serving). Clients come from several 127.x addresses: each is a peer to the
// server, as pods and nodes are.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpuattr/http/basic_auth.h"
#include "gpuattr/http/server.h"
#include "gpuattr/metrics/store.h"
#include "support/generated_cluster.h"
#include "support/raw_client.h"
#include "support/session_harness.h"

namespace gpuattr::testing {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;
using http::MetricsServer;
using http::ServerLimits;
using http::ServerOptions;

constexpr char kProbe[] = "127.0.0.1";  // the kubelet's address in these tests

// A snapshot of a generated 300-node cluster (2,400 GPU pods), as the daemon publishes it.
std::shared_ptr<metrics::SnapshotStore> ThreeHundredNodes() {
  GeneratedClusterSpec spec;
  spec.nodes = 300;
  SessionHarness h;
  EXPECT_TRUE(h.Start(GenerateCluster(spec)));
  auto cycle = h.Cycle();
  EXPECT_TRUE(cycle->up);
  auto snapshot = std::make_shared<model::Snapshot>();
  snapshot->complete = true;
  model::ClusterSnapshot c;
  c.cluster = "lab";
  c.latest = cycle->result;
  c.cycles = 1;
  c.last_success_unix_seconds = c.last_attempt_unix_seconds = 1.7e9;
  snapshot->clusters.push_back(std::move(c));
  auto store = std::make_shared<metrics::SnapshotStore>();
  store->Publish(std::move(snapshot));
  return store;
}

// Milliseconds /healthz took from a fresh connection from kProbe, or 99,999 when it failed.
double HealthzMs(int port, const std::string& extra = "") {
  const auto start = SteadyClock::now();
  Raw probe(port, kProbe);
  if (!probe.connected() || !probe.Send(Get("/healthz", extra))) return 99'999;
  if (StatusOf(probe.ReadResponse(3s)) != 200) return 99'999;
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();
}

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
}

// `count` connections from 127.0.0.<first>, <first + 1>, ... (`per_address` each).
std::vector<std::unique_ptr<Raw>> Connect(int port, int count, int first, int per_address,
                                          int receive_buffer = 0) {
  std::vector<std::unique_ptr<Raw>> out;
  for (int i = 0; i < count; ++i) {
    out.push_back(std::make_unique<Raw>(port, "127.0.0." + std::to_string(first + i / per_address),
                                        receive_buffer));
    EXPECT_TRUE(out.back()->connected()) << i;
  }
  return out;
}

TEST(ServerPressure, NonReadingClientsOfTheSnapshotShareOneCopyAndTheProbesGetIn) {
  auto store = ThreeHundredNodes();
  ServerOptions opt;
  opt.port = 0;
  auto server = MetricsServer::Start(opt, store);
  ASSERT_TRUE(server.ok()) << server.error().message;
  const int port = (*server)->port();

  // Warm up: every page once, read whole; then the baseline.
  size_t json_bytes = 0;
  for (const char* path : {"/snapshot.json", "/", "/snapshot.md"}) {
    Raw warm(port, kProbe);
    ASSERT_TRUE(warm.Send(Get(path)));
    std::string r = warm.ReadResponse(30s);
    ASSERT_EQ(StatusOf(r), 200) << path;
    if (std::string(path) == "/snapshot.json") json_bytes = BodyOf(r).size();
  }
  const size_t before = RssBytes();

  // 128 clients from two addresses ask for the snapshot and never read a byte: they take every
  // ordinary slot.
  auto silent = Connect(port, 128, 2, 64);
  for (auto& c : silent) ASSERT_TRUE(c->Send(Get("/snapshot.json")));
  std::vector<double> took;
  for (int i = 0; i < 30; ++i) {
    took.push_back(HealthzMs(port));
    std::this_thread::sleep_for(100ms);
  }
  const size_t after = RssBytes();
  const double grown = (static_cast<double>(after) - static_cast<double>(before)) / kMiB;
  std::cout << "[ pressure ] /snapshot.json " << json_bytes / 1024
            << " KiB; 128 non-readers: VmRSS " << before / kMiB << " -> " << after / kMiB
            << " MiB (" << grown << " MiB); /healthz max " << Percentile(took, 1.0) << " ms\n";
  EXPECT_GT(json_bytes, 1u * kMiB) << "a 300-node snapshot is a body worth multiplying";
  EXPECT_LT(grown, 20.0);
  EXPECT_LT(Percentile(took, 1.0), 1000.0);

  // The health slots answer nothing but the probes.
  Raw other(port, kProbe);
  ASSERT_TRUE(other.Send(Get("/metrics")));
  EXPECT_EQ(StatusOf(other.ReadResponse(3s)), 503);
}

TEST(ServerPressure, SlowlorisAndSlowReadersDoNotDelayTheProbes) {
  auto store = std::make_shared<metrics::SnapshotStore>();
  {
    auto s = std::make_shared<model::Snapshot>();
    s->complete = true;
    model::ClusterSnapshot c;
    c.cluster = "lab";
    c.latest.up = true;
    for (int i = 0; i < 100000; ++i)  // ~10 MB of exposition: more than any socket buffer
      c.latest.apiserver_requests[{"get", "pods/proxy", std::to_string(100000 + i)}] =
          static_cast<uint64_t>(i);
    s->clusters.push_back(std::move(c));
    store->Publish(std::move(s));
  }
  ServerOptions opt;
  opt.port = 0;
  ServerLimits& limits = opt.limits;
  limits.header_timeout = 4s;
  limits.send_grace = 2s;  // shorter than the default 10 s so that the test sees the cut
  auto server = MetricsServer::Start(opt, store);
  ASSERT_TRUE(server.ok()) << server.error().message;
  const int port = (*server)->port();

  // 100 slow readers of /metrics (from 127.0.0.10-11) that take 1 KiB now and then, and 300
  // slowloris connections (127.0.0.20-24) that trickle a header line byte by byte.
  auto readers = Connect(port, 100, 10, 50, 16 * 1024);
  for (auto& r : readers) ASSERT_TRUE(r->Send(Get("/metrics")));
  // Their responses have started before the flood (else a reader still waiting for the server to
  // read its request is a connection waiting for its head, which a full house pushes out).
  for (auto& r : readers)
    for (int i = 0; i < 100 && r->ReadSome(1024) && r->buffered() == 0; ++i)
      std::this_thread::sleep_for(50ms);
  auto loris = Connect(port, 300, 20, 60);
  for (auto& l : loris) l->Send("GET /metrics HTTP/1.1\r\nX-a: ");
  std::vector<double> took;
  size_t readers_cut = 0;
  for (int round = 0; round < 60; ++round) {
    for (auto& l : loris) l->Send("a");
    for (auto& r : readers) r->ReadSome(1024);
    took.push_back(HealthzMs(port));
    std::this_thread::sleep_for(100ms);
  }
  // Then they stop reading for 4 s: by then the server has given up on them. What they read
  // afterwards ends early, at the close.
  std::this_thread::sleep_for(4s);
  for (auto& r : readers) {
    std::string got = r->ReadUntilClosed(5s, 64 * kMiB);
    const size_t head_end = got.find("\r\n\r\n");
    const size_t length_at = got.find("Content-Length: ");
    ASSERT_NE(head_end, std::string::npos);
    ASSERT_LT(length_at, head_end);
    const size_t whole = head_end + 4 + std::stoull(got.substr(length_at + 16));
    readers_cut += got.size() < whole;
  }
  const double p99 = Percentile(took, 0.99);
  std::cout << "[ pressure ] 300 slowloris + 100 slow readers: /healthz p50 "
            << Percentile(took, 0.5) << " ms, p99 " << p99 << " ms, max " << Percentile(took, 1.0)
            << " ms; slow readers cut " << readers_cut << "/100\n";
  EXPECT_LT(p99, 1000.0);
  // Reading 1 KiB per 100 ms is 10 KiB/s, far below the minimum rate: after the grace and the
  // kernel's buffers, the server let go of them.
  EXPECT_EQ(readers_cut, 100u);
}

TEST(ServerPressure, WrongPasswordsDoNotDelayARememberedLogin) {
  auto store = std::make_shared<metrics::SnapshotStore>();
  {
    auto s = std::make_shared<model::Snapshot>();
    s->complete = true;
    store->Publish(std::move(s));
  }
  auto hash = http::BcryptHash("right", 10);  // the usual cost: ~0.1 s per check
  ASSERT_TRUE(hash.ok());
  ServerOptions opt;
  opt.port = 0;
  opt.users = {{"prometheus", *hash}};
  auto server = MetricsServer::Start(opt, store);
  ASSERT_TRUE(server.ok()) << server.error().message;
  const int port = (*server)->port();
  const std::string right =
      "Authorization: Basic cHJvbWV0aGV1czpyaWdodA==\r\n";  // prometheus:right
  const std::string wrong =
      "Authorization: Basic cHJvbWV0aGV1czp3cm9uZw==\r\n";  // prometheus:wrong

  auto scrape = [&](const std::string& auth) {
    const auto start = SteadyClock::now();
    Raw c(port, kProbe);
    c.Send(Get("/metrics", auth));
    const int status = StatusOf(c.ReadResponse(10s));
    return std::make_pair(status,
                          std::chrono::duration<double, std::milli>(SteadyClock::now() - start));
  };
  ASSERT_EQ(scrape(right).first, 200);  // pays bcrypt once; remembered from now on

  // 120 connections from 127.0.0.30-31 guess passwords: 120 bcrypt checks, ~12 s of work.
  auto guessers = Connect(port, 120, 30, 60);
  for (auto& g : guessers) ASSERT_TRUE(g->Send(Get("/metrics", wrong)));
  std::this_thread::sleep_for(200ms);  // the guesses are queued and bcrypt is busy
  std::vector<double> took;
  for (int i = 0; i < 10; ++i) {
    auto [status, ms] = scrape(right);
    EXPECT_EQ(status, 200);
    took.push_back(ms.count());
  }
  EXPECT_LT(HealthzMs(port, right), 100.0);
  size_t unauthorized = 0, busy = 0;
  for (auto& g : guessers) {
    const int status = StatusOf(g->ReadResponse(30s));
    unauthorized += status == 401;
    busy += status == 503;
  }
  std::cout << "[ pressure ] 120 wrong passwords: remembered login max " << Percentile(took, 1.0)
            << " ms; guesses answered 401: " << unauthorized << ", 503 (queue full): " << busy
            << "\n";
  EXPECT_LT(Percentile(took, 1.0), 100.0);
  EXPECT_EQ(unauthorized + busy, 120u) << "every guess is answered";
  EXPECT_GT(busy, 0u) << "at most 64 logins wait for bcrypt";
}

}  // namespace
}  // namespace gpuattr::testing
