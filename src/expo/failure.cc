#include "failure.h"

#include <algorithm>

namespace gpuattr::expo::detail {
namespace {

// Quotes a piece of the input for an error message: at most 40 bytes, control and non-ASCII bytes
// as \xNN (messages stay printable ASCII whatever the exporter sent).
std::string QuoteInput(std::string_view s) {
  constexpr size_t kMax = 40;
  std::string out = "\"";
  size_t n = std::min(s.size(), kMax);
  for (size_t i = 0; i < n; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > kMax) out += "...";
  out += '"';
  return out;
}

}  // namespace

std::string Describe(const Failure& f, const Limits& limits) {
  switch (f.fault) {
    case Fault::kNone:
      return "no error";
    case Fault::kLineTooLong:
      return "line longer than " + std::to_string(limits.max_line_bytes) + " bytes";
    case Fault::kExpectedName:
      return "expected a metric name, found " + QuoteInput(f.token);
    case Fault::kAfterName:
      return "unexpected " + QuoteInput(f.token) + " after the metric name";
    case Fault::kMissingName:
      return "label set without a metric name";
    case Fault::kNameTwice:
      return "two metric names in one label set";
    case Fault::kBadLabelName:
      return "invalid label name at " + QuoteInput(f.token);
    case Fault::kExpectedEquals:
      return "expected '=' after label name " + QuoteInput(f.token);
    case Fault::kExpectedQuote:
      return "expected '\"' to open the value of label " + QuoteInput(f.token);
    case Fault::kUnterminatedValue:
      return "unterminated label value (label " + QuoteInput(f.token) + ")";
    case Fault::kUnterminatedName:
      return "unterminated quoted name";
    case Fault::kInvalidUtf8Name:
      return "invalid UTF-8 in quoted name " + QuoteInput(f.token);
    case Fault::kInvalidUtf8Value:
      return "invalid UTF-8 in the value of label " + QuoteInput(f.token);
    case Fault::kAfterLabelValue:
      return "expected ',' or '}' after the value of label " + QuoteInput(f.token);
    case Fault::kUnterminatedLabels:
      return "unterminated label set (missing '}')";
    case Fault::kTooManyLabels:
      return "too many labels (" + std::to_string(f.count) + " > " +
             std::to_string(limits.max_labels_per_sample) + ")";
    case Fault::kMissingValue:
      return "missing value";
    case Fault::kInvalidNumber:
      return "invalid number " + QuoteInput(f.token);
    case Fault::kNumberRange:
      return "number out of range " + QuoteInput(f.token);
    case Fault::kInvalidTimestamp:
      return "invalid timestamp " + QuoteInput(f.token);
    case Fault::kTrailingText:
      return "unexpected text after the timestamp: " + QuoteInput(f.token);
    case Fault::kHelpWithoutName:
      return "HELP line without a metric name";
    case Fault::kTypeWithoutName:
      return "TYPE line without a metric name";
    case Fault::kTypeWithoutType:
      return "TYPE line for " + QuoteInput(f.token) + " without a type";
    case Fault::kInvalidType:
      return "invalid metric type " + QuoteInput(f.token);
  }
  return "unknown error";
}

}  // namespace gpuattr::expo::detail
