// URLs of the apiserver and its proxies (pure, no I/O): parsing kubeconfig server and proxy-url
// values, redacting credentials for messages, and choosing a proxy from the environment as
// client-go does.
#pragma once

#include <functional>
#include <string>

#include "gpuattr/util/status.h"

namespace gpuattr::kube {

// "scheme://[user[:pass]@]host[:port][/path]", the scheme lower-cased, IPv6 hosts without
// brackets, port 0 when absent. Errors start with `what` (e.g. "server \"...\"").
struct ParsedUrl {
  std::string scheme, userinfo, host, path;
  int port = 0;
};
Result<ParsedUrl> ParseUrl(const std::string& url, const std::string& what);

// The URL without credentials or path, for messages: "https://[::1]:6443".
std::string Redact(const ParsedUrl& url);

// %XX sequences decoded (userinfo of a proxy URL); malformed ones are kept as they are.
std::string PercentDecode(const std::string& s);

// localhost, ::1 or 127.0.0.0/8.
bool IsLoopback(const std::string& host);

// One NO_PROXY entry as Go's httpproxy reads it: "*"; a domain ("example.com" matches it and its
// subdomains, ".example.com" and "*.example.com" only its subdomains); an IP; an IPv4 or IPv6
// CIDR; domains and IPs optionally with ":port" ("[v6]:port" for IPv6).
bool MatchesNoProxyEntry(const std::string& host, int port, std::string entry);

struct ServerUrl {
  std::string scheme;     // "https" or "http"
  std::string host;       // without brackets for IPv6
  int port = 0;           // 443/80 when absent
  std::string base_path;  // "" or "/prefix" (no trailing slash), prepended to request paths
};
// Parses a kubeconfig server URL ("https://host[:port][/prefix]").
Result<ServerUrl> ParseServerUrl(const std::string& url);

// The proxy client-go would pick when the kubeconfig has no proxy-url (Go's
// http.ProxyFromEnvironment): HTTPS_PROXY for https servers, HTTP_PROXY for http ones (the
// upper-case name first, then the lower-case one; empty counts as unset), unless the host is
// "localhost" or a loopback address or a NO_PROXY (then no_proxy) entry matches it. A value
// without a scheme means http://. `source` names the variable used (for messages).
struct EnvProxy {
  std::string url;  // "" = connect directly
  std::string source;
};
EnvProxy ProxyFromEnvironment(const ServerUrl& server,
                              const std::function<const char*(const char*)>& getenv);

}  // namespace gpuattr::kube
