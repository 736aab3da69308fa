#include "gpuattr/discovery/cache.h"

#include <algorithm>
#include <set>

namespace gpuattr::discovery {

std::chrono::milliseconds TtlFor(Role role, Outcome outcome, const CacheTtls& ttls,
                                 uint32_t consecutive_errors) {
  // An exporter's first failed probe is tried again at the next cycle: a node's exporter that
  // timed out once must not hide the node for a minute. Failing again, it waits the period.
  if (role == Role::kExporter && outcome == Outcome::kError && consecutive_errors <= 1)
    return std::chrono::milliseconds(0);
  if (role == Role::kExporter || IsAccepted(outcome)) return ttls.result;
  if (outcome != Outcome::kError) return ttls.inference_negative;
  // 2 min, 4, 8, ... capped at the not-inference period (never below the first period).
  const auto cap = std::max(ttls.inference_error, ttls.inference_negative);
  auto ttl = ttls.inference_error;
  for (uint32_t i = 1; i < consecutive_errors && ttl < cap; ++i) ttl *= 2;
  return std::min(ttl, cap);
}

std::vector<Candidate> DiscoveryCache::Due(const std::vector<Candidate>& current,
                                           TimePoint now) const {
  std::vector<Candidate> due;
  for (const Candidate& c : current) {
    auto it = entries_.find(c.Key());
    if (it == entries_.end() || it->second.candidate.uid != c.uid) {
      due.push_back(c);
      continue;
    }
    const Candidate& was = it->second.candidate;
    // A change of what the pod may speak for (a label matching a trust rule now, a GPU held)
    // asks for a new verdict.
    const bool same_trust =
        was.trust == c.trust && was.holds_gpu == c.holds_gpu && was.pinned == c.pinned;
    bool fresh;
    if (it->second.verdict.outcome == Outcome::kUntrusted)
      // Not probed again while the pod is unchanged: whatever it serves, it may not say it.
      fresh = same_trust && was.resource_version == c.resource_version;
    else
      fresh = same_trust && now < it->second.expires && !(rediscover_ && c.role == Role::kExporter);
    if (!fresh) due.push_back(c);
  }
  return due;
}

void DiscoveryCache::Record(const Candidate& candidate, const ProbeVerdict& verdict,
                            const FetchFacts& fetch, TimePoint now, double now_unix) {
  CacheEntry e;
  e.candidate = candidate;
  e.verdict = verdict;
  if (verdict.outcome == Outcome::kError) {
    auto old = entries_.find(candidate.Key());
    const bool same_pod = old != entries_.end() && old->second.candidate.uid == candidate.uid;
    e.consecutive_errors = (same_pod ? old->second.consecutive_errors : 0) + 1;
  }
  e.expires = now + TtlFor(candidate.role, verdict.outcome, ttls_, e.consecutive_errors);
  e.probed_unix = now_unix;
  e.duration_seconds = fetch.duration_seconds;
  e.bytes = fetch.bytes;
  entries_[candidate.Key()] = std::move(e);
}

void DiscoveryCache::Refresh(const std::string& key, TimePoint now) {
  auto it = entries_.find(key);
  if (it == entries_.end() || !IsAccepted(it->second.verdict.outcome)) return;
  it->second.expires = now + TtlFor(it->second.candidate.role, it->second.verdict.outcome, ttls_);
}

void DiscoveryCache::Prune(const std::vector<Candidate>& current) {
  std::map<std::string, const Candidate*> by_key;
  for (const Candidate& c : current) by_key[c.Key()] = &c;
  for (auto it = entries_.begin(); it != entries_.end();) {
    auto cur = by_key.find(it->first);
    if (cur == by_key.end() || cur->second->uid != it->second.candidate.uid)
      it = entries_.erase(it);
    else
      ++it;
  }
}

}  // namespace gpuattr::discovery
