// GPU health (docs/design.md#health): the health fields dcgm-exporter reports for
// a card → issues with a severity and a human detail → one state per device; devices and the
// node object → one state per node. Pure: no I/O, the same input gives the same output.
//
//   HealthFields f;  for (each dcgm line of the card) f.Add(line);
//   DeviceHealth h = AssessDevice(f);           // MIG slices share their card's
//   std::vector<NodeHealth> n = AssessNodes(device_states, objects.nodes);
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/kube/objects.h"
#include "gpuattr/sources/readings.h"

namespace gpuattr::health {

enum class Severity { kWarning, kCritical };
std::string_view SeverityName(Severity severity);  // "warning", "critical"

// kUnknown means nothing was reported (never "ok"); the others are ordered best to worst.
enum class State { kOk, kWarning, kCritical, kUnknown };
std::string_view StateName(State state);  // "ok", "warning", "critical", "unknown"
inline constexpr State kAllStates[] = {State::kOk, State::kWarning, State::kCritical,
                                       State::kUnknown};

// ---- XID table (xid.cc) ----------------------------------------------------------------------

struct XidInfo {
  Severity severity = Severity::kCritical;
  std::string_view meaning;  // empty for an XID the table does not know
};
// Application faults (13, 31, 43, 45) are warnings; everything else, unknown XIDs included, is
// critical.
XidInfo LookupXid(int xid);
// "XID 79: GPU has fallen off the bus", or "XID 999 (see NVIDIA XID documentation)".
std::string XidText(int xid);
bool XidTableIsSorted();  // the table is searched by binary search (a unit test checks)

// ---- Device assessment (device.cc) -----------------------------------------------------------

// Clock event (throttle) reason bits that mean something is wrong; the others (0x1 idle, 0x2
// application clocks, 0x4 sw power cap, 0x10 board/sync boost, 0x100 display clocks) are normal.
inline constexpr uint64_t kThrottleHwSlowdown = 0x8;
inline constexpr uint64_t kThrottleSwThermal = 0x20;
inline constexpr uint64_t kThrottleHwThermal = 0x40;
inline constexpr uint64_t kThrottleHwPowerBrake = 0x80;

// The health fields of one card, gathered over all its lines (card-level fields may sit on any
// line of the card: a MIG slice's, a pod's).
struct HealthFields {
  std::optional<int> last_xid;  // the worst non-zero last XID over the lines; 0 when all were 0
  std::optional<double> ecc_dbe_volatile;             // max over lines
  std::optional<double> row_remap_failure;            // max
  std::optional<double> uncorrectable_remapped_rows;  // max
  std::optional<double> row_remap_pending;            // max
  std::optional<double> health_status;                // max: 0 pass, 10 warn, 20 fail
  std::optional<uint64_t> clocks_event_reasons;       // OR of the masks
  std::map<int, double> xid_error_counts;             // DCGM_EXP_XID_ERRORS_COUNT, max per xid

  void Add(const sources::DcgmValues& values, const std::map<int, double>& xid_counts);
  void Add(const sources::DcgmRecord& record) { Add(record.values, record.xid_error_counts); }
  // A field that can say "healthy" was exported. Clock event reasons alone cannot: they report
  // throttling, not faults, so a card exporting only them is unknown unless they show a problem.
  bool AnyHealthField() const;
};

struct Issue {
  std::string name;  // xid, ecc_dbe, row_remap_failed, rows_pending_remap, throttle_*, health_check
  Severity severity = Severity::kWarning;
  // The `detail` label: human text without changing numbers (no counts), so that a count going
  // up never starts a new series, e.g. "last XID 79: GPU has fallen off the bus".
  std::string detail;
  // The same for people, with the counts: "2 uncorrectable (double-bit) ECC errors since the
  // driver loaded" (status page).
  std::string text;
  auto operator<=>(const Issue&) const = default;
  bool operator==(const Issue&) const = default;
};

struct DeviceHealth {
  State state = State::kUnknown;
  std::vector<Issue> issues;  // critical first, then by name and detail
};

// Worst severity of the issues; ok when some health field was exported and nothing is wrong;
// unknown when no health field was exported and there is no issue.
DeviceHealth AssessDevice(const HealthFields& fields);

// ---- Node roll-up (node.cc) ------------------------------------------------------------------

struct DeviceState {
  std::string node;
  State state = State::kUnknown;
};

struct NodeHealth {
  std::string node;
  State state = State::kUnknown;
  // Why the node is not ok, for the status page: "nvidia.com/gpu: capacity 8, allocatable 7",
  // "2 critical devices", "1 warning device". Empty when ok or unknown.
  std::vector<std::string> reasons;
};

// The node advertises an nvidia.com/ resource (even at 0) in capacity or allocatable.
bool IsGpuNode(const kube::Node& node);
// nvidia.com/ resources whose capacity exceeds allocatable (the device plugin withdrew unhealthy
// devices), as "name: capacity C, allocatable A", sorted by name.
std::vector<std::string> WithdrawnGpuResources(const kube::Node& node);

// Worst reported state among the devices (unknown devices do not count), critical when any
// nvidia.com/ resource is withdrawn, unknown only when no device reports and none is withdrawn.
State RollUp(std::span<const State> device_states, bool resources_withdrawn);

// One NodeHealth per GPU node (IsGpuNode, or a device was seen there), sorted by node name.
std::vector<NodeHealth> AssessNodes(std::span<const DeviceState> devices,
                                    const std::map<std::string, kube::Node>& nodes);

}  // namespace gpuattr::health
