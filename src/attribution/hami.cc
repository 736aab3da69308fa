// Reading HAMi's pod annotation (hami.h): a small hand parser with every bound checked, since the
// text comes from whoever can write a pod's annotations.
#include "gpuattr/attribution/hami.h"

#include <algorithm>
#include <charconv>

namespace gpuattr::attribution {
namespace {

constexpr size_t kMaxUuidBytes = 128;

Error Malformed(std::string what) {
  return MakeError(ErrorCode::kInvalidArgument,
                   std::string(kHamiAllocatedAnnotation) + ": " + std::move(what));
}

bool NonNegative(std::string_view v, int64_t max, int64_t& out) {
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  return ec == std::errc() && p == v.data() + v.size() && out >= 0 && out <= max;
}

// "<UUID>,<type>,<mem>,<cores>" (without the closing ':').
Result<HamiDevice> ParseDevice(std::string_view entry, size_t n) {
  const std::string where = "device " + std::to_string(n + 1);
  std::string_view fields[4];
  size_t count = 0;
  for (size_t start = 0;;) {
    const size_t comma = entry.find(',', start);
    if (count == 4) return Malformed(where + " has more than 4 fields");
    fields[count++] = entry.substr(start, comma == std::string_view::npos ? comma : comma - start);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (count != 4) return Malformed(where + " has " + std::to_string(count) + " fields, not 4");
  HamiDevice d;
  const std::string_view uuid = fields[0];
  if (uuid.empty() || uuid.size() > kMaxUuidBytes ||
      !std::all_of(uuid.begin(), uuid.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               c == '-' || c == '_';
      }))
    return Malformed(where + " has no valid UUID");
  d.uuid = std::string(uuid);
  if (fields[1].empty()) return Malformed(where + " has no device type");
  // HAMi parses both as int32; memory in MiB (no card has 2^31 MiB), cores in percent.
  if (!NonNegative(fields[2], 2147483647, d.memory_mib))
    return Malformed(where + " has an invalid memory field");
  if (!NonNegative(fields[3], 100, d.cores_percent))
    return Malformed(where + " has an invalid cores field (0 to 100)");
  return d;
}

}  // namespace

Result<std::vector<HamiDevice>> ParseHamiAllocation(std::string_view text) {
  if (text.size() > kHamiMaxAnnotationBytes)
    return Malformed("longer than " + std::to_string(kHamiMaxAnnotationBytes) + " bytes");
  std::vector<HamiDevice> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find_first_of(":;", start);
    if (end == std::string_view::npos)
      return Malformed("device " + std::to_string(out.size() + 1) + " is not closed by ':'");
    std::string_view entry = text.substr(start, end - start);
    start = end + 1;
    if (entry.empty()) continue;  // ";" closing a container, or a container with no device
    if (text[end] == ';')
      return Malformed("device " + std::to_string(out.size() + 1) + " is not closed by ':'");
    if (out.size() == kHamiMaxDevices)
      return Malformed("more than " + std::to_string(kHamiMaxDevices) + " devices");
    auto d = ParseDevice(entry, out.size());
    if (!d.ok()) return d.error();
    out.push_back(std::move(*d));
  }
  if (out.empty()) return Malformed("names no device");
  return out;
}

double HamiFraction(const HamiDevice& d, double memory_total_mib) {
  const double cores = static_cast<double>(d.cores_percent) / 100;
  if (memory_total_mib <= 0) return d.cores_percent > 0 ? std::min(1.0, cores) : -1;
  const double memory = static_cast<double>(d.memory_mib) / memory_total_mib;
  return std::clamp(std::max(memory, cores), 0.0, 1.0);
}

}  // namespace gpuattr::attribution
