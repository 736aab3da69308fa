// The HTML status page served at "/": clusters, up/down, last cycle, errors. Pure; every value
// from the snapshot is HTML-escaped.
#pragma once

#include <string>
#include <string_view>

#include "gpuattr/publish/snapshot.h"

namespace gpuattr::publish {

std::string HtmlEscape(std::string_view text);
// `now_unix_seconds` lets the page say "12 s ago" without reading a clock itself.
std::string RenderStatusPage(const Snapshot& snapshot, double now_unix_seconds);

}  // namespace gpuattr::publish
