// What the server turned away or cut off, by reason: published as gpuattr_http_refused_total so
// that an attack on the endpoint (or a scraper that misbehaves) shows up in a metric, not only in
// debug logs (docs/security.md#serving). One set of counters outlives the server it counts for:
// a reload that restarts the listener keeps counting in the same set.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuattr::http {

enum class Refusal {
  kBadRequest,      // a malformed or oversized request head, or a method/path refused (4xx)
  kHeadTimeout,     // the request head did not arrive within header_timeout (408)
  kTlsHandshake,    // a TLS handshake that failed or did not finish in time
  kUnauthorized,    // basic auth failed (401)
  kLoginQueueFull,  // too many logins waiting for bcrypt (503)
  kHealthSlotOnly,  // a non-probe request on a connection admitted only for probes (503)
  kEvicted,         // every slot taken: the connection that waited longest for its head closed
  kPerPeerLimit,    // max_connections_per_peer from one address: closed at accept
  kSlowReader,      // a response not taken at the minimum send rate or within write_timeout
  kCount,
};

class RefusalCounters {
 public:
  void Add(Refusal r) { counts_[static_cast<size_t>(r)].fetch_add(1, std::memory_order_relaxed); }
  uint64_t Get(Refusal r) const {
    return counts_[static_cast<size_t>(r)].load(std::memory_order_relaxed);
  }
  // Every reason (zeros included, so that rate() has a series from the start), in enum order.
  std::vector<std::pair<std::string_view, uint64_t>> Counts() const;

 private:
  std::array<std::atomic<uint64_t>, static_cast<size_t>(Refusal::kCount)> counts_{};
};

// The `reason` label of each refusal.
std::string_view RefusalName(Refusal r);

}  // namespace gpuattr::http
