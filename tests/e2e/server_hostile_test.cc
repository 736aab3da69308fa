// The HTTP server tried as a hostile local client would (docs/design.md#http-server; issue 15): raw
// sockets on 127.0.0.1 against the real MetricsServer, with the memory of this process (which runs
// the server) measured around every attack.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpuattr/http/server.h"
#include "gpuattr/metrics/families.h"
#include "support/raw_client.h"

namespace gpuattr::http {
namespace {

using metrics::RenderText;
using metrics::SnapshotStore;
using testing::BodyOf;
using testing::Get;
using testing::kMiB;
using testing::Raw;
using testing::RssBytes;
using testing::StatusOf;

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

constexpr size_t kRssBudget = 20 * kMiB;  // the acceptance bound for every attack

std::shared_ptr<SnapshotStore> Store() {
  auto store = std::make_shared<SnapshotStore>();
  auto s = std::make_shared<model::Snapshot>();
  s->complete = true;
  model::ClusterSnapshot c;
  c.cluster = "lab";
  c.latest.up = true;
  c.cycles = 1;
  for (int i = 0; i < 2000; ++i)  // ~200 KB of exposition: a body worth multiplying
    c.latest.apiserver_requests[{"get", "pods/proxy", std::to_string(100000 + i)}] =
        static_cast<uint64_t>(i);
  s->clusters.push_back(std::move(c));
  store->Publish(std::move(s));
  return store;
}

// Sends `prefix`, then `filler` bytes up to `total`, as fast as the server takes them, until the
// server answers or closes; then reads its answer.
struct Flood {
  size_t sent = 0;
  std::string response;
};
Flood SendFlood(int port, std::string_view prefix, char filler, size_t total) {
  Flood f;
  Raw c(port);
  EXPECT_TRUE(c.connected());
  EXPECT_TRUE(c.Send(prefix));
  f.sent = prefix.size();
  const std::string chunk(64 * 1024, filler);
  const auto deadline = SteadyClock::now() + 60s;
  while (f.sent < total && SteadyClock::now() < deadline) {
    pollfd p{c.fd(), POLLIN | POLLOUT, 0};
    if (::poll(&p, 1, 1000) <= 0) continue;
    if (p.revents & (POLLIN | POLLERR | POLLHUP)) break;  // answered, or gone
    ssize_t n = ::send(c.fd(), chunk.data(), std::min(chunk.size(), total - f.sent),
                       MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) break;
    f.sent += static_cast<size_t>(n);
  }
  f.response = c.ReadUntilClosed(5s, 64 * 1024);
  return f;
}

class HostileClient : public ::testing::Test {
 protected:
  void Start(ServerLimits limits = {}) {
    ServerOptions opt;
    opt.host = "127.0.0.1";
    opt.port = 0;
    opt.limits = limits;
    store_ = Store();
    auto s = MetricsServer::Start(opt, store_);
    ASSERT_TRUE(s.ok()) << s.error().message;
    server_ = std::move(*s);
    // Warm up (first response, worker threads, the exposition in memory), then take the
    // baseline that every attack is measured against.
    Raw warm(server_->port());
    ASSERT_TRUE(warm.Send(Get("/metrics")));
    ASSERT_EQ(StatusOf(warm.ReadResponse()), 200);
    rss_before_ = RssBytes();
  }
  void ExpectRssGrowthBelowBudget(const char* attack) {
    const size_t after = RssBytes();
    const double grown_mb =
        (static_cast<double>(after) - static_cast<double>(rss_before_)) / static_cast<double>(kMiB);
    std::cout << "[ rss      ] " << attack << ": VmRSS " << rss_before_ / kMiB << " MiB -> "
              << after / kMiB << " MiB (" << grown_mb << " MiB)\n";
    EXPECT_LT(after, rss_before_ + kRssBudget) << attack;
  }
  int port() const { return server_->port(); }

  std::shared_ptr<SnapshotStore> store_;
  std::unique_ptr<MetricsServer> server_;
  size_t rss_before_ = 0;
};

TEST_F(HostileClient, ManyRangesGetTheWholeBodyOnce) {
  Start();
  std::string ranges = "Range: bytes=0-";
  for (int i = 1; i < 1000; ++i) ranges += ",0-";
  Raw c(port());
  ASSERT_TRUE(c.Send(Get("/metrics", ranges + "\r\n")));
  std::string r = c.ReadResponse();
  EXPECT_EQ(StatusOf(r), 200) << r.substr(0, 200);
  EXPECT_THAT(r, Not(HasSubstr("Content-Range")));
  EXPECT_THAT(r, Not(HasSubstr("multipart")));
  const std::string body = BodyOf(r);
  const std::string rendered = RenderText(*store_->Get());
  EXPECT_EQ(body.substr(0, rendered.size()), rendered);
  EXPECT_LT(body.size(), rendered.size() + 4096);  // once, plus the process_* tail
  ExpectRssGrowthBelowBudget("1000 ranges");
}

TEST_F(HostileClient, AHugePostIsRefusedWithoutReadingIt) {
  Start();
  constexpr size_t kBody = 300 * kMiB;
  Flood f = SendFlood(port(),
                      "POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " +
                          std::to_string(kBody) + "\r\n\r\n",
                      'x', kBody);
  EXPECT_EQ(StatusOf(f.response), 405) << f.response.substr(0, 200);
  EXPECT_THAT(f.response, HasSubstr("Allow: GET, HEAD\r\n"));
  EXPECT_THAT(f.response, HasSubstr("Connection: close\r\n"));
  // The server answered from the head and closed: the socket buffers took what was sent, never
  // the whole body.
  std::cout << "[ flood    ] POST: " << f.sent / kMiB << " MiB sent of 300 MiB\n";
  EXPECT_LT(f.sent, 64 * kMiB);
  ExpectRssGrowthBelowBudget("300 MiB POST");
}

TEST_F(HostileClient, AGetWithABodyIsRefusedUnread) {
  Start();
  constexpr size_t kBody = 300 * kMiB;
  Flood f = SendFlood(port(), Get("/metrics", "Content-Length: " + std::to_string(kBody) + "\r\n"),
                      'x', kBody);
  EXPECT_EQ(StatusOf(f.response), 413) << f.response.substr(0, 200);
  EXPECT_LT(f.sent, 64 * kMiB);
  Raw chunked(port());
  ASSERT_TRUE(chunked.Send(Get("/metrics", "Transfer-Encoding: chunked\r\n") + "5\r\nhello\r\n"));
  EXPECT_EQ(StatusOf(chunked.ReadResponse()), 413);
  ExpectRssGrowthBelowBudget("300 MiB GET body");
}

TEST_F(HostileClient, AnUnterminatedRequestLineIsRefused) {
  ServerLimits limits;
  limits.header_timeout = 1s;
  Start(limits);
  // Longer than the 8 KiB cap, no newline: 414 as soon as the cap is passed.
  Raw longline(port());
  ASSERT_TRUE(longline.Send("GET /" + std::string(9000, 'a')));
  EXPECT_EQ(StatusOf(longline.ReadResponse()), 414);
  // 300 MiB without a newline: refused early, never buffered.
  Flood f = SendFlood(port(), "GET /", 'a', 300 * kMiB);
  EXPECT_EQ(StatusOf(f.response), 414) << f.response.substr(0, 200);
  std::cout << "[ flood    ] request line: " << f.sent / kMiB << " MiB sent of 300 MiB\n";
  EXPECT_LT(f.sent, 64 * kMiB);
  // A short line that never ends: 408 at the header deadline.
  Raw stalled(port());
  ASSERT_TRUE(stalled.Send("GET /metrics HTTP/1.1"));
  const auto start = SteadyClock::now();
  std::string r = stalled.ReadUntilClosed(5s);
  EXPECT_EQ(StatusOf(r), 408) << r;
  EXPECT_LT(SteadyClock::now() - start, 3s);
  ExpectRssGrowthBelowBudget("unterminated request line");
}

TEST_F(HostileClient, OversizedHeadersAreRefused) {
  Start();
  std::string many;
  for (int i = 0; i < 101; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
  Raw a(port());
  ASSERT_TRUE(a.Send(Get("/healthz", many)));
  EXPECT_EQ(StatusOf(a.ReadResponse()), 431);
  Raw b(port());
  ASSERT_TRUE(b.Send(Get("/healthz", "X-Big: " + std::string(17 * 1024, 'v') + "\r\n")));
  EXPECT_EQ(StatusOf(b.ReadResponse()), 431);
  // Just under the caps is fine.
  std::string hundred;
  for (int i = 0; i < 99; ++i) hundred += "X-" + std::to_string(i) + ": v\r\n";
  Raw c(port());
  ASSERT_TRUE(c.Send(Get("/healthz", hundred)));
  EXPECT_EQ(StatusOf(c.ReadResponse()), 200);
  ExpectRssGrowthBelowBudget("oversized headers");
}

TEST_F(HostileClient, SlowHeadersDoNotStarveHealthz) {
  ServerLimits limits;
  limits.header_timeout = 3s;
  Start(limits);
  std::vector<std::unique_ptr<Raw>> slow;
  for (int i = 0; i < 20; ++i) {
    slow.push_back(std::make_unique<Raw>(port()));
    ASSERT_TRUE(slow.back()->connected());
    ASSERT_TRUE(slow.back()->Send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
  }
  // For 2 s the slow clients trickle a byte each every 100 ms while /healthz is asked 10 times.
  for (int round = 0; round < 20; ++round) {
    for (auto& s : slow) s->Send("X");
    if (round % 2 == 0) {
      const auto start = SteadyClock::now();
      Raw h(port());
      ASSERT_TRUE(h.Send(Get("/healthz")));
      std::string r = h.ReadResponse(2s);
      const auto took = SteadyClock::now() - start;
      EXPECT_EQ(StatusOf(r), 200) << "round " << round;
      EXPECT_LT(took, 1s) << "round " << round;
    }
    std::this_thread::sleep_for(100ms);
  }
  // Their deadline (3 s after they connected) ends them: 408, connection closed.
  for (auto& s : slow) {
    std::string r = s->ReadUntilClosed(4s);
    EXPECT_EQ(StatusOf(r), 408) << r;
  }
  ExpectRssGrowthBelowBudget("20 slow-header connections");
}

TEST_F(HostileClient, OnlyLoopbackHostsAreAnswered) {
  Start();
  const std::string p = std::to_string(port());
  for (const std::string& host :
       std::vector<std::string>{"127.0.0.1:" + p, "localhost:" + p, "LOCALHOST", "localhost.",
                                "[::1]:" + p, "127.1.2.3", "[::ffff:127.0.0.1]"}) {
    Raw c(port());
    ASSERT_TRUE(c.Send("GET /healthz HTTP/1.1\r\nHost: " + host + "\r\n\r\n"));
    EXPECT_EQ(StatusOf(c.ReadResponse()), 200) << host;
  }
  for (const std::string& host :
       std::vector<std::string>{"evil.example", "evil.example:" + p, "localhost.evil.example",
                                "127.0.0.1.nip.io", "10.0.0.1", "[::2]", "127.0.0.1:" + p + ":1"}) {
    Raw c(port());
    ASSERT_TRUE(c.Send("GET /metrics HTTP/1.1\r\nHost: " + host + "\r\n\r\n"));
    std::string r = c.ReadResponse();
    EXPECT_EQ(StatusOf(r), 421) << host;
    EXPECT_THAT(r, Not(HasSubstr("gpuattr_")));
  }
  // An absolute-form target names the authority itself.
  Raw absolute(port());
  ASSERT_TRUE(absolute.Send("GET http://evil.example/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  EXPECT_EQ(StatusOf(absolute.ReadResponse()), 421);
  // HTTP/1.1 without Host, or with two.
  Raw none(port());
  ASSERT_TRUE(none.Send("GET /healthz HTTP/1.1\r\n\r\n"));
  EXPECT_EQ(StatusOf(none.ReadResponse()), 400);
  Raw two(port());
  ASSERT_TRUE(two.Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n"));
  EXPECT_EQ(StatusOf(two.ReadResponse()), 400);
}

TEST_F(HostileClient, OnlyGetAndHeadAreServed) {
  Start();
  for (const char* method : {"PUT", "DELETE", "POST", "PATCH", "OPTIONS", "TRACE", "BREW"}) {
    Raw c(port());
    ASSERT_TRUE(c.Send(std::string(method) + " /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    std::string r = c.ReadUntilClosed(5s);
    EXPECT_EQ(StatusOf(r), 405) << method;
    EXPECT_THAT(r, HasSubstr("Allow: GET, HEAD\r\n")) << method;
    EXPECT_THAT(r, Not(HasSubstr("gpuattr_"))) << method;
  }
  // HEAD: the head GET would have, no body.
  Raw head(port());
  ASSERT_TRUE(head.Send("HEAD /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"));
  std::string r = head.ReadUntilClosed(5s);
  EXPECT_EQ(StatusOf(r), 200);
  EXPECT_THAT(r, HasSubstr("Content-Length: "));
  EXPECT_EQ(BodyOf(r), "");
}

TEST_F(HostileClient, KeepAliveAndPipelinedRequestsAreAnsweredInOrder) {
  Start();
  Raw c(port());
  ASSERT_TRUE(c.Send(Get("/healthz") + Get("/readyz") + Get("/nope")));
  EXPECT_EQ(StatusOf(c.ReadResponse()), 200);
  std::string ready = c.ReadResponse();
  EXPECT_EQ(StatusOf(ready), 200);
  EXPECT_EQ(BodyOf(ready), "ready\n");
  EXPECT_EQ(StatusOf(c.ReadResponse()), 404);
  ASSERT_TRUE(c.Send(Get("/healthz", "Connection: close\r\n")));
  std::string last = c.ReadUntilClosed(5s);
  EXPECT_EQ(StatusOf(last), 200);
  EXPECT_THAT(last, HasSubstr("Connection: close\r\n"));
}

TEST_F(HostileClient, MalformedHeadsAreRefused) {
  Start();
  for (const std::string& head :
       {std::string("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n folded\r\n\r\n"),
        std::string("GET /healthz HTTP/1.1\r\nHost : 127.0.0.1\r\n\r\n"),
        std::string("GET  /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
        std::string("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1x\r\n\r\n"),
        std::string("GET /he\x01lthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")}) {
    Raw c(port());
    ASSERT_TRUE(c.Send(head));
    EXPECT_EQ(StatusOf(c.ReadResponse()), 400) << head;
  }
  Raw h2(port());
  ASSERT_TRUE(h2.Send("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
  EXPECT_EQ(StatusOf(h2.ReadResponse()), 505);
}

}  // namespace
}  // namespace gpuattr::http
