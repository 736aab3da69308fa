#include "gpuattr/discovery/probe.h"

namespace gpuattr::discovery {

std::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kAccepted:
      return "accepted";
    case Outcome::kUnrecognised:
      return "unrecognised";
    case Outcome::kError:
      return "error";
    case Outcome::kPinned:
      return "pinned";
    case Outcome::kUntrusted:
      return "untrusted";
  }
  return "error";
}

ProbeVerdict FailedFetchVerdict(const FetchFacts& fetch) {
  ProbeVerdict v;
  v.http_status = fetch.http_status;
  v.outcome = Outcome::kError;
  v.reason = fetch.error.empty() ? "no response" : fetch.error;
  return v;
}

ProbeVerdict JudgeProbe(const Candidate& candidate, const FetchFacts& fetch,
                        std::string_view body) {
  if (!fetch.ok) return FailedFetchVerdict(fetch);
  ProbeVerdict v;
  v.http_status = fetch.http_status;
  sources::Classification c = sources::ClassifyBody(body);
  v.kind = c.kind;
  if (c.kind == sources::BodyKind::kUnrecognised) {
    v.outcome = Outcome::kUnrecognised;
    v.reason =
        body.empty() ? "unrecognised: empty body" : "unrecognised: first line \"" + c.reason + "\"";
    return v;
  }
  const std::string what = std::string(sources::BodyKindName(c.kind)) + " (" + c.reason + ")";
  const bool inference = c.kind == sources::BodyKind::kVllm || c.kind == sources::BodyKind::kSglang;
  const bool trusted = inference ? trust::InferenceTrusted(candidate.holds_gpu, candidate.pinned)
                                 : !candidate.trust.empty() || candidate.pinned;
  if (!trusted) {
    // Not read, and not probed again while the pod is unchanged (cache.h).
    v.outcome = Outcome::kUntrusted;
    v.reason =
        "untrusted: " + what + "; " +
        (inference ? trust::HowToTrustInference(candidate.namespace_, candidate.pod, candidate.port)
                   : candidate.trust_hint);
    return v;
  }
  v.outcome = candidate.pinned ? Outcome::kPinned : Outcome::kAccepted;
  v.reason = what;
  return v;
}

ProbeVerdict UntrustedWithoutFetch(const Candidate& candidate) {
  ProbeVerdict v;
  v.outcome = Outcome::kUntrusted;
  const bool inference_only = candidate.role == Role::kInference && !candidate.pinned;
  v.reason = "untrusted, not fetched: " +
             (inference_only
                  ? trust::HowToTrustInference(candidate.namespace_, candidate.pod, candidate.port)
                  : candidate.trust_hint);
  return v;
}

}  // namespace gpuattr::discovery
