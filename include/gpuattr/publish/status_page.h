// The HTML status page served at "/": the answer first (whose GPUs, idle holders, top pods,
// devices by node, health per card, pending pods), then clusters' and exporters' details. Built
// from the StatusView (view.h) that the terminal table, JSON and Markdown outputs share. Pure;
// every value from the snapshot is HTML-escaped; no external asset.
#pragma once

#include <string>
#include <string_view>

#include "gpuattr/publish/snapshot.h"
#include "gpuattr/publish/view.h"

namespace gpuattr::publish {

std::string HtmlEscape(std::string_view text);
std::string RenderStatusPage(const StatusView& view);
// `now_unix_seconds` lets the page say "12 s ago" without reading a clock itself.
std::string RenderStatusPage(const Snapshot& snapshot, double now_unix_seconds,
                             const ViewOptions& options = {});

}  // namespace gpuattr::publish
