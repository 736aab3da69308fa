// libFuzzer target for the exposition parser: parses the input (twice, into a reused Exposition,
// and with tight limits, the sample limit among them) and checks the invariants the rest of
// gpuattr relies on.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "gpuattr/expo/parser.h"

#include "fuzz_check.h"

namespace {

using gpuattr::expo::Exposition;

using gpuattr::fuzz::Check;

// A view must lie inside the input or inside one of the Exposition's unescaped strings.
bool Inside(std::string_view v, std::string_view input, const Exposition& e) {
  auto within = [&](std::string_view outer) {
    return v.data() >= outer.data() && v.data() + v.size() <= outer.data() + outer.size();
  };
  if (v.empty()) return true;  // an empty view's pointer is never read
  if (within(input)) return true;
  for (const std::string& s : e.unescaped) {
    if (within(s)) return true;
  }
  return false;
}

void CheckInvariants(std::string_view input, const Exposition& e,
                     const gpuattr::expo::Limits& limits) {
  Check(e.errors.size() <= limits.max_errors_kept, "errors kept within max_errors_kept");
  Check(e.errors.size() <= e.error_count, "kept errors <= error_count");
  Check(e.errors.size() == e.error_count || e.errors.size() == limits.max_errors_kept,
        "every error is kept until the cap");
  size_t labels_used = 0;
  uint32_t prev_line = 0;
  for (const auto& s : e.samples) {
    Check(!s.name.empty(), "sample name not empty");
    Check(Inside(s.name, input, e), "sample name inside input");
    Check(s.line > prev_line, "one sample per line, in order");
    prev_line = s.line;
    Check(s.label_count <= limits.max_labels_per_sample, "labels per sample within limit");
    Check(static_cast<size_t>(s.label_begin) + s.label_count <= e.labels.size(),
          "label range inside labels");
    Check(s.label_begin == labels_used, "label ranges are contiguous");
    labels_used += s.label_count;
    for (const auto& l : e.LabelsOf(s)) {
      Check(!l.name.empty(), "label name not empty");
      Check(Inside(l.name, input, e), "label name inside input");
      Check(Inside(l.value, input, e), "label value inside input");
    }
    Check(e.LabelValue(s, "\xff\xfe-no-such-label") == std::nullopt, "absent label is nullopt");
  }
  Check(labels_used == e.labels.size(), "no orphan labels from rejected lines");
  for (const auto& t : e.types) {
    Check(!t.family.empty(), "type family not empty");
    Check(Inside(t.family, input, e), "type family inside input");
  }
  uint32_t prev_error_line = 0;
  for (const auto& err : e.errors) {
    Check(err.line > prev_error_line, "one error per line, in order");
    prev_error_line = err.line;
    Check(!err.reason.empty(), "error has a reason");
  }
}

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void CheckSame(const Exposition& a, const Exposition& b) {
  Check(a.samples.size() == b.samples.size(), "fast/general: same sample count");
  Check(a.labels.size() == b.labels.size(), "fast/general: same label count");
  Check(a.error_count == b.error_count, "fast/general: same error count");
  for (size_t i = 0; i < a.samples.size(); ++i) {
    const auto& x = a.samples[i];
    const auto& y = b.samples[i];
    Check(x.name == y.name && SameBits(x.value, y.value) && x.line == y.line &&
              x.label_begin == y.label_begin && x.label_count == y.label_count,
          "fast/general: same samples");
  }
  for (size_t i = 0; i < a.labels.size(); ++i) {
    Check(a.labels[i].name == b.labels[i].name && a.labels[i].value == b.labels[i].value,
          "fast/general: same labels");
  }
  for (size_t i = 0; i < a.errors.size(); ++i) {
    Check(a.errors[i].line == b.errors[i].line && a.errors[i].reason == b.errors[i].reason,
          "fast/general: same errors");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  Exposition e;
  gpuattr::expo::Limits defaults;
  gpuattr::expo::Parse(input, e, defaults);
  CheckInvariants(input, e, defaults);
  Check(!e.truncated, "small inputs are not truncated");
  size_t samples = e.samples.size();
  size_t errors = e.error_count;

  // Parsing again into the reused Exposition gives the same result.
  gpuattr::expo::Parse(input, e, defaults);
  CheckInvariants(input, e, defaults);
  Check(e.samples.size() == samples && e.error_count == errors, "re-parse is deterministic");

  // The bitmask fast path must give exactly what the general path gives.
  gpuattr::expo::Limits general = defaults;
  general.fast_path = false;
  Exposition g;
  gpuattr::expo::Parse(input, g, general);
  CheckInvariants(input, g, general);
  CheckSame(e, g);

  // Tight limits exercise the limit paths.
  gpuattr::expo::Limits tight;
  tight.max_body_bytes = size / 2;
  tight.max_line_bytes = 64;
  tight.max_labels_per_sample = 2;
  tight.max_errors_kept = 3;
  tight.max_samples = 3;
  gpuattr::expo::Parse(input, e, tight);
  CheckInvariants(input.substr(0, tight.max_body_bytes), e, tight);
  Check(e.truncated == (size > tight.max_body_bytes), "truncated flag matches the body size");
  Check(e.samples.size() <= tight.max_samples, "samples within max_samples");
  Check(!e.sample_limit_hit || e.samples.size() == tight.max_samples,
        "the sample limit stops parsing right at the limit");

  // The sample limit keeps a prefix of what an unlimited parse gives.
  gpuattr::expo::Limits capped = defaults;
  capped.max_samples = samples / 2;
  Exposition c;
  gpuattr::expo::Parse(input, c, capped);
  CheckInvariants(input, c, capped);
  Check(c.sample_limit_hit == (samples > capped.max_samples), "sample_limit_hit iff over");
  Check(c.samples.size() == std::min(samples, capped.max_samples), "capped sample count");
  gpuattr::expo::Parse(input, e, defaults);
  for (size_t i = 0; i < c.samples.size(); ++i)
    Check(c.samples[i].name == e.samples[i].name && c.samples[i].line == e.samples[i].line,
          "capped samples are the first ones");
  return 0;
}
