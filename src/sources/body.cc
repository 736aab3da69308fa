#include "gpuattr/sources/body.h"

#include <algorithm>

#include "gpuattr/expo/parser.h"
#include "gpuattr/sources/dcgm.h"
#include "gpuattr/sources/inference.h"
#include "gpuattr/sources/process.h"

namespace gpuattr::sources {

BodyRead ReadBody(std::string_view body, BodyKind kind) {
  BodyRead r;
  expo::Exposition ex;
  expo::Limits limits;
  limits.max_body_bytes = std::max(limits.max_body_bytes, body.size());
  expo::Parse(body, ex, limits);
  r.parse_errors = ex.error_count;
  const std::string first_error = ex.errors.empty() ? "" : ex.errors.front().Describe();
  if (ex.samples.empty()) {
    r.reason = body.empty()         ? "empty body"
               : ex.error_count > 0 ? "no valid sample: " + std::to_string(ex.error_count) +
                                          " malformed line(s), " + first_error
                                    : "no sample in the body";
    return r;
  }
  switch (kind) {
    case BodyKind::kDcgm:
      r.readings = ReadDcgm(ex);
      break;
    case BodyKind::kProcess:
      r.readings = ReadProcess(ex);
      break;
    case BodyKind::kVllm:
    case BodyKind::kSglang:
      r.readings = ReadInference(ex);
      break;
    case BodyKind::kUnrecognised:
      r.reason = "target has no known kind";
      return r;
  }
  if (ex.error_count > 0)
    r.reason = std::to_string(ex.error_count) + " malformed line(s), " + first_error;
  return r;
}

}  // namespace gpuattr::sources
