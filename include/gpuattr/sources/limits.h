// Limits per exporter body (docs/design.md#limits, config `scrape.limits`). A body over one of them
// is rejected whole (the exporter is down for the cycle, with a reason naming the limit and the
// count). They are enforced while parsing and reading: the parser stops at the first sample over
// the limit and the readers at the first device, pod or model over theirs, so that what a cycle
// holds in memory is bounded by the limits, not by what an exporter chose to send.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gpuattr::sources {

struct BodyLimits {
  size_t body_bytes = 16u << 20;  // the fetch stops there (scrape/fetch.h)
  size_t samples = 200'000;       // per body
  size_t devices_per_node = 128;  // whole GPUs and MIG slices (an exporter body is one node's)
  size_t pods_per_device = 64;    // distinct pods labelled on one device
  size_t models_per_server = 16;  // distinct models one inference server reports
  // Body bytes read in one cycle, every exporter together (scrape/read.cc, ReadPods): the reads
  // that would start past it wait for the next cycle, first in line then.
  size_t total_bytes = 256u << 20;
  // Labels of the samples kept from one body: what the parse tables hold besides the samples
  // (32 bytes each), which a body of tiny labels (`a="",`) could otherwise make 6 times its size.
  size_t labels = 1'000'000;

  // No limit at all: for tests and tools that read trusted captures.
  static BodyLimits Unlimited();
  bool operator==(const BodyLimits&) const = default;
};

// Which limit a body broke, and where reading stopped.
struct LimitBreach {
  std::string limit;   // the key under scrape.limits: "samples", "devices_per_node", ...
  size_t allowed = 0;  // the limit in force
  size_t count = 0;    // the count that broke it (reading stops at allowed + 1)
  std::string where;   // optional: "device 0 (GPU-1234)"

  // "rejected whole: 129 devices on one node, over the limit of 128
  // (scrape.limits.devices_per_node)"
  std::string Describe() const;
};

}  // namespace gpuattr::sources
