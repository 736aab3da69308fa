// What a label from a body may hold (docs/design.md#rejected-lines): a value of at most 256 bytes,
// with no control character (C0, DEL, C1) and no bidirectional override or isolate (U+202A-U+202E,
// U+2066-U+2069). A label value is copied into readings, the snapshot and every output: a 1 MiB
// model name served by a dozen pods made a 189 MB /metrics, and ESC, BEL or U+202E reach a
// terminal or reorder a table. A line with such a label is rejected whole, counted by reason in
// gpuattr_exporter_rejected_lines: label_too_long or bad_label. Label names are held to the same
// rule (the exposition parser allows only [a-zA-Z0-9_:] in them; a query API's JSON allows
// anything). Pure.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "gpuattr/expo/parser.h"

namespace gpuattr::sources {

inline constexpr std::string_view kBadLabel = "bad_label";
inline constexpr std::string_view kLabelTooLong = "label_too_long";
inline constexpr size_t kMaxLabelBytes = 256;

// "" when `text` may be held; else kLabelTooLong (over kMaxLabelBytes) or kBadLabel (a control
// character or a bidirectional override or isolate). Length is checked first.
std::string_view LabelTextVerdict(std::string_view text);

// The first reason any label of a line (name or value) gives; "" when none does.
std::string_view LabelsVerdict(std::span<const expo::Label> labels);

}  // namespace gpuattr::sources
