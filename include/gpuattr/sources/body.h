// Reading one fetched exporter body (pure): parse the text format, then read the samples as the
// exporter's kind (dcgm, process, vllm/sglang). The scrape of a known target and the probe that
// accepted a new one both end here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpuattr/sources/classify.h"
#include "gpuattr/sources/limits.h"
#include "gpuattr/sources/readings.h"

namespace gpuattr::sources {

struct BodyRead {
  std::optional<Readings> readings;  // absent: the body is unusable (see reason)
  // Why the body is unusable; for a usable body with malformed lines, how many and the first.
  std::string reason;
  uint64_t parse_errors = 0;
  std::string over_limit;  // the scrape.limits key the body broke ("" when within the limits)
};

// A body with some malformed lines is usable (the good lines count, the bad ones in
// parse_errors); an empty body, one with no valid sample, a body over one of `limits` (rejected
// whole, docs/design.md#limits), or a kind that has no reader is not.
BodyRead ReadBody(std::string_view body, BodyKind kind, const BodyLimits& limits = {});

}  // namespace gpuattr::sources
