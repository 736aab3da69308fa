// HTTP/1.x request heads read with hard caps, and the rules a head must pass before anything
// else runs (docs/design.md#http-server). Pure: bytes in, decisions out.
//
// The server reads a head piecemeal into a buffer of at most HeadLimit(limits) bytes; HeadScanner
// says when the head is complete or must be refused (414, 431) without rescanning what it saw.
// No request body is ever read: a request that announces one is refused (413).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuattr::http {

struct HttpLimits {
  size_t max_request_line = 8 * 1024;   // "GET /path HTTP/1.1", without its line end
  size_t max_header_bytes = 16 * 1024;  // every header field line after it, line ends included
  size_t max_headers = 100;
};

// The most bytes a head may take under `limits` (leading empty lines, request line, header
// fields, the blank line ending it): the buffer a reader needs, never more.
size_t HeadLimit(const HttpLimits& limits);

struct HttpError {
  int status = 400;    // 400, 405, 408, 413, 414, 421, 431, 505
  std::string reason;  // one line for the response body and the debug log
};

// Finds where a head ends in bytes that arrive piecemeal. Lines end with CRLF or a bare LF (RFC
// 9112 section 2.2); empty lines before the request line are skipped.
class HeadScanner {
 public:
  enum class State { kNeedMore, kComplete, kRejected };

  explicit HeadScanner(HttpLimits limits = {}) : limits_(limits) {}
  // `buffer` holds every byte received since Reset(), those of earlier calls first; only the
  // bytes not seen before are scanned.
  State Scan(std::string_view buffer);
  size_t head_size() const { return head_size_; }    // kComplete: bytes up to the blank line
  const HttpError& error() const { return error_; }  // kRejected
  void Reset() { *this = HeadScanner(limits_); }

 private:
  State Reject(int status, std::string reason);
  HttpLimits limits_;
  State state_ = State::kNeedMore;
  size_t pos_ = 0;         // bytes scanned
  size_t line_start_ = 0;  // start of the line being read
  bool in_headers_ = false;
  size_t headers_start_ = 0;  // first byte after the request line
  size_t headers_ = 0;
  size_t head_size_ = 0;
  HttpError error_;
};

struct RequestHead {
  std::string method;     // case-sensitive, as sent
  std::string target;     // as sent
  std::string path;       // the target's path, without query ("*" for asterisk-form)
  std::string authority;  // absolute-form target's authority, else the Host field, else ""
  int minor_version = 1;  // HTTP/1.<minor_version>
  // Field names lower-cased, values without surrounding whitespace, in arrival order.
  std::vector<std::pair<std::string, std::string>> headers;

  const std::string* Header(std::string_view lower_name) const;  // the first, or null
  size_t Count(std::string_view lower_name) const;
  bool KeepAlive() const;  // HTTP/1.1 unless "Connection: close"; HTTP/1.0 never
};

// Parses a complete head (what HeadScanner delimited). Errors: 400 (malformed), 505 (not
// HTTP/1.x).
struct ParsedHead {
  std::optional<RequestHead> head;
  HttpError error;  // when !head
};
ParsedHead ParseRequestHead(std::string_view head);

// The checks every request passes before authentication and routing, cheapest first:
//   - HTTP/1.1 needs exactly one Host field, HTTP/1.0 at most one (400);
//   - `loopback_only` (the server listens on a loopback address): the authority must name the
//     loopback interface (IsLoopbackAuthority), else 421 (a page that reached us through DNS
//     rebinding carries its own domain in Host);
//   - GET and HEAD only (405, answered with "Allow: GET, HEAD");
//   - no body: a Content-Length above 0 or any Transfer-Encoding is refused unread (413); an
//     invalid Content-Length is 400.
// Range, If-Range and Expect are ignored: responses are always complete (200).
std::optional<HttpError> Admit(const RequestHead& head, bool loopback_only);

// "localhost", "127.0.0.0/8", "[::1]" (also other spellings of ::1 and ::ffff:127.x.y.z), each
// with or without ":port", case-insensitive, with or without the root's trailing dot. An empty
// authority (HTTP/1.0 without Host) is not a name and passes: browsers always send Host.
bool IsLoopbackAuthority(std::string_view authority);

// Whether Accept-Encoding allows gzip ("gzip", "x-gzip" or "*" with a q above 0).
bool AcceptsGzip(const RequestHead& head);

}  // namespace gpuattr::http
