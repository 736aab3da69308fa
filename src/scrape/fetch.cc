#include "gpuattr/scrape/fetch.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace gpuattr::scrape {

std::string ProxyMetricsPath(std::string_view ns, std::string_view pod, int32_t port) {
  std::string path = "/api/v1/namespaces/";
  path.append(ns).append("/pods/").append(pod).append(":").append(std::to_string(port));
  path.append("/proxy/metrics");
  return path;
}

std::string DirectBaseUrl(std::string_view scheme, std::string_view host, int32_t port) {
  std::string url(scheme);
  url += "://";
  if (host.find(':') != std::string_view::npos) {
    url.append("[").append(host).append("]");
  } else {
    url.append(host);
  }
  return url + ":" + std::to_string(port);
}

std::string ForwardedPath(std::string_view proxy_path) {
  // After ".../namespaces/NS/": a namespace may well be called "proxy".
  constexpr std::string_view kNamespaces = "/namespaces/", kProxy = "/proxy";
  size_t from = proxy_path.find(kNamespaces);
  if (from != std::string_view::npos) from = proxy_path.find('/', from + kNamespaces.size());
  const size_t at = proxy_path.find(kProxy, from == std::string_view::npos ? 0 : from);
  if (at == std::string_view::npos) return std::string(proxy_path);
  std::string rest(proxy_path.substr(at + kProxy.size()));
  if (rest.empty() || rest.front() != '/') rest.insert(rest.begin(), '/');
  return rest;
}

int HttpStatusOfError(const Error& error) {
  if (error.http_status != 0) return error.http_status;
  // No response, but credentials the transport could not get (an exec plugin, a token file) are
  // the apiserver's refusal all the same.
  switch (error.code) {
    case ErrorCode::kUnauthenticated:
      return 401;
    case ErrorCode::kPermissionDenied:
      return 403;
    default:
      return 0;
  }
}

void RunBounded(size_t n, size_t concurrency, const std::function<void(size_t)>& work,
                const StopSignal* stop) {
  if (n == 0) return;
  const size_t threads = std::min(n, std::max<size_t>(1, concurrency));
  std::atomic<size_t> next{0};
  auto loop = [&] {
    for (;;) {
      if (stop && stop->stopped()) return;
      size_t i = next.fetch_add(1);
      if (i >= n) return;
      work(i);
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(loop);
  loop();
  for (auto& t : pool) t.join();
}

}  // namespace gpuattr::scrape
