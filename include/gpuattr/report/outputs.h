// The StatusView (view.h) for terminals, programs and tickets — the same rows as the status page:
//
//   gpuattr --once --output table      RenderTable: aligned sections for a terminal
//   gpuattr --once --output json       RenderSnapshotJson: one versioned object (docs/snapshot.md)
//   gpuattr --once --output markdown   RenderMarkdown: an incident report to paste into a ticket
//
// and served at /snapshot.json and /snapshot.md. Pure: the caller decides width and colour.
#pragma once

#include <string>

#include "gpuattr/report/view.h"

namespace gpuattr::report {

// The version of the JSON snapshot's schema (docs/snapshot.md): bumped when a field changes
// meaning or goes away; new fields may appear without a bump.
inline constexpr int kSnapshotSchemaVersion = 1;

struct TableOptions {
  size_t width = 0;    // terminal columns; 0: no limit (output to a file or pipe)
  bool color = false;  // ANSI colours for states (off with NO_COLOR or when not a terminal)
};

// The headline every output starts with: "8.37 GPU-equivalents in use by 36 pods, of 12 GPUs on
// 2 nodes; 1,791 W GPU power (1,333 W attributed to pods). 3 idle pods hold 2.2 GiB of GPU
// memory; 2 pending GPU pods. GPUs: 1 critical, 1 warning, 6 ok, 4 unknown."
std::string SummaryText(const StatusView& view);

std::string RenderTable(const StatusView& view, const TableOptions& options = {});
std::string RenderSnapshotJson(const StatusView& view);
std::string RenderMarkdown(const StatusView& view);

}  // namespace gpuattr::report
