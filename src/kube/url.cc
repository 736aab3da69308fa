#include "gpuattr/kube/url.h"

#include <arpa/inet.h>

#include <cctype>
#include <cstdlib>
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

bool MatchesNoProxyEntry(const std::string& host, int port, std::string entry) {
  entry = ToLower(std::string(Trim(entry)));
  if (entry.empty()) return false;
  if (entry == "*") return true;
  // CIDR (IPv4)
  size_t slash = entry.find('/');
  if (slash != std::string::npos) {
    in_addr net{}, h{};
    int bits = std::atoi(entry.c_str() + slash + 1);
    if (inet_pton(AF_INET, entry.substr(0, slash).c_str(), &net) != 1 ||
        inet_pton(AF_INET, host.c_str(), &h) != 1 || bits < 0 || bits > 32)
      return false;
    uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
    return (ntohl(net.s_addr) & mask) == (ntohl(h.s_addr) & mask);
  }
  // optional :port
  size_t colon = entry.rfind(':');
  if (colon != std::string::npos && entry.find(':') == colon) {
    if (std::atoi(entry.c_str() + colon + 1) != port) return false;
    entry = entry.substr(0, colon);
  }
  std::string h = ToLower(host);
  if (entry.front() == '.') entry.erase(0, 1);
  if (entry.rfind("*.", 0) == 0) entry.erase(0, 2);
  return h == entry ||
         (h.size() > entry.size() && h.compare(h.size() - entry.size(), entry.size(), entry) == 0 &&
          h[h.size() - entry.size() - 1] == '.');
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
