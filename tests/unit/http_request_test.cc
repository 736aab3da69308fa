// Request heads under hard caps, and the checks before routing (http/http_request.h).
#include "gpuattr/http/http_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace gpuattr::http {
namespace {

using ::testing::HasSubstr;
using State = HeadScanner::State;

// Feeds `bytes` one at a time, as the slowest client would; returns the final state.
State FeedByteByByte(HeadScanner& s, std::string_view bytes) {
  std::string buffer;
  State st = State::kNeedMore;
  for (char c : bytes) {
    buffer.push_back(c);
    st = s.Scan(buffer);
    if (st != State::kNeedMore) break;
  }
  return st;
}

TEST(HeadScanner, FindsTheEndOfAHeadWhateverTheChunks) {
  const std::string head = "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\nNEXT";
  HeadScanner whole;
  EXPECT_EQ(whole.Scan(head), State::kComplete);
  EXPECT_EQ(whole.head_size(), head.size() - 4);
  HeadScanner slow;
  EXPECT_EQ(FeedByteByByte(slow, head), State::kComplete);
  EXPECT_EQ(slow.head_size(), head.size() - 4);
  HeadScanner bare_lf;  // RFC 9112 2.2: a bare LF ends a line too
  EXPECT_EQ(bare_lf.Scan("\r\nGET / HTTP/1.1\nHost: x\n\n"), State::kComplete);
}

TEST(HeadScanner, RefusesARequestLineOverTheCapBeforeItEnds) {
  HttpLimits limits;
  HeadScanner s(limits);
  std::string line = "GET /" + std::string(limits.max_request_line, 'a');
  EXPECT_EQ(s.Scan(line), State::kRejected);  // no newline needed to know
  EXPECT_EQ(s.error().status, 414);
  HeadScanner exact(limits);
  std::string fits = "GET /" + std::string(limits.max_request_line - 14, 'a') + " HTTP/1.1";
  ASSERT_EQ(fits.size(), limits.max_request_line);
  EXPECT_EQ(exact.Scan(fits + "\r\nHost: x\r\n\r\n"), State::kComplete);
}

TEST(HeadScanner, RefusesTooManyOrTooLargeHeaderFields) {
  HttpLimits limits;
  std::string many = "GET / HTTP/1.1\r\n";
  for (size_t i = 0; i <= limits.max_headers; ++i) many += "A: b\r\n";
  HeadScanner count(limits);
  EXPECT_EQ(count.Scan(many), State::kRejected);
  EXPECT_EQ(count.error().status, 431);
  HeadScanner big(limits);
  EXPECT_EQ(big.Scan("GET / HTTP/1.1\r\nA: " + std::string(limits.max_header_bytes, 'b')),
            State::kRejected);
  EXPECT_EQ(big.error().status, 431);
  HeadScanner empties(limits);  // a stream of empty lines is no request
  EXPECT_EQ(empties.Scan(std::string(40, '\n')), State::kRejected);
  EXPECT_EQ(empties.error().status, 400);
}

TEST(HeadScanner, NeverNeedsMoreThanHeadLimitBytes) {
  const HttpLimits limits;
  for (const std::string& prefix : {std::string(), std::string("GET / HTTP/1.1\r\n"),
                                    std::string("\r\n\r\nGET / HTTP/1.1\r\n")}) {
    HeadScanner s(limits);
    std::string flood = prefix + std::string(HeadLimit(limits) + 1 - prefix.size(), 'x');
    EXPECT_EQ(s.Scan(flood), State::kRejected) << prefix;
  }
  // Lines of the maximum sizes still fit.
  std::string head =
      "\r\n\r\nGET /" + std::string(limits.max_request_line - 14, 'a') + " HTTP/1.1\r\n";
  std::string fields;
  for (size_t i = 0; i < limits.max_headers && fields.size() + 160 <= limits.max_header_bytes; ++i)
    fields += "A: " + std::string(155, 'b') + "\r\n";
  HeadScanner s(limits);
  EXPECT_EQ(s.Scan(head + fields + "\r\n"), State::kComplete);
  EXPECT_LE(s.head_size(), HeadLimit(limits));
}

RequestHead Parse(std::string_view text) {
  ParsedHead p = ParseRequestHead(text);
  EXPECT_TRUE(p.head) << p.error.reason;
  return p.head ? *p.head : RequestHead();
}

int ParseStatus(std::string_view text) {
  ParsedHead p = ParseRequestHead(text);
  return p.head ? 0 : p.error.status;
}

TEST(RequestHead, ParsesLineFieldsAndTarget) {
  RequestHead h = Parse(
      "GET /metrics?x=1 HTTP/1.1\r\nHost: 127.0.0.1:9787\r\nAccept-Encoding:  gzip \r\n"
      "X-Empty:\r\n\r\n");
  EXPECT_EQ(h.method, "GET");
  EXPECT_EQ(h.target, "/metrics?x=1");
  EXPECT_EQ(h.path, "/metrics");
  EXPECT_EQ(h.minor_version, 1);
  EXPECT_EQ(h.authority, "127.0.0.1:9787");
  ASSERT_TRUE(h.Header("accept-encoding"));
  EXPECT_EQ(*h.Header("accept-encoding"), "gzip");
  EXPECT_EQ(*h.Header("x-empty"), "");
  EXPECT_TRUE(h.KeepAlive());

  RequestHead absolute = Parse("GET HTTP://Example.COM:80?q HTTP/1.0\r\nHost: localhost\r\n\r\n");
  EXPECT_EQ(absolute.authority, "Example.COM:80");  // the target's, not Host's
  EXPECT_EQ(absolute.path, "/");
  EXPECT_FALSE(absolute.KeepAlive());  // HTTP/1.0

  EXPECT_FALSE(
      Parse("GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, Close\r\n\r\n").KeepAlive());
}

TEST(RequestHead, MalformedHeadsAre400AndOtherVersions505) {
  EXPECT_EQ(ParseStatus("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n"), 400);
  EXPECT_EQ(ParseStatus("GET / HTTP/1.1\r\nHost : x\r\n\r\n"), 400);
  EXPECT_EQ(ParseStatus("GET / HTTP/1.1\r\nNoColon\r\n\r\n"), 400);
  EXPECT_EQ(ParseStatus("GET / HTTP/1.1\r\nA: b\x01\r\n\r\n"), 400);
  EXPECT_EQ(ParseStatus("GET / HTTP/1.1\r\nA: b\rc\r\n\r\n"), 400);
  EXPECT_EQ(ParseStatus("GET /a b HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(ParseStatus("GET relative HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(ParseStatus("G(T / HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(ParseStatus("GET / HTTX/1.1\r\n\r\n"), 400);
  EXPECT_EQ(ParseStatus("GET / HTTP/2.0\r\n\r\n"), 505);
  EXPECT_EQ(ParseStatus("PRI * HTTP/2.0\r\n\r\n"), 505);
}

std::optional<int> AdmitStatus(std::string_view text, bool loopback_only = true) {
  RequestHead h = Parse(text);
  auto e = Admit(h, loopback_only);
  return e ? std::optional<int>(e->status) : std::nullopt;
}

TEST(Admit, GetAndHeadWithoutBodyForLoopbackNamesOnly) {
  EXPECT_EQ(AdmitStatus("GET / HTTP/1.1\r\nHost: localhost:9787\r\n\r\n"), std::nullopt);
  EXPECT_EQ(AdmitStatus("HEAD / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n"),
            std::nullopt);
  EXPECT_EQ(AdmitStatus("GET / HTTP/1.0\r\n\r\n"), std::nullopt);  // no Host in 1.0: no browser
  for (const char* m : {"PUT", "DELETE", "POST", "OPTIONS", "CONNECT"})
    EXPECT_EQ(AdmitStatus(std::string(m) + " / HTTP/1.1\r\nHost: localhost\r\n\r\n"), 405) << m;
  EXPECT_EQ(AdmitStatus("GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 7\r\n\r\n"), 413);
  EXPECT_EQ(AdmitStatus("GET / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"),
            413);
  EXPECT_EQ(AdmitStatus("GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: -1\r\n\r\n"), 400);
  EXPECT_EQ(AdmitStatus("GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0, 1\r\n\r\n"), 400);
  EXPECT_EQ(AdmitStatus("GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0, 0\r\n\r\n"),
            std::nullopt);
  EXPECT_EQ(AdmitStatus("GET / HTTP/1.1\r\n\r\n"), 400);  // 1.1 needs Host
  EXPECT_EQ(AdmitStatus("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", false), 400);
  EXPECT_EQ(AdmitStatus("GET / HTTP/1.1\r\nHost: attacker.example\r\n\r\n"), 421);
  // Listening on a non-loopback address, any name may reach us.
  EXPECT_EQ(AdmitStatus("GET / HTTP/1.1\r\nHost: gpuattr.lab.example\r\n\r\n", false),
            std::nullopt);
}

TEST(Admit, LoopbackAuthorities) {
  for (const char* ok :
       {"localhost", "LocalHost:80", "localhost.", "localhost:", "127.0.0.1", "127.255.0.9:9787",
        "[::1]", "[::1]:9787", "[0:0:0:0:0:0:0:1]", "[::ffff:127.0.0.1]:1", ""})
    EXPECT_TRUE(IsLoopbackAuthority(ok)) << ok;
  for (const char* bad :
       {"example.com", "localhost.example.com", "127.0.0.1.nip.io", "128.0.0.1", "0.0.0.0", "[::]",
        "[::2]", "::1", "[::1", "[::1]x", "localhost:80:80", "localhost:abc", "127.1", "0177.0.0.1",
        "[fe80::1%25lo]", "localhost:123456"})
    EXPECT_FALSE(IsLoopbackAuthority(bad)) << bad;
}

TEST(AcceptEncoding, GzipWhenAllowed) {
  auto accepts = [](std::string_view value) {
    RequestHead h;
    h.headers.emplace_back("accept-encoding", std::string(value));
    return AcceptsGzip(h);
  };
  EXPECT_TRUE(accepts("gzip"));
  EXPECT_TRUE(accepts("deflate, GZIP;q=0.5"));
  EXPECT_TRUE(accepts("x-gzip"));
  EXPECT_TRUE(accepts("*"));
  EXPECT_FALSE(accepts("gzip;q=0"));
  EXPECT_FALSE(accepts("gzip;q=0.000, *"));
  EXPECT_FALSE(accepts("identity"));
  EXPECT_FALSE(accepts("br"));
  EXPECT_FALSE(AcceptsGzip(RequestHead()));
}

}  // namespace
}  // namespace gpuattr::http
