// How many cards a node may have (docs/design.md#rejected-lines): an exporter that reports more
// cards than its node advertises is inventing some (issue 25: GPUs 5 and 6 at 4,999 W, with a fake
// XID 79, on a node with nvidia.com/gpu: 2). Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "gpuattr/kube/objects.h"

namespace gpuattr::trust {

// The physical cards `node` advertises: its device-plugin resources (nvidia.com/gpu,
// nvidia.com/mig-*, other nvidia.com/gpu.*; the larger of capacity and allocatable; time-slicing
// replicas divided by the node's replicas per device, as allocation counts them, each replica a
// card when the node does not say how many it makes of one) plus the cards of the
// gpu.nvidia.com DRA ResourceSlices bound to it (a card's GPU device and its MIG devices
// are one card). An upper bound: a MIG slice counts as a card. nullopt when nothing bounds it:
// no Node object, or a node that advertises no nvidia.com/ resource (not even at 0) and has no
// DRA GPU device (a node without the device plugin, whose exporter is the only witness).
std::optional<int64_t> AdvertisedCards(const kube::ClusterObjects& objects, std::string_view node);

}  // namespace gpuattr::trust
