#include "support/readings_format.h"

#include <charconv>
#include <cmath>

namespace gpuattr::sources {
namespace {

void Quoted(std::string& out, std::string_view key, std::string_view value) {
  out += ' ';
  out += key;
  out += "=\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  out += '"';
}

void QuotedIfSet(std::string& out, std::string_view key, std::string_view value) {
  if (!value.empty()) Quoted(out, key, value);
}

void Value(std::string& out, std::string_view key, const std::optional<double>& v) {
  if (!v) return;
  out += "  ";
  out += key;
  out += '=';
  out += FormatNumber(*v);
  out += '\n';
}

}  // namespace

std::string FormatNumber(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Whole numbers in full (byte counts, token counters read better as 2000000 than 2e+06).
  if (value == std::trunc(value) && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<long long>(value));
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  if (ec != std::errc()) return "?";
  return std::string(buf, end);
}

std::string FormatStats(const ReadStats& s) {
  std::string out = "stats samples=" + std::to_string(s.samples) +
                    " used=" + std::to_string(s.samples_used) +
                    " ignored_families=" + std::to_string(s.ignored_families) +
                    " unknown_families=" + std::to_string(s.unknown_families) +
                    " invalid_values=" + std::to_string(s.invalid_values) +
                    " duplicates=" + std::to_string(s.duplicate_samples) +
                    " unkeyed=" + std::to_string(s.unkeyed_samples) + "\n";
  if (!s.ignored_family_names.empty()) {
    out += "ignored";
    for (const auto& n : s.ignored_family_names) out += ' ' + n;
    out += '\n';
  }
  if (!s.unknown_family_names.empty()) {
    out += "unknown";
    for (const auto& n : s.unknown_family_names) out += ' ' + n;
    out += '\n';
  }
  return out;
}

std::string FormatReadings(const DcgmReadings& readings) {
  std::string out = "dcgm records=" + std::to_string(readings.records.size()) + "\n";
  for (const DcgmRecord& r : readings.records) {
    const DeviceKey& d = r.device;
    out += "record line=" + std::to_string(r.first_line);
    Quoted(out, "gpu", d.gpu);
    if (d.gpu_instance) Quoted(out, "gpu_instance", *d.gpu_instance);
    Quoted(out, "uuid", d.uuid);
    QuotedIfSet(out, "hostname", d.hostname);
    out += '\n';
    if (!d.mig_profile.empty() || !d.model.empty() || !d.pci_bus_id.empty() || !d.device.empty() ||
        !r.driver_version.empty()) {
      out += " ";
      QuotedIfSet(out, "mig_profile", d.mig_profile);
      QuotedIfSet(out, "model", d.model);
      QuotedIfSet(out, "pci_bus_id", d.pci_bus_id);
      QuotedIfSet(out, "device", d.device);
      QuotedIfSet(out, "driver_version", r.driver_version);
      out += '\n';
    }
    if (r.pod) {
      out += "  pod";
      Quoted(out, "namespace", r.pod->id.namespace_);
      Quoted(out, "pod", r.pod->id.name);
      QuotedIfSet(out, "container", r.pod->container);
      QuotedIfSet(out, "pod_uid", r.pod->pod_uid);
      QuotedIfSet(out, "vgpu", r.pod->vgpu);
      out += '\n';
    } else {
      out += "  pod none\n";
    }
    for (int f = 0; f < kDcgmFieldCount; ++f) {
      const auto field = static_cast<DcgmField>(f);
      if (const auto* slot = r.values.Slot(field)) Value(out, DcgmFieldName(field), *slot);
    }
    if (!r.xid_err_code.empty() || !r.xid_err_msg.empty()) {
      out += " ";
      QuotedIfSet(out, "xid_err_code", r.xid_err_code);
      QuotedIfSet(out, "xid_err_msg", r.xid_err_msg);
      out += '\n';
    }
    for (const auto& [xid, count] : r.xid_error_counts) {
      out += "  xid_errors_count{xid=" + std::to_string(xid) + "}=" + FormatNumber(count) + "\n";
    }
  }
  out += FormatStats(readings.stats);
  return out;
}

std::string FormatReadings(const ProcessReadings& readings) {
  std::string out = "process processes=" + std::to_string(readings.processes.size()) +
                    " devices=" + std::to_string(readings.devices.size()) + "\n";
  for (const ProcessReading& p : readings.processes) {
    out += "process line=" + std::to_string(p.first_line);
    if (p.pod) {
      Quoted(out, "namespace", p.pod->id.namespace_);
      Quoted(out, "pod", p.pod->id.name);
      QuotedIfSet(out, "container", p.pod->container);
    } else {
      out += " pod=none";
    }
    Quoted(out, "uuid", p.uuid);
    Quoted(out, "gpu", p.gpu);
    Quoted(out, "pid", p.pid);
    out += '\n';
    Value(out, "memory_bytes", p.memory_bytes);
    Value(out, "utilization", p.utilization);
  }
  for (const ProcessDeviceReading& d : readings.devices) {
    out += "device line=" + std::to_string(d.first_line);
    Quoted(out, "uuid", d.uuid);
    Quoted(out, "gpu", d.gpu);
    out += '\n';
    Value(out, "memory_total_bytes", d.memory_total_bytes);
    Value(out, "utilization", d.utilization);
    Value(out, "power_watts", d.power_watts);
    Value(out, "temperature_celsius", d.temperature_celsius);
  }
  out += FormatStats(readings.stats);
  return out;
}

std::string FormatReadings(const InferenceReadings& readings) {
  std::string out = "inference models=" + std::to_string(readings.models.size()) + "\n";
  for (const InferenceReading& m : readings.models) {
    out += "model";
    Quoted(out, "engine", EngineKindName(m.kind));
    Quoted(out, "model", m.model);
    Quoted(out, "model_name", m.model_name);
    out += " engines=" + std::to_string(m.engines) + "\n";
    Value(out, "kv_cache_usage", m.kv_cache_usage);
    Value(out, "requests_running", m.requests_running);
    Value(out, "requests_waiting", m.requests_waiting);
    Value(out, "gen_throughput", m.gen_throughput);
    Value(out, "prompt_tokens_total", m.prompt_tokens_total);
    Value(out, "generation_tokens_total", m.generation_tokens_total);
    Value(out, "preemptions_total", m.preemptions_total);
    Value(out, "prefix_cache_hits_total", m.prefix_cache_hits_total);
    Value(out, "prefix_cache_queries_total", m.prefix_cache_queries_total);
    for (const auto& [reason, v] : m.request_success_total) {
      out +=
          "  request_success_total{finished_reason=\"" + reason + "\"}=" + FormatNumber(v) + "\n";
    }
    Value(out, "ttft_seconds_sum", m.ttft_seconds_sum);
    Value(out, "ttft_count", m.ttft_count);
  }
  out += FormatStats(readings.stats);
  return out;
}

}  // namespace gpuattr::sources
