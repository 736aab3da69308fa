// Prometheus text exposition (0.0.4, tolerant of OpenMetrics text) parsed into views over the body.
//
// The body must outlive the Exposition: names and label values are string_views into it, except
// values (and quoted UTF-8 names) that contained escapes, which point into Exposition::unescaped.
// Moving an Exposition keeps those views valid; copying one does not (copy the body and re-parse).
//
// Accepted: HELP/TYPE/UNIT lines, `# EOF` and other comments, label sets with optional blanks and
// a trailing comma, Prometheus 3 quoted names (`{"a.b",c="d"}`), escapes \\ \" \n in quoted
// strings (other escapes are kept verbatim), values as Go's ParseFloat reads them in practice
// (`NaN`, `+Inf`, `-Inf`, `Inf`, `1e3`, `.5`), an optional timestamp (checked, then ignored), an
// OpenMetrics exemplar after ` # ` (ignored), CRLF line ends and a last line without a newline.
// Rejected lines (recorded in `errors`, the rest is kept) include label values that are not valid
// UTF-8, which Prometheus would refuse downstream. docs/parser.md lists the error reasons.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpuattr::expo {

struct Label {
  std::string_view name;
  std::string_view value;  // unescaped
};

struct Sample {
  std::string_view name;
  double value = 0;
  uint32_t label_begin = 0;  // index into Exposition::labels
  uint32_t label_count = 0;
  uint32_t line = 0;  // 1-based line number in the body
};

enum class MetricType {
  kUnknown,
  kCounter,
  kGauge,
  kHistogram,
  kSummary,
  kUntyped,
  kInfo,
  kStateSet,
  kGaugeHistogram
};

struct TypeDecl {
  std::string_view family;
  MetricType type = MetricType::kUnknown;
};

struct ParseError {
  uint32_t line = 0;  // 1-based
  std::string reason;

  std::string Describe() const;  // "line 12: missing value"
};

// "counter", "gauge", ... as written in a TYPE line ("unknown" for kUnknown).
std::string_view MetricTypeName(MetricType type);

struct Limits {
  size_t max_body_bytes = 64u << 20;
  size_t max_line_bytes = 1u << 20;
  size_t max_labels_per_sample = 128;
  size_t max_errors_kept = 100;  // further errors are only counted
  // Parsing stops at the first sample beyond this many (which is not kept) and sets
  // Exposition::sample_limit_hit: memory stays bounded by the limit, not by the body.
  size_t max_samples = SIZE_MAX;
  // The same for the labels of the samples kept: parsing stops at the first sample that would
  // take them past this many (it is not kept) and sets Exposition::label_limit_hit.
  size_t max_labels = SIZE_MAX;
  // TYPE lines are checked either way; false: not kept in Exposition::types (a reader that
  // never looks at them does not pay for a body of TYPE lines).
  bool keep_types = true;
  // Use the bitmask fast path for plain label sets. Results are identical either way; off only
  // for differential tests and fuzzing of the general path.
  bool fast_path = true;
};

struct Exposition {
  std::vector<Sample> samples;
  std::vector<Label> labels;
  std::vector<TypeDecl> types;
  std::vector<ParseError> errors;  // the first Limits::max_errors_kept
  size_t error_count = 0;          // all malformed lines, kept or not
  bool truncated = false;          // body exceeded max_body_bytes; the prefix was parsed
  bool sample_limit_hit = false;   // more than max_samples samples: parsing stopped there
  bool label_limit_hit = false;    // more than max_labels labels: parsing stopped there
  // Stable storage for the names and label values with escapes of what is kept (a line that is
  // rejected leaves none behind).
  std::deque<std::string> unescaped;

  std::span<const Label> LabelsOf(const Sample& s) const {
    return {labels.data() + s.label_begin, s.label_count};
  }
  // The value of label `name` on `s`, or nullopt when the label is absent.
  std::optional<std::string_view> LabelValue(const Sample& s, std::string_view name) const;
  void Clear();  // keeps capacity for reuse
};

// Parses `body` into `out` (cleared first). Never throws; malformed lines are skipped and recorded.
void Parse(std::string_view body, Exposition& out, const Limits& limits = {});

}  // namespace gpuattr::expo
