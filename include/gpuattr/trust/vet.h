// Vetting what the exporters said, between reading the bodies and the stages
// (docs/design.md#rejected-lines). One pure function over one cycle's readings and the cluster's
// objects: what an exporter may not say is dropped, and every dropped line is counted by reason in
// its readings' ReadStats::rejected (published as gpuattr_exporter_rejected_lines).
//
//   bad_value          a value out of range: a ratio outside [0, 1] (after unit conversion),
//                      negative memory or power, power above 5,000 W per card, memory used
//                      above total. The value is dropped (unknown), the rest of the line's
//                      device stays.
//   unknown_pod        a per-pod label naming a pod the cluster does not have;
//   pod_on_other_node  ... or one that does not run on the exporter's node. An exporter speaks
//                      only for its own node (its pod's spec.nodeName, never the body's
//                      Hostname): the line's pod is dropped, the device stays, unattributed.
//   unknown_node       a query API's series for a node the cluster does not have (or none):
//                      dropped whole (an exporter pod's node is its pod's, always known).
//   duplicate_device   a device that two exporters of one kind report, by its UUID (cluster-wide)
//                      or by its GPU index and MIG instance on one node: the exporter of the
//                      strongest trust keeps it (pinned, then a trust rule, then a DaemonSet in
//                      an exporter namespace; ExporterReadings::rank), within a rank the first by
//                      namespace/name (then node); the other's lines for that device are
//                      dropped. (Attribution keys devices by node and index: a second exporter's
//                      "GPU 0" would otherwise merge into the first's.)
//   over_capacity      a card beyond the physical cards its node advertises (trust/capacity.h),
//                      counted per node and kind over the exporters in the order above, cards
//                      by GPU index; the card's lines are dropped. Pinned exporters are outside
//                      this rule (their cards are neither limited nor counted).
// Rejected before the readers hold anything of the line (sources/label_budget.h; sources/body.cc
// and the query API's reader):
//   label_too_long     a label over 256 bytes;
//   bad_label          a label with a control character or a bidirectional override;
// and by the query-API reader (trust/query_target.h):
//   untrusted_target   a series whose scrape target fails the exporter rule (or names a pod the
//                      cluster does not have);
//   no_target          a series that names no scrape target, from a query API that is not pinned.
// A line is one sample: a record's values set, one per field. Each dropped line is counted once,
// under the first of: unknown_node, duplicate_device, over_capacity, then bad_value and the pod
// reasons.
#pragma once

#include <string_view>
#include <vector>

#include "gpuattr/kube/objects.h"
#include "gpuattr/sources/label_budget.h"
#include "gpuattr/sources/readings.h"

namespace gpuattr::trust {

inline constexpr std::string_view kBadValue = "bad_value";
inline constexpr std::string_view kUnknownPod = "unknown_pod";
inline constexpr std::string_view kPodOnOtherNode = "pod_on_other_node";
inline constexpr std::string_view kUnknownNode = "unknown_node";
inline constexpr std::string_view kDuplicateDevice = "duplicate_device";
inline constexpr std::string_view kOverCapacity = "over_capacity";
inline constexpr std::string_view kUntrustedTarget = "untrusted_target";
inline constexpr std::string_view kNoTarget = "no_target";
// The label budget's, counted by the readers themselves (sources/label_budget.h).
using sources::kBadLabel;
using sources::kLabelTooLong;
// Every reason, in the order the families list them.
inline constexpr std::string_view kRejectReasons[] = {
    kBadLabel,     kBadValue,       kDuplicateDevice, kLabelTooLong, kNoTarget,
    kOverCapacity, kPodOnOtherNode, kUnknownNode,     kUnknownPod,   kUntrustedTarget};

// The most a card draws: a larger power reading is no measurement (docs/design.md#rejected-lines).
inline constexpr double kMaxCardWatts = 5000;

// Vets `readings` in place against `objects`. An exporter pod's readings without a node get its
// pod's spec.nodeName. Readings left with nothing are kept (their exporter answered).
void VetReadings(std::vector<sources::ExporterReadings>& readings,
                 const kube::ClusterObjects& objects);

}  // namespace gpuattr::trust
