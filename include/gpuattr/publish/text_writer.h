// The streaming exposition writer: every series is formatted straight into its family's buffer
// (no per-series objects, no stringstream); Finish() joins the families, in table order, into one
// Prometheus text (0.0.4) buffer. prometheus-cpp's TextSerializer over FamilyCollector is the
// reference it is tested against (tests/golden/render_equivalence_test.cc).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpuattr/publish/families.h"

namespace gpuattr::publish {

class TextWriter final : public FamilyWriter {
 public:
  TextWriter() = default;
  // Declares the families of `groups` in table order first.
  explicit TextWriter(std::span<const FamilyGroup* const> groups);
  ~TextWriter() override;
  TextWriter(const TextWriter&) = delete;
  TextWriter& operator=(const TextWriter&) = delete;

  void Add(const FamilySpec& spec, const Labels& labels, double value) override;
  // HELP, TYPE and the series of every family that has series, in declaration order.
  std::string Finish() &&;

 private:
  struct Buffer {
    char* data = nullptr;
    size_t size = 0;
    size_t capacity = 0;
  };
  struct Family {
    FamilySpec spec;
    Buffer body;
  };
  Family& Find(const FamilySpec& spec);
  std::vector<Family> families_;
  std::unordered_map<std::string_view, size_t> index_;
  size_t last_ = static_cast<size_t>(-1);
};

// The building blocks, tested on their own.
//
// A sample value as Prometheus reads it: NaN, +Inf, -Inf, or the fewest digits that read back as
// the same double (so no precision is lost), written in the notation of printf's %.16g, which is
// what prometheus-cpp writes (fixed for exponents -4..15, else d.ddde±XX). Returns the length;
// `out` must have room for kMaxValueChars.
inline constexpr size_t kMaxValueChars = 32;
size_t FormatValue(double value, char* out);
std::string FormatValue(double value);
// A label value inside its quotes: \ → \\, " → \", newline → \n; bytes that are not valid UTF-8
// become U+FFFD (Prometheus rejects a scrape with an invalid UTF-8 label value).
std::string EscapeLabelValue(std::string_view value);
// HELP text: \ → \\, newline → \n.
std::string EscapeHelp(std::string_view help);

}  // namespace gpuattr::publish
