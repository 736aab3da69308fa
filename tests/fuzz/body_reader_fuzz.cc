// libFuzzer target for reading an exporter body within small limits (sources/limits.h) and vetting
// the readings (trust/vet.h), as discovery does with every body it fetches: a body over a limit is
// rejected whole; one within them yields readings within them; after vetting, no pod label names a
// pod off the exporter's node and no value is out of range.
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <variant>

#include "gpuattr/sources/body.h"
#include "gpuattr/trust/vet.h"

#include "fuzz_check.h"

namespace {

using gpuattr::fuzz::Check;
using namespace gpuattr;

constexpr sources::BodyLimits kLimits = {16384, 40, 4, 3, 2};

const kube::ClusterObjects& Cluster() {
  static const kube::ClusterObjects objects = [] {
    kube::ClusterObjects o;
    for (const char* n : {"node-a", "node-b"}) o.nodes[n].name = n;
    for (auto [ns, name, node] :
         {std::tuple("ml", "a", "node-a"), std::tuple("ml", "b", "node-b")}) {
      kube::Pod p;
      p.namespace_ = ns;
      p.name = name;
      p.node_name = node;
      o.pods[p.Key()] = p;
    }
    return o;
  }();
  return objects;
}

bool Ratio(const std::optional<double>& v) { return !v || (*v >= 0 && *v <= 1 + 1e-6); }
bool NonNegative(const std::optional<double>& v) { return !v || *v >= 0; }

void CheckPod(const std::optional<sources::PodLabels>& p) {
  if (!p) return;
  const kube::Pod* pod = Cluster().FindPod(p->id.namespace_, p->id.name);
  Check(pod != nullptr && pod->node_name == "node-a", "a kept pod label names a pod of the node");
}

void CheckWithinLimits(const sources::Readings& r) {
  if (const auto* d = std::get_if<sources::DcgmReadings>(&r)) {
    std::set<std::tuple<std::string, std::string, std::optional<std::string>>> devices;
    for (const auto& rec : d->records)
      devices.emplace(rec.device.gpu, rec.device.uuid, rec.device.gpu_instance);
    Check(devices.size() <= kLimits.devices_per_node, "devices within the limit");
  } else if (const auto* m = std::get_if<sources::InferenceReadings>(&r)) {
    Check(m->models.size() <= kLimits.models_per_server, "models within the limit");
  }
  Check(sources::StatsOf(r).samples <= kLimits.samples, "samples within the limit");
}

void CheckVetted(const sources::Readings& r) {
  if (const auto* d = std::get_if<sources::DcgmReadings>(&r)) {
    for (const auto& rec : d->records) {
      CheckPod(rec.pod);
      const auto& v = rec.values;
      Check(Ratio(v.gpu_util) && Ratio(v.gr_engine_active) && Ratio(v.sm_active) &&
                Ratio(v.sm_occupancy) && Ratio(v.tensor_active) && Ratio(v.dram_active),
            "vetted ratios in [0, 1]");
      Check(NonNegative(v.memory_used_bytes) && NonNegative(v.memory_free_bytes) &&
                NonNegative(v.memory_total_bytes) && NonNegative(v.power_watts),
            "vetted memory and power not negative");
      Check(!v.power_watts || *v.power_watts <= trust::kMaxCardWatts, "vetted power <= 5 kW");
      Check(!v.memory_used_bytes || !v.memory_total_bytes ||
                *v.memory_used_bytes <= *v.memory_total_bytes,
            "vetted used <= total");
    }
  } else if (const auto* p = std::get_if<sources::ProcessReadings>(&r)) {
    for (const auto& proc : p->processes) {
      CheckPod(proc.pod);
      Check(Ratio(proc.utilization) && NonNegative(proc.memory_bytes), "vetted process values");
    }
  } else if (const auto* m = std::get_if<sources::InferenceReadings>(&r)) {
    for (const auto& model : m->models) Check(Ratio(model.kv_cache_usage), "vetted KV cache");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  for (auto kind :
       {sources::BodyKind::kDcgm, sources::BodyKind::kProcess, sources::BodyKind::kVllm}) {
    sources::BodyRead read = sources::ReadBody(body, kind, kLimits);
    if (!read.readings) {
      Check(!read.reason.empty(), "an unusable body says why");
      Check(read.over_limit.empty() ||
                read.reason.find("scrape.limits." + read.over_limit) != std::string::npos,
            "a body over a limit names it");
      Check(read.over_limit != "body_bytes" || size > kLimits.body_bytes, "body_bytes only over");
      continue;
    }
    Check(read.over_limit.empty(), "readings only within the limits");
    Check(size <= kLimits.body_bytes, "a body over body_bytes is never read");
    CheckWithinLimits(*read.readings);
    std::vector<sources::ExporterReadings> all;
    all.push_back({"gpu-operator", "exporter-a", "node-a", *read.readings});
    all.push_back({"gpu-operator", "exporter-b", "node-a", std::move(*read.readings)});
    trust::VetReadings(all, Cluster());
    for (const auto& e : all) CheckVetted(e.readings);
    // The second exporter reports the first one's UUIDs: it keeps none of them.
    if (const auto* d = std::get_if<sources::DcgmReadings>(&all[1].readings))
      for (const auto& rec : d->records)
        Check(rec.device.uuid.empty(), "a duplicate UUID stays with the first exporter");
  }
  return 0;
}
