// The process_* self-metrics every exporter has (as the Prometheus client libraries write them),
// read from /proc/self at each scrape of /metrics and appended to the rendered exposition as its
// live tail (metrics/exposition.h, GzipTail). They carry no labels, not even `cluster`: they
// describe the gpuattr process. --once does not print them.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "gpuattr/metrics/families.h"

namespace gpuattr::metrics {

struct ProcessStats {
  std::optional<double> cpu_seconds;  // user + system
  std::optional<double> resident_bytes;
  std::optional<double> virtual_bytes;
  std::optional<double> open_fds;
  std::optional<double> max_fds;  // the soft RLIMIT_NOFILE
  std::optional<double> start_time_unix_seconds;
};

// The families, in output order (README's metric table lists them).
std::span<const FamilySpec> ProcessFamilies();

// What /proc/self says now. A value that cannot be read stays unknown (its series is left out).
ProcessStats ReadProcessStats();

// Prometheus text (0.0.4) of the known values: HELP, TYPE and the series of each family.
std::string RenderProcessMetrics(const ProcessStats& stats);

}  // namespace gpuattr::metrics
