// What discovery remembers between cycles, with expiry on an injected clock
// (docs/design.md#caching-and-the-probe-budget): every probe result is kept per candidate
// (namespace/pod:port and the pod's uid), so steady state costs no probe beyond the expiries:
//   exporter candidates: any result 60 s;
//   inference candidates: accepted 60 s, not inference 10 min, errors 2 min, doubling with each
//   consecutive failure of the same pod up to the not-inference period (2, 4, 8, 10 min);
//   untrusted (docs/design.md#trust): kept while the pod is unchanged (same uid and
//   resourceVersion), whatever the expiry or a rediscovery; a change of its trust (a pin, a
//   matching trust rule, a GPU held) asks for a new verdict of any entry.
// An accepted target is refreshed by each successful scrape; a failed scrape of a known target
// asks for re-discovery, which expires every exporter-role entry for the next cycle. Entries of
// pods that are gone (or replaced: a new uid) are dropped. Not thread-safe: one cycle at a time.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "gpuattr/discovery/candidates.h"
#include "gpuattr/discovery/probe.h"

namespace gpuattr::discovery {

struct CacheTtls {
  std::chrono::milliseconds result{std::chrono::seconds(60)};
  std::chrono::milliseconds inference_negative{std::chrono::minutes(10)};
  std::chrono::milliseconds inference_error{std::chrono::minutes(2)};
};

// Pure: how long a verdict on a candidate of this role stays valid. `consecutive_errors` counts
// this error among the candidate's failed probes in a row (1 for the first); an exporter's first
// error is due again at once (the next cycle), inference errors back off with it.
std::chrono::milliseconds TtlFor(Role role, Outcome outcome, const CacheTtls& ttls,
                                 uint32_t consecutive_errors = 1);

struct CacheEntry {
  Candidate candidate;
  ProbeVerdict verdict;
  std::chrono::steady_clock::time_point expires;
  double probed_unix = 0;  // wall time of the probe, for the status page
  double duration_seconds = 0;
  uint64_t bytes = 0;
  uint32_t consecutive_errors = 0;  // failed probes in a row of this pod (0 after a success)
};

class DiscoveryCache {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  explicit DiscoveryCache(CacheTtls ttls = {}) : ttls_(ttls) {}

  // The candidates that need a probe now: no entry, a different pod uid, a changed trust,
  // expired, or (after RequestRediscovery) every exporter-role candidate; an untrusted one only
  // when its pod changed. Sorted by key.
  std::vector<Candidate> Due(const std::vector<Candidate>& current, TimePoint now) const;
  // Keeps a probe's verdict (replacing any older entry for the key).
  void Record(const Candidate& candidate, const ProbeVerdict& verdict, const FetchFacts& fetch,
              TimePoint now, double now_unix);
  // A successful scrape of an accepted target keeps it valid for another period.
  void Refresh(const std::string& key, TimePoint now);
  // After a failed scrape: the next Due() re-probes every exporter-role candidate.
  void RequestRediscovery() { rediscover_ = true; }
  bool rediscovery_requested() const { return rediscover_; }
  // Called once the cycle's probes were recorded: clears the rediscovery request.
  void RediscoveryDone() { rediscover_ = false; }
  // Drops entries whose candidate is no longer current (pod gone, replaced or port changed).
  void Prune(const std::vector<Candidate>& current);

  const std::map<std::string, CacheEntry>& entries() const { return entries_; }
  const CacheTtls& ttls() const { return ttls_; }

 private:
  CacheTtls ttls_;
  std::map<std::string, CacheEntry> entries_;  // by Candidate::Key()
  bool rediscover_ = false;
};

}  // namespace gpuattr::discovery
