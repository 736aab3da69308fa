// Attribution (docs/design.md#attribution): normalised exporter readings + Kubernetes objects → who
// uses which device, card, watt and byte. Pure: the same input always gives the same output, no
// I/O.
//
//   Attribution a = Attribute(input);   // devices, cards, pods, links, namespaces, node power
//
// Conventions: every quantity is in base units (bytes, watts, ratios 0..1, °C); std::optional
// means "unknown" and is never published as 0. Vectors are sorted by their keys, so output is
// deterministic.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gpuattr/attribution/types.h"
#include "gpuattr/kube/objects.h"
#include "gpuattr/sources/readings.h"

namespace gpuattr::attribution {

struct AttributionParams {
  double idle_utilization_below = 0.05;                 // ratio
  double idle_memory_at_least_bytes = 256.0 * 1048576;  // 256 MiB
};

struct AttributionInput {
  std::string cluster;
  const kube::ClusterObjects& objects;
  // Every exporter that answered this cycle; the dcgm and per-process ones are read here.
  const std::vector<sources::ExporterReadings>& exporters;
  AttributionParams params;
};

Attribution Attribute(const AttributionInput& input);

// The same, for a caller that owns the readings and frees them as soon as they are read: `read`
// is called once, after the last reading was read and before the output is built (nothing in
// attribution points into the readings from then on). At 1,000 nodes the readings are 18 MB and
// the daemon's memory peak is here (docs/performance.md#peak-rss-at-1000-nodes).
Attribution Attribute(const AttributionInput& input, const std::function<void()>& read);

}  // namespace gpuattr::attribution
