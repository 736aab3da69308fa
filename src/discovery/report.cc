#include "gpuattr/discovery/report.h"

namespace gpuattr::discovery {

DiscoveryReport MarkNotScraped(const DiscoveryReport& report, const std::string& reason) {
  DiscoveryReport out = report;
  for (ExporterStatus& e : out.exporters) {
    if (!e.up) continue;  // a down exporter keeps the reason it failed with
    e.up = false;
    e.http_status = 0;
    e.reason = reason;
  }
  return out;
}

}  // namespace gpuattr::discovery
