#include "gpuattr/kube/url.h"

#include <arpa/inet.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "gpuattr/util/strings.h"

namespace gpuattr::kube {

Result<ParsedUrl> ParseUrl(const std::string& url, const std::string& what) {
  auto bad = [&](const std::string& why) {
    return MakeError(ErrorCode::kInvalidArgument, what + ": " + why);
  };
  ParsedUrl p;
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos || scheme_end == 0)
    return bad("expected scheme://host[:port]");
  p.scheme = ToLower(url.substr(0, scheme_end));
  std::string rest = url.substr(scheme_end + 3);
  size_t slash = rest.find_first_of("/?#");
  std::string authority = rest.substr(0, slash);
  if (slash != std::string::npos) p.path = rest.substr(slash);
  size_t at = authority.rfind('@');
  if (at != std::string::npos) {
    p.userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
  }
  std::string port_text;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) return bad("unclosed [ in the host");
    p.host = authority.substr(1, close - 1);
    std::string after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("unexpected text after the IPv6 address");
      port_text = after.substr(1);
    }
  } else {
    size_t colon = authority.rfind(':');
    p.host = authority.substr(0, colon);
    if (colon != std::string::npos) port_text = authority.substr(colon + 1);
  }
  if (p.host.empty()) return bad("missing host");
  if (!port_text.empty()) {
    int port = 0;
    for (char c : port_text) {
      if (c < '0' || c > '9' || port > 65535) return bad("invalid port");
      port = port * 10 + (c - '0');
    }
    if (port <= 0 || port > 65535) return bad("invalid port");
    p.port = port;
  }
  return p;
}

std::string Redact(const ParsedUrl& p) {
  std::string host = p.host.find(':') != std::string::npos ? "[" + p.host + "]" : p.host;
  return p.scheme + "://" + host + (p.port ? ":" + std::to_string(p.port) : "");
}

std::string PercentDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool IsLoopback(const std::string& host) {
  if (ToLower(host) == "localhost" || host == "::1") return true;
  in_addr a{};
  return inet_pton(AF_INET, host.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

namespace {

// An IPv4 or IPv6 address in network order (16 bytes; IPv4 as ::ffff:a.b.c.d, as Go does).
bool ParseIp(const std::string& text, unsigned char out[16]) {
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    std::memset(out, 0, 10);
    out[10] = out[11] = 0xff;
    std::memcpy(out + 12, &v4, 4);
    return true;
  }
  return inet_pton(AF_INET6, text.c_str(), out) == 1;
}

bool IsV4Mapped(const unsigned char a[16]) {
  static const unsigned char prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(a, prefix, 12) == 0;
}

// "10.0.0.0/8", "fd00::/8": does `ip` fall inside?
bool InCidr(const unsigned char ip[16], const std::string& cidr) {
  size_t slash = cidr.find('/');
  unsigned char net[16];
  if (!ParseIp(cidr.substr(0, slash), net)) return false;
  const std::string bits_text = cidr.substr(slash + 1);
  if (bits_text.empty() || bits_text.size() > 3 ||
      bits_text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  int bits = std::atoi(bits_text.c_str());
  const bool v4 = cidr.find(':') == std::string::npos;
  if (bits > (v4 ? 32 : 128)) return false;
  if (v4 != IsV4Mapped(ip)) return false;  // an IPv4 network never holds an IPv6 host
  if (v4) bits += 96;
  for (int i = 0; i < 16 && bits > 0; ++i, bits -= 8) {
    const unsigned char mask = bits >= 8 ? 0xff : static_cast<unsigned char>(0xff << (8 - bits));
    if ((ip[i] & mask) != (net[i] & mask)) return false;
  }
  return true;
}

}  // namespace

// Go's golang.org/x/net/http/httpproxy, entry by entry: "*"; a CIDR; an IP with an optional port
// ("10.0.0.1", "10.0.0.1:6443", "[fd00::1]:6443", "fd00::1"); else a domain with an optional port:
// "example.com" matches it and its subdomains, ".example.com" and "*.example.com" only subdomains.
bool MatchesNoProxyEntry(const std::string& host, int port, std::string entry) {
  entry = ToLower(std::string(Trim(entry)));
  if (entry.empty()) return false;
  if (entry == "*") return true;
  const std::string h = ToLower(host);
  unsigned char host_ip[16];
  const bool host_is_ip = ParseIp(h, host_ip);
  if (entry.find('/') != std::string::npos) return host_is_ip && InCidr(host_ip, entry);
  // host[:port] as net.SplitHostPort reads it: "[v6]:port", or exactly one colon.
  std::string entry_host = entry, entry_port;
  if (entry.front() == '[') {
    size_t close = entry.find(']');
    if (close == std::string::npos) return false;
    entry_host = entry.substr(1, close - 1);
    if (close + 1 < entry.size()) {
      if (entry[close + 1] != ':') return false;
      entry_port = entry.substr(close + 2);
    }
  } else if (size_t colon = entry.find(':');
             colon != std::string::npos && entry.find(':', colon + 1) == std::string::npos) {
    entry_host = entry.substr(0, colon);
    entry_port = entry.substr(colon + 1);
  }
  if (entry_host.empty()) return false;
  const bool port_ok = entry_port.empty() || entry_port == std::to_string(port);
  unsigned char entry_ip[16];
  if (ParseIp(entry_host, entry_ip))
    return host_is_ip && std::memcmp(entry_ip, host_ip, 16) == 0 && port_ok;
  if (entry_host.rfind("*.", 0) == 0) entry_host.erase(0, 1);
  const bool match_host = entry_host.front() != '.';
  if (match_host) entry_host.insert(0, ".");
  const bool suffix = h.size() > entry_host.size() &&
                      h.compare(h.size() - entry_host.size(), entry_host.size(), entry_host) == 0;
  return (suffix || (match_host && h == entry_host.substr(1))) && port_ok;
}

EnvProxy ProxyFromEnvironment(const ServerUrl& server,
                              const std::function<const char*(const char*)>& getenv) {
  auto get = [&](const char* upper, const char* lower) -> std::pair<std::string, std::string> {
    if (const char* v = getenv(upper); v && *v) return {v, upper};
    if (const char* v = getenv(lower); v && *v) return {v, lower};
    return {"", ""};
  };
  auto [url, source] = server.scheme == "https" ? get("HTTPS_PROXY", "https_proxy")
                                                : get("HTTP_PROXY", "http_proxy");
  if (url.empty() || IsLoopback(server.host)) return {};
  auto [no_proxy, unused] = get("NO_PROXY", "no_proxy");
  std::stringstream ss(no_proxy);
  std::string entry;
  while (std::getline(ss, entry, ',')) {
    if (MatchesNoProxyEntry(server.host, server.port, entry)) return {};
  }
  // Like Go, a proxy value without a scheme means http://.
  if (url.find("://") == std::string::npos) url = "http://" + url;
  return {url, source};
}

Result<ServerUrl> ParseServerUrl(const std::string& url) {
  auto p = ParseUrl(url, "server " + Quote(url));
  if (!p.ok()) return p.error();
  ServerUrl s;
  s.scheme = p->scheme;
  s.host = p->host;
  s.port = p->port ? p->port : (p->scheme == "https" ? 443 : 80);
  s.base_path = p->path;
  while (!s.base_path.empty() && s.base_path.back() == '/') s.base_path.pop_back();
  return s;
}

}  // namespace gpuattr::kube
