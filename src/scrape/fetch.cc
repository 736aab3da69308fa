#include "gpuattr/scrape/fetch.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <thread>
#include <vector>

namespace gpuattr::scrape {

std::string ProxyMetricsPath(std::string_view ns, std::string_view pod, int32_t port) {
  std::string path = "/api/v1/namespaces/";
  path.append(ns).append("/pods/").append(pod).append(":").append(std::to_string(port));
  path.append("/proxy/metrics");
  return path;
}

int HttpStatusOfError(const Error& error) {
  switch (error.code) {
    case ErrorCode::kUnauthenticated:
      return 401;
    case ErrorCode::kPermissionDenied:
      return 403;
    default:
      break;
  }
  const std::string& m = error.message;
  for (size_t at = m.find("HTTP "); at != std::string::npos; at = m.find("HTTP ", at + 1)) {
    size_t i = at + 5;
    int v = 0;
    size_t digits = 0;
    while (i < m.size() && std::isdigit(static_cast<unsigned char>(m[i])) && digits < 3) {
      v = v * 10 + (m[i] - '0');
      ++i;
      ++digits;
    }
    if (digits == 3 && v >= 100) return v;
  }
  return 0;
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
