#include "gpuattr/sources/classify.h"

#include "gpuattr/sources/aliases.h"
#include "gpuattr/util/strings.h"

namespace gpuattr::sources {
namespace {

constexpr size_t kReasonLineMax = 80;

// The metric name at the start of a sample line: up to '{', whitespace or the end.
std::string_view MetricName(std::string_view line) {
  size_t end = 0;
  while (end < line.size() && line[end] != '{' && line[end] != ' ' && line[end] != '\t') ++end;
  return line.substr(0, end);
}

// `prefix` is lower-case. No allocation: this runs on every line of bodies up to 64 MiB.
bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i]) return false;
  }
  return true;
}

bool IsDcgmSampleName(std::string_view name) {
  if (StartsWithIgnoreCase(name, "dcgm_fi_dev_") || StartsWithIgnoreCase(name, "dcgm_fi_prof_")) {
    return true;
  }
  // dcgm-exporter 1.x names (dcgm_gpu_utilization, ...) are in the alias table.
  return StartsWithIgnoreCase(name, "dcgm_") && LookupDcgmField(name).has_value();
}

// "# TYPE gpu_process_memory_bytes gauge" or "# HELP gpu_process_memory_bytes ...".
bool DeclaresProcessFamily(std::string_view comment) {
  comment.remove_prefix(1);
  comment = Trim(comment);
  if (!comment.starts_with("TYPE ") && !comment.starts_with("HELP ")) return false;
  comment = Trim(comment.substr(5));
  return MetricName(comment) == "gpu_process_memory_bytes";
}

// HAMi's vGPU monitor (v2.10.0 names, and the legacy ones of --legacy-metrics): per-container
// memory, a per-pod memory source like a per-process exporter. Its host lines alone (no vGPU
// container on the node) still say that nothing runs there, as an idle per-process exporter does.
bool IsHamiContainerMemory(std::string_view name) {
  return name == "hami_vgpu_memory_used_bytes" || name == "vGPU_device_memory_usage_in_bytes";
}
bool IsHamiHostMemory(std::string_view name) {
  return name == "hami_host_gpu_memory_used_bytes" || name == "HostGPUMemoryUsage";
}

// Printable ASCII only (the reason ends up on a status page and in logs), cut to `max` bytes.
std::string Excerpt(std::string_view line, size_t max) {
  std::string out;
  for (char c : line) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    const auto u = static_cast<unsigned char>(c);
    out.push_back(u >= 0x20 && u < 0x7f ? c : '?');
  }
  return out;
}

}  // namespace

std::string_view BodyKindName(BodyKind kind) {
  switch (kind) {
    case BodyKind::kUnrecognised:
      return "unrecognised";
    case BodyKind::kProcess:
      return "process";
    case BodyKind::kDcgm:
      return "dcgm";
    case BodyKind::kVllm:
      return "vllm";
    case BodyKind::kSglang:
      return "sglang";
  }
  return "unrecognised";
}

Classification ClassifyBody(std::string_view body) {
  std::string_view first_line;  // first non-comment, non-blank line
  std::string_view dcgm, vllm, sglang, hami_host;
  bool any_comment = false;
  bool process_declared = false;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t nl = body.find('\n', pos);
    if (nl == std::string_view::npos) nl = body.size();
    std::string_view line = Trim(body.substr(pos, nl - pos));
    pos = nl + 1;
    if (line.empty()) continue;
    if (line.front() == '#') {
      any_comment = true;
      // An idle node's per-process exporter declares the family but has no process to report.
      process_declared = process_declared || DeclaresProcessFamily(line);
      continue;
    }
    if (first_line.empty()) first_line = line;
    std::string_view name = MetricName(line);
    if (name == "gpu_process_memory_bytes") {
      return {BodyKind::kProcess, "found gpu_process_memory_bytes"};
    }
    if (IsHamiContainerMemory(name))
      return {BodyKind::kProcess, "found " + std::string(name) + " (HAMi vGPU monitor)"};
    if (hami_host.empty() && IsHamiHostMemory(name)) hami_host = name;
    if (dcgm.empty() && IsDcgmSampleName(name)) dcgm = name;
    if (vllm.empty() && name.starts_with("vllm:")) vllm = name;
    if (sglang.empty() && name.starts_with("sglang:")) sglang = name;
  }
  if (process_declared) {
    return {BodyKind::kProcess, "found gpu_process_memory_bytes declared (no process sample)"};
  }
  if (!hami_host.empty())
    return {BodyKind::kProcess,
            "found " + std::string(hami_host) + " (HAMi vGPU monitor, no vGPU container)"};
  if (!dcgm.empty()) return {BodyKind::kDcgm, "found " + Excerpt(dcgm, kReasonLineMax)};
  if (!vllm.empty()) return {BodyKind::kVllm, "found " + Excerpt(vllm, kReasonLineMax)};
  if (!sglang.empty()) return {BodyKind::kSglang, "found " + Excerpt(sglang, kReasonLineMax)};
  if (first_line.empty()) {
    return {BodyKind::kUnrecognised, any_comment ? "no samples, only comments" : "empty body"};
  }
  return {BodyKind::kUnrecognised, "no GPU exporter or inference metrics; first line: " +
                                       Excerpt(first_line, kReasonLineMax)};
}

}  // namespace gpuattr::sources
