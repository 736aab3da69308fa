// The "discovery" family group: gpuattr_exporter_{up,scrape_duration_seconds,scrape_bytes,
// parse_errors}{cluster,namespace,pod,node,kind} and gpuattr_discovery_candidates{cluster,outcome}.
// Pure: built from a DiscoveryReport. (The status page's discovery section is report/'s.)
#pragma once

#include <span>

#include "gpuattr/discovery/report.h"
#include "gpuattr/metrics/families.h"

namespace gpuattr::metrics {

std::span<const FamilySpec> DiscoveryFamilySpecs();

// Adds the series of one cluster's report (the `cluster` label is report.cluster).
void AddDiscoveryFamilies(const discovery::DiscoveryReport& report, FamilyWriter& writer);

}  // namespace gpuattr::metrics
