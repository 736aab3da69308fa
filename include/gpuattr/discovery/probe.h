// Probing a candidate: one GET of its /metrics through the apiserver's pod proxy (made by
// scrape/read.h), then a verdict by content (sources/classify.h). The verdict is pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gpuattr/discovery/candidates.h"
#include "gpuattr/sources/classify.h"

namespace gpuattr::discovery {

// Outcome labels of gpuattr_discovery_candidates. Untrusted: a candidate that may speak in no
// role, never fetched; or a dcgm or per-process body from a pod that may only speak as an
// inference server, or an inference body from a pod that holds no GPU (docs/design.md#trust). It
// is not read, and not judged again while the pod and its trust are unchanged.
enum class Outcome : uint8_t { kAccepted, kUnrecognised, kError, kPinned, kUntrusted };
// "accepted", "unrecognised", "error", "pinned", "untrusted"
std::string_view OutcomeName(Outcome outcome);
inline constexpr Outcome kAllOutcomes[] = {Outcome::kAccepted, Outcome::kUnrecognised,
                                           Outcome::kError, Outcome::kPinned, Outcome::kUntrusted};

struct ProbeVerdict {
  Outcome outcome = Outcome::kError;
  sources::BodyKind kind = sources::BodyKind::kUnrecognised;
  // "dcgm (DCGM_FI_DEV_GPU_UTIL)", "unrecognised: first line ...", "HTTP 503: ..."
  std::string reason;
  int http_status = 0;
};

// What one GET brought, as discovery judges and remembers it (the reader's fetch, scrape/fetch.h,
// without its body): discovery makes no request.
struct FetchFacts {
  bool ok = false;      // a 2xx with a body within the cap
  int http_status = 0;  // 0 when no response arrived
  std::string error;    // when !ok: the reason, naming the permission for a 403
  double duration_seconds = 0;
  uint64_t bytes = 0;  // body bytes received
};

// The verdict on a fetch that brought no body: an error, with the fetch's reason.
ProbeVerdict FailedFetchVerdict(const FetchFacts& fetch);

// Pure: the verdict on a candidate's fetched /metrics (`body`, when fetch.ok). An accepted pinned
// candidate counts as "pinned"; a body of no known kind is "unrecognised"; no body is "error"; a
// body its pod may not speak for (Candidate::trust, holds_gpu) is "untrusted", with how to trust
// it.
ProbeVerdict JudgeProbe(const Candidate& candidate, const FetchFacts& fetch, std::string_view body);

// Pure: the verdict on a candidate that may speak in no role (TrustedInNoRole), given without a
// request: "untrusted", with how to trust it.
ProbeVerdict UntrustedWithoutFetch(const Candidate& candidate);

// True for outcomes that make the candidate a scrape target.
inline bool IsAccepted(Outcome o) { return o == Outcome::kAccepted || o == Outcome::kPinned; }

}  // namespace gpuattr::discovery
