#include "gpuattr/sources/body.h"

#include <algorithm>
#include <map>

#include "gpuattr/expo/parser.h"
#include "gpuattr/sources/aliases.h"
#include "gpuattr/sources/dcgm.h"
#include "gpuattr/sources/inference.h"
#include "gpuattr/sources/label_budget.h"
#include "gpuattr/sources/process.h"

namespace gpuattr::sources {
namespace {

// Whether the reader of `kind` uses lines of `family` (it skips the others unread).
bool ReaderUses(BodyKind kind, std::string_view family) {
  switch (kind) {
    case BodyKind::kDcgm:
      return IsDcgmFamily(family) || LookupDcgmField(family).has_value();
    case BodyKind::kProcess:
      return LookupProcessMetric(family).has_value();
    case BodyKind::kVllm:
    case BodyKind::kSglang:
      return LookupInferenceMetric(family).has_value();
    case BodyKind::kUnrecognised:
      break;
  }
  return false;
}

// Drops the lines the reader would use whose labels break the label budget (label_budget.h:
// too long, control or bidirectional characters) before anything of them is held; how many, by
// reason (docs/design.md#rejected-lines).
std::map<std::string, uint64_t> DropBadLabelLines(expo::Exposition& ex, BodyKind kind) {
  std::map<std::string, uint64_t> dropped;
  std::string_view family;
  bool used = false, looked = false;
  std::erase_if(ex.samples, [&](const expo::Sample& s) {
    if (!looked || s.name != family) {  // samples of one family are consecutive
      family = s.name;
      used = ReaderUses(kind, family);
      looked = true;
    }
    if (!used) return false;
    const std::string_view why = LabelsVerdict(ex.LabelsOf(s));
    if (why.empty()) return false;
    ++dropped[std::string(why)];
    return true;
  });
  return dropped;
}

}  // namespace

BodyRead ReadBody(std::string_view body, BodyKind kind, const BodyLimits& limits) {
  BodyRead r;
  auto reject = [&r](const LimitBreach& b) {
    r.readings.reset();
    r.reason = b.Describe();
    r.over_limit = b.limit;
    return r;
  };
  // The fetch stops at the cap already; a caller that read the body some other way gets the same.
  if (body.size() > limits.body_bytes)
    return reject({"body_bytes", limits.body_bytes, body.size(), ""});
  expo::Exposition ex;
  expo::Limits parse;
  parse.max_body_bytes = std::max(parse.max_body_bytes, body.size());
  parse.max_samples = limits.samples;
  parse.max_labels = limits.labels;
  parse.keep_types = false;  // no reader looks at TYPE lines
  expo::Parse(body, ex, parse);
  r.parse_errors = ex.error_count;
  if (ex.sample_limit_hit) return reject({"samples", limits.samples, limits.samples + 1, ""});
  if (ex.label_limit_hit) return reject({"labels", limits.labels, limits.labels + 1, ""});
  const std::string first_error = ex.errors.empty() ? "" : ex.errors.front().Describe();
  if (ex.samples.empty()) {
    r.reason = body.empty()         ? "empty body"
               : ex.error_count > 0 ? "no valid sample: " + std::to_string(ex.error_count) +
                                          " malformed line(s), " + first_error
                                    : "no sample in the body";
    return r;
  }
  const std::map<std::string, uint64_t> bad_labels = DropBadLabelLines(ex, kind);
  LimitBreach breach;
  switch (kind) {
    case BodyKind::kDcgm:
      r.readings = ReadDcgm(ex, limits, &breach);
      break;
    case BodyKind::kProcess:
      r.readings = ReadProcess(ex, limits, &breach);
      break;
    case BodyKind::kVllm:
    case BodyKind::kSglang:
      r.readings = ReadInference(ex, limits, &breach);
      break;
    case BodyKind::kUnrecognised:
      r.reason = "target has no known kind";
      return r;
  }
  if (!breach.limit.empty()) return reject(breach);
  for (const auto& [reason, n] : bad_labels) StatsOf(*r.readings).rejected[reason] += n;
  if (ex.error_count > 0)
    r.reason = std::to_string(ex.error_count) + " malformed line(s), " + first_error;
  return r;
}

}  // namespace gpuattr::sources
