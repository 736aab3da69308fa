#include "gpuattr/sources/limits.h"

#include <limits>

namespace gpuattr::sources {

BodyLimits BodyLimits::Unlimited() {
  constexpr size_t kNone = std::numeric_limits<size_t>::max();
  return BodyLimits{kNone, kNone, kNone, kNone, kNone, kNone, kNone};
}

std::string LimitBreach::Describe() const {
  std::string what;
  if (limit == "samples")
    what = std::to_string(count) + " samples";
  else if (limit == "labels")
    what = "more than " + std::to_string(allowed) + " labels";
  else if (limit == "devices_per_node")
    what = std::to_string(count) + " devices on one node";
  else if (limit == "pods_per_device")
    what = std::to_string(count) + " pods on " + (where.empty() ? "one device" : where);
  else if (limit == "models_per_server")
    what = std::to_string(count) + " models on one server";
  else if (limit == "body_bytes")
    what = "more than " + std::to_string(allowed) + " bytes";
  else
    what = std::to_string(count) + " " + limit;
  if (limit != "pods_per_device" && !where.empty()) what += " (" + where + ")";
  return "rejected whole: " + what + ", over the limit of " + std::to_string(allowed) +
         " (scrape.limits." + limit + ")";
}

}  // namespace gpuattr::sources
