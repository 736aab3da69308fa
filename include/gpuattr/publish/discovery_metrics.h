// The "discovery" family group: gpuattr_exporter_{up,scrape_duration_seconds,scrape_bytes,
// parse_errors}{cluster,namespace,pod,node,kind} and gpuattr_discovery_candidates{cluster,outcome},
// plus the status page's discovery section. Pure: built from a DiscoveryReport.
#pragma once

#include <span>
#include <string>

#include "gpuattr/discovery/report.h"
#include "gpuattr/publish/families.h"

namespace gpuattr::publish {

std::span<const FamilySpec> DiscoveryFamilySpecs();

// Adds the series of one cluster's report (the `cluster` label is report.cluster).
void AddDiscoveryFamilies(const discovery::DiscoveryReport& report, FamilyWriter& writer);

// HTML fragment for the status page: exporters with up/reason, every probed candidate with its
// outcome and reason, the pins, and the what-to-do text when nothing was found. Escaped.
std::string RenderDiscoverySection(const discovery::DiscoveryReport& report, double now_unix);

}  // namespace gpuattr::publish
