// Why a line of an exposition was rejected (parser.cc): the hot path returns a small code and a
// view of the offending input; the message is built only for the errors that are kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpuattr/expo/parser.h"

namespace gpuattr::expo::detail {

enum class Fault : uint8_t {
  kNone,
  kLineTooLong,
  kExpectedName,       // token: what was found
  kAfterName,          // token: what followed the name
  kMissingName,        // label set without a metric name
  kNameTwice,          // two quoted names in one label set
  kBadLabelName,       // token: what was found
  kExpectedEquals,     // token: label name
  kExpectedQuote,      // token: label name
  kUnterminatedValue,  // token: label name
  kUnterminatedName,   // quoted name without its closing quote
  kInvalidUtf8Name,    // token: the quoted name
  kInvalidUtf8Value,   // token: label name
  kAfterLabelValue,    // token: label name
  kUnterminatedLabels,
  kTooManyLabels,  // count
  kMissingValue,
  kInvalidNumber,  // token
  kNumberRange,    // token
  kInvalidTimestamp,
  kTrailingText,
  kHelpWithoutName,
  kTypeWithoutName,
  kTypeWithoutType,  // token: family
  kInvalidType,      // token: the type word
};

struct Failure {
  Fault fault = Fault::kNone;
  std::string_view token;
  size_t count = 0;
};

// The message of a kept error: what was wrong, quoting at most 40 bytes of the input as printable
// ASCII.
std::string Describe(const Failure& failure, const Limits& limits);

}  // namespace gpuattr::expo::detail
