// kube::Transport over cpp-httplib for one cluster (one kubeconfig context).
//
// TLS: when the kubeconfig gives a CA, ONLY that CA is trusted (httplib's own verification is off
// and the SSL_CTX verifies against a store holding just that CA, plus the hostname or IP, or the
// tls-server-name); without one the system CAs are used; insecure-skip-tls-verify disables
// verification with a loud warning logged once per cluster. tls-server-name, when set, is the SNI
// of every handshake (the TCP connection, the proxy's CONNECT and the Host header still name the
// URL's host), as client-go does.
//
// Proxy: the cluster's proxy-url, else HTTPS_PROXY/HTTP_PROXY and NO_PROXY as client-go reads
// them (ProxyFromEnvironment in url.h), read when the transport is made. http:// proxies only.
//
// Threads: any number of threads may call Get/Stream at once. Each in-flight request uses its own
// httplib client (with its keep-alive connection); finished clients go back to a small idle pool
// (at most `max_idle_clients`, default 8, the scrape concurrency) and are reused. A client that
// failed is dropped rather than reused.
//
// Credentials are applied per request; after a 401 the exec/tokenFile credentials are refreshed
// and the request is retried once.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "gpuattr/kube/kubeconfig.h"
#include "gpuattr/kube/transport.h"
#include "gpuattr/kube/url.h"
#include "gpuattr/util/status.h"

namespace gpuattr::kube {

struct TransportOptions {
  size_t max_idle_clients = 8;
  std::chrono::milliseconds exec_timeout{30000};
  std::string user_agent = "gpuattr";
  // Who error messages name: "" → `cluster "<context>"`; a direct scrape's transport names its
  // pod ("pod ns/name").
  std::string subject;
  // Reads the proxy variables; std::getenv when empty (tests pass their own environment).
  std::function<const char*(const char*)> getenv;
};

Result<std::unique_ptr<Transport>> MakeTransport(const ClusterConnection& conn,
                                                 const TransportOptions& options);
Result<std::unique_ptr<Transport>> MakeTransport(const ClusterConnection& conn);

}  // namespace gpuattr::kube
