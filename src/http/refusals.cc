#include "gpuattr/http/refusals.h"

namespace gpuattr::http {

std::string_view RefusalName(Refusal r) {
  switch (r) {
    case Refusal::kBadRequest:
      return "bad_request";
    case Refusal::kHeadTimeout:
      return "head_timeout";
    case Refusal::kTlsHandshake:
      return "tls_handshake";
    case Refusal::kUnauthorized:
      return "unauthorized";
    case Refusal::kLoginQueueFull:
      return "login_queue_full";
    case Refusal::kHealthSlotOnly:
      return "health_slot_only";
    case Refusal::kEvicted:
      return "evicted";
    case Refusal::kPerPeerLimit:
      return "per_peer_limit";
    case Refusal::kSlowReader:
      return "slow_reader";
    case Refusal::kCount:
      break;
  }
  return "unknown";
}

std::vector<std::pair<std::string_view, uint64_t>> RefusalCounters::Counts() const {
  std::vector<std::pair<std::string_view, uint64_t>> out;
  out.reserve(counts_.size());
  for (size_t i = 0; i < counts_.size(); ++i) {
    const auto r = static_cast<Refusal>(i);
    out.emplace_back(RefusalName(r), Get(r));
  }
  return out;
}

}  // namespace gpuattr::http
