#include "gpuattr/http/http_request.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "gpuattr/util/strings.h"

namespace gpuattr::http {
namespace {

// Empty lines a client may send before the request line (RFC 9112 section 2.2 asks servers to
// skip at least one; some clients send a CRLF after a request).
constexpr size_t kLeadingEmptyBytes = 16;

bool IsTokenChar(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  return std::strchr("!#$%&'*+-.^_`|~", c) != nullptr && c != 0;
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (!IsTokenChar(c)) return false;
  return true;
}

std::string_view TrimWs(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsIgnoreCase(s.substr(0, prefix.size()), prefix);
}

ParsedHead Fail(int status, std::string reason) {
  return {std::nullopt, {status, std::move(reason)}};
}

// ":" followed by up to 5 digits, or nothing.
bool IsPortSuffix(std::string_view s) {
  if (s.empty()) return true;
  if (s[0] != ':' || s.size() > 6) return false;
  for (char c : s.substr(1))
    if (c < '0' || c > '9') return false;
  return true;
}

// The request target's path and authority (RFC 9112 section 3.2).
bool SplitTarget(std::string_view target, RequestHead& h) {
  auto path_of = [](std::string_view rest) {
    size_t end = rest.find_first_of("?#");
    return std::string(rest.substr(0, end));
  };
  if (target == "*") {
    h.path = "*";
    return true;
  }
  if (target[0] == '/') {
    h.path = path_of(target);
    return true;
  }
  for (std::string_view scheme : {"http://", "https://"}) {
    if (!StartsWithIgnoreCase(target, scheme)) continue;
    std::string_view rest = target.substr(scheme.size());
    size_t end = rest.find_first_of("/?#");
    h.authority = std::string(rest.substr(0, end));
    if (h.authority.empty()) return false;
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    h.path = rest.empty() || rest[0] != '/' ? "/" + path_of(rest) : path_of(rest);
    return true;
  }
  return false;
}

}  // namespace

size_t HeadLimit(const HttpLimits& limits) {
  return kLeadingEmptyBytes + limits.max_request_line + 2 + limits.max_header_bytes + 2;
}

HeadScanner::State HeadScanner::Reject(int status, std::string reason) {
  error_ = {status, std::move(reason)};
  state_ = State::kRejected;
  return state_;
}

HeadScanner::State HeadScanner::Scan(std::string_view b) {
  if (state_ != State::kNeedMore) return state_;
  while (pos_ < b.size()) {
    const void* nl = std::memchr(b.data() + pos_, '\n', b.size() - pos_);
    if (!nl) {
      pos_ = b.size();
      break;
    }
    const size_t end = static_cast<size_t>(static_cast<const char*>(nl) - b.data());
    size_t content = end - line_start_;
    if (content > 0 && b[end - 1] == '\r') --content;
    if (!in_headers_) {
      if (content == 0) {  // an empty line before the request line
        if (end + 1 > kLeadingEmptyBytes) return Reject(400, "empty lines instead of a request");
      } else {
        if (content > limits_.max_request_line) return Reject(414, "request line too long");
        in_headers_ = true;
        headers_start_ = end + 1;
      }
    } else {
      if (content == 0) {
        head_size_ = end + 1;
        state_ = State::kComplete;
        return state_;
      }
      if (++headers_ > limits_.max_headers) return Reject(431, "too many header fields");
      if (end + 1 - headers_start_ > limits_.max_header_bytes)
        return Reject(431, "header fields too large");
    }
    line_start_ = end + 1;
    pos_ = end + 1;
  }
  // The line without its end yet already counts against its limit: nothing waits for a newline
  // that would come too late.
  if (!in_headers_) {
    if (b.size() - line_start_ > limits_.max_request_line + 1)  // + its CR
      return Reject(414, "request line too long");
  } else if (b.size() - headers_start_ > limits_.max_header_bytes + 2) {  // + the blank line
    return Reject(431, "header fields too large");
  }
  return state_;
}

const std::string* RequestHead::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers)
    if (name == lower_name) return &value;
  return nullptr;
}

size_t RequestHead::Count(std::string_view lower_name) const {
  size_t n = 0;
  for (const auto& h : headers) n += h.first == lower_name;
  return n;
}

bool RequestHead::KeepAlive() const {
  if (minor_version == 0) return false;
  for (const auto& [name, value] : headers) {
    if (name != "connection") continue;
    std::string_view v = value;
    while (!v.empty()) {  // a list: "keep-alive, close"
      size_t comma = v.find(',');
      if (EqualsIgnoreCase(TrimWs(v.substr(0, comma)), "close")) return false;
      v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
    }
  }
  return true;
}

ParsedHead ParseRequestHead(std::string_view head) {
  RequestHead h;
  bool request_line = true;
  while (!head.empty()) {
    size_t nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    head = nl == std::string_view::npos ? std::string_view() : head.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find('\r') != std::string_view::npos || line.find('\0') != std::string_view::npos)
      return Fail(400, "stray CR or NUL in the head");
    if (request_line) {
      if (line.empty()) continue;  // leading empty lines
      request_line = false;
      size_t sp1 = line.find(' ');
      size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
      if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
        return Fail(400, "malformed request line");
      std::string_view method = line.substr(0, sp1);
      std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
      std::string_view version = line.substr(sp2 + 1);
      if (!IsToken(method)) return Fail(400, "malformed method");
      if (target.empty()) return Fail(400, "empty request target");
      for (unsigned char c : target)
        if (c <= 0x20 || c >= 0x7f) return Fail(400, "malformed request target");
      if (version == "HTTP/1.1") {
        h.minor_version = 1;
      } else if (version == "HTTP/1.0") {
        h.minor_version = 0;
      } else if (version.size() == 8 && version.starts_with("HTTP/") && version[6] == '.') {
        return Fail(505, "only HTTP/1.0 and HTTP/1.1 are served");
      } else {
        return Fail(400, "malformed HTTP version");
      }
      h.method = std::string(method);
      h.target = std::string(target);
      if (!SplitTarget(target, h)) return Fail(400, "unsupported request target form");
      continue;
    }
    if (line.empty()) break;  // the end of the head
    if (line[0] == ' ' || line[0] == '\t') return Fail(400, "obsolete line folding");
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || !IsToken(line.substr(0, colon)))
      return Fail(400, "malformed header field");
    std::string_view value = TrimWs(line.substr(colon + 1));
    for (unsigned char c : value)
      if ((c < 0x20 && c != '\t') || c == 0x7f) return Fail(400, "control character in a field");
    h.headers.emplace_back(ToLower(line.substr(0, colon)), std::string(value));
  }
  if (request_line) return Fail(400, "no request line");
  if (h.authority.empty())
    if (const std::string* host = h.Header("host")) h.authority = *host;
  return {std::move(h), {}};
}

std::optional<HttpError> Admit(const RequestHead& head, bool loopback_only) {
  const size_t hosts = head.Count("host");
  if (head.minor_version == 1 ? hosts != 1 : hosts > 1)
    return HttpError{400, "an HTTP/1.1 request needs exactly one Host field"};
  if (loopback_only && !IsLoopbackAuthority(head.authority))
    return HttpError{421,
                     "this server listens on a loopback address and answers requests for "
                     "localhost, 127.0.0.0/8 or [::1] only"};
  if (head.method != "GET" && head.method != "HEAD")
    return HttpError{405, "only GET and HEAD are served"};
  if (head.Count("transfer-encoding") > 0)
    return HttpError{413, "this server reads no request bodies"};
  std::optional<unsigned long long> length;
  for (const auto& [name, value] : head.headers) {
    if (name != "content-length") continue;
    std::string_view v = value;
    while (true) {  // "5, 5" is one length said twice (RFC 9110 section 8.6)
      size_t comma = v.find(',');
      std::string_view item = TrimWs(v.substr(0, comma));
      unsigned long long n = 0;
      auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
      if (item.empty() || ec != std::errc() || end != item.data() + item.size() ||
          (length && *length != n))
        return HttpError{400, "invalid Content-Length"};
      length = n;
      if (comma == std::string_view::npos) break;
      v = v.substr(comma + 1);
    }
  }
  if (length && *length > 0) return HttpError{413, "this server reads no request bodies"};
  return std::nullopt;
}

bool IsLoopbackAuthority(std::string_view a) {
  if (a.empty()) return true;
  if (a[0] == '[') {
    size_t close = a.find(']');
    if (close == std::string_view::npos || !IsPortSuffix(a.substr(close + 1))) return false;
    std::string inside(a.substr(1, close - 1));
    in6_addr v6{};
    if (inet_pton(AF_INET6, inside.c_str(), &v6) != 1) return false;
    return IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
  }
  size_t colon = a.find(':');
  if (colon != std::string_view::npos && !IsPortSuffix(a.substr(colon))) return false;
  std::string host = ToLower(a.substr(0, colon));
  if (!host.empty() && host.back() == '.') host.pop_back();
  if (host == "localhost") return true;
  in_addr v4{};
  return inet_pton(AF_INET, host.c_str(), &v4) == 1 &&
         (ntohl(v4.s_addr) >> 24) == 127;  // 127.0.0.0/8
}

bool AcceptsGzip(const RequestHead& head) {
  double gzip_q = -1, star_q = -1;
  for (const auto& [name, value] : head.headers) {
    if (name != "accept-encoding") continue;
    std::string_view v = value;
    while (!v.empty()) {
      size_t comma = v.find(',');
      std::string_view item = v.substr(0, comma);
      v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
      size_t semi = item.find(';');
      std::string_view coding = TrimWs(item.substr(0, semi));
      double q = 1;
      if (semi != std::string_view::npos) {
        std::string_view param = TrimWs(item.substr(semi + 1));
        if (param.size() > 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
          param.remove_prefix(2);
          auto [end, ec] = std::from_chars(param.data(), param.data() + param.size(), q);
          if (ec != std::errc()) q = 0;
        }
      }
      if (EqualsIgnoreCase(coding, "gzip") || EqualsIgnoreCase(coding, "x-gzip"))
        gzip_q = std::max(gzip_q, q);
      else if (coding == "*")
        star_q = q;
    }
  }
  return (gzip_q >= 0 ? gzip_q : star_q) > 0;
}

}  // namespace gpuattr::http
