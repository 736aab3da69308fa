// THE XID table: NVIDIA driver error codes (Xid) with a short meaning and how bad they are.
// Meanings are condensed from NVIDIA's XID catalogue. Application faults (the driver killed or
// reset one context; the GPU itself is fine) are warnings; the rest point at the GPU, its memory,
// its firmware or its links, and are critical. An XID not listed here is critical too: the safe
// side for a code we cannot explain.
#include <algorithm>
#include <array>

#include "gpuattr/health/health.h"

namespace gpuattr::health {
namespace {

struct XidRow {
  int xid;
  Severity severity;
  std::string_view meaning;
};

constexpr Severity kW = Severity::kWarning;
constexpr Severity kC = Severity::kCritical;

// Sorted by xid (checked by a unit test).
constexpr std::array kXids{
    XidRow{8, kC, "GPU stopped processing (channel timeout)"},
    XidRow{13, kW, "Graphics Engine Exception (application fault)"},
    XidRow{31, kW, "GPU memory page fault (application fault)"},
    XidRow{32, kC, "Invalid or corrupted push buffer stream"},
    XidRow{38, kC, "Driver firmware error"},
    XidRow{43, kW, "GPU stopped processing (application fault)"},
    XidRow{44, kC, "Graphics Engine fault during context switch"},
    XidRow{45, kW, "Preemptive cleanup after previous errors (application fault)"},
    XidRow{48, kC, "Double-bit ECC error"},
    XidRow{54, kC, "Auxiliary power is not connected to the GPU"},
    XidRow{56, kC, "Display engine error"},
    XidRow{57, kC, "Error programming video memory interface"},
    XidRow{58, kC, "Unstable video memory interface detected"},
    XidRow{61, kC, "Internal micro-controller breakpoint/warning"},
    XidRow{62, kC, "Internal micro-controller halt"},
    XidRow{63, kC, "ECC page retirement or row remapping recording event"},
    XidRow{64, kC, "ECC page retirement or row remapping recording failure"},
    XidRow{68, kC, "Video processor exception"},
    XidRow{69, kC, "Graphics Engine class error"},
    XidRow{74, kC, "NVLink error"},
    XidRow{79, kC, "GPU has fallen off the bus"},
    XidRow{92, kC, "High single-bit ECC error rate"},
    XidRow{94, kC, "Contained ECC error"},
    XidRow{95, kC, "Uncontained ECC error"},
    XidRow{109, kC, "Context switch timeout"},
    XidRow{119, kC, "GSP RPC timeout"},
    XidRow{120, kC, "GSP error"},
    XidRow{154, kC, "GPU recovery action changed"},
};

}  // namespace

bool XidTableIsSorted() {
  return std::is_sorted(kXids.begin(), kXids.end(),
                        [](const XidRow& a, const XidRow& b) { return a.xid < b.xid; });
}

XidInfo LookupXid(int xid) {
  auto it = std::lower_bound(kXids.begin(), kXids.end(), xid,
                             [](const XidRow& row, int x) { return row.xid < x; });
  if (it == kXids.end() || it->xid != xid) return XidInfo{Severity::kCritical, {}};
  return XidInfo{it->severity, it->meaning};
}

std::string XidText(int xid) {
  XidInfo info = LookupXid(xid);
  std::string text = "XID " + std::to_string(xid);
  if (info.meaning.empty()) return text + " (see NVIDIA XID documentation)";
  return text + ": " + std::string(info.meaning);
}

}  // namespace gpuattr::health
