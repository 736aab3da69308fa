// The HTML status page served at "/": the answer first (whose GPUs, idle holders, top pods,
// devices by node, health per card, pending pods), then clusters' and exporters' details. Built
// from the StatusView (view.h) that the terminal table, JSON and Markdown outputs share. Pure;
// every value from the snapshot is HTML-escaped; no external asset.
#pragma once

#include <string>
#include <string_view>

#include "gpuattr/model/snapshot.h"
#include "gpuattr/report/view.h"

namespace gpuattr::report {

std::string HtmlEscape(std::string_view text);
std::string RenderStatusPage(const StatusView& view);

// One cluster's discovery, from the view's rows: what was listed and probed, how the GPU series
// were read, the exporters with up and reason, every probed candidate with its outcome and
// reason, the pins, and what to do when nothing was found. Escaped.
std::string RenderDiscoverySection(const StatusView& view, const DiscoveryRow& discovery);
// The same for one report alone (its rows as BuildDiscoveryView makes them).
std::string RenderDiscoverySection(const discovery::DiscoveryReport& report, double now_unix);
// `now_unix_seconds` lets the page say "12 s ago" without reading a clock itself.
std::string RenderStatusPage(const model::Snapshot& snapshot, double now_unix_seconds,
                             const ViewOptions& options = {});

}  // namespace gpuattr::report
