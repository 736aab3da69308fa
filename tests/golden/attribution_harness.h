// Test harness for the stages: a scenario folder (fixtures/scenarios/NAME, the fake apiserver's
// format) or inline exposition text → a CycleInput → app::RunStages, the daemon's own stage
// function → the text of the family groups, rendered through the metrics group table.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/text_serializer.h>

#include "gpuattr/app/stages.h"
#include "gpuattr/attribution/attribution.h"
#include "gpuattr/expo/parser.h"
#include "gpuattr/kube/decode.h"
#include "gpuattr/metrics/families.h"
#include "gpuattr/model/snapshot.h"
#include "gpuattr/sources/classify.h"
#include "gpuattr/sources/dcgm.h"
#include "gpuattr/sources/process.h"
#include "support/family_collector.h"
#include "support/paths.h"
#include "support/scenario.h"
#include "test_paths.h"

namespace gpuattr::testing {

struct AttributionCase {
  std::string name;
  kube::ClusterObjects objects;
  std::vector<sources::ExporterReadings> exporters;
};

// Parses one exporter body and reads it as dcgm or process (by content, as discovery does).
inline Result<sources::ExporterReadings> ReadExporter(std::string ns, std::string pod,
                                                      std::string node, std::string_view body) {
  expo::Exposition ex;
  expo::Parse(body, ex);
  sources::ExporterReadings e{std::move(ns), std::move(pod), std::move(node), {}};
  switch (sources::ClassifyBody(body).kind) {
    case sources::BodyKind::kDcgm:
      e.readings = sources::ReadDcgm(ex);
      break;
    case sources::BodyKind::kProcess:
      e.readings = sources::ReadProcess(ex);
      break;
    default:
      return MakeError(ErrorCode::kInvalidArgument,
                       "exporter " + e.namespace_ + "/" + e.pod + ": not a GPU exporter body");
  }
  return e;
}

// `skip_non_gpu`: bodies that are no GPU exporter's (inference servers, garbage) are left out
// instead of failing the case, for tests that walk every scenario.
inline Result<AttributionCase> LoadAttributionCase(const std::filesystem::path& dir,
                                                   bool skip_non_gpu = false) {
  auto sc = LoadScenario(dir);
  if (!sc) return sc.error();
  AttributionCase c;
  c.name = sc->name;
  for (const nlohmann::json& obj : sc->objects) {
    const std::string kind = obj.value("kind", "");
    if (kind == "Pod") {
      auto pod = kube::DecodeText(&kube::DecodePod, obj.dump());
      if (!pod) return pod.error();
      c.objects.pods[pod->Key()] = std::move(*pod);
    } else if (kind == "Node") {
      auto node = kube::DecodeText(&kube::DecodeNode, obj.dump());
      if (!node) return node.error();
      c.objects.nodes[node->name] = std::move(*node);
    }
  }
  for (const auto& [key, bodies] : sc->exporter_bodies) {
    // key: namespace/pod:port
    size_t slash = key.find('/'), colon = key.rfind(':');
    std::string ns = key.substr(0, slash), pod = key.substr(slash + 1, colon - slash - 1);
    const kube::Pod* p = c.objects.FindPod(ns, pod);
    auto e = ReadExporter(ns, pod, p ? p->node_name : "", bodies.back());
    if (!e && skip_non_gpu) continue;
    if (!e) return e.error();
    c.exporters.push_back(std::move(*e));
  }
  return c;
}

// One cycle of the case through the daemon's stages, with fresh state (no earlier cycle).
inline model::CycleOutput RunCase(const AttributionCase& c, const std::string& cluster = "test",
                                  double now_unix = 1764460800) {
  app::CycleInput in;
  in.cluster = cluster;
  in.objects = std::make_shared<const kube::ClusterObjects>(c.objects);
  in.readings = c.exporters;
  in.now_unix = now_unix;
  app::StageState state;
  return app::RunStages(in, state, {});
}

inline attribution::Attribution AttributeCase(const AttributionCase& c,
                                              const std::string& cluster = "test") {
  return RunCase(c, cluster).attribution;
}

// The families of the attribution groups only (not self-metrics, whose labels carry the build's
// version), through the real group table.
// The text of the families of `groups` only, through the real group table, for one cluster.
inline std::string RenderGroups(model::ClusterSnapshot cluster,
                                const std::set<std::string_view>& groups) {
  std::set<std::string> names;
  for (const metrics::FamilyGroup* g : metrics::FamilyGroups())
    if (groups.count(g->name))
      for (const metrics::FamilySpec& f : g->families) names.insert(std::string(f.name));
  model::Snapshot s;
  s.complete = true;
  s.clusters.push_back(std::move(cluster));
  std::vector<prometheus::MetricFamily> families;
  for (auto& f : metrics::BuildFamilies(s))
    if (names.count(f.name)) families.push_back(std::move(f));
  return prometheus::TextSerializer().Serialize(families);
}

// The attribution groups' text of one cycle's output (its attribution and node health).
inline std::string RenderAttribution(const model::CycleOutput& out) {
  model::ClusterSnapshot cs;
  cs.cluster = out.attribution.cluster;
  cs.latest.output = std::make_shared<model::CycleOutput>(out);
  return RenderGroups(std::move(cs), {"devices", "pods", "namespaces", "node_power", "health"});
}

// An attribution that exercises every family and label of the attribution groups (all tiers, MIG,
// a time-sliced device, an unrequested pod, candidate pods of a whole GPU and a slice, an idle
// pod, health issues on a whole GPU and a slice), for metrics and report tests: the stages' output.
inline model::CycleOutput RichOutput(const std::string& cluster = "test") {
  static const kube::ClusterObjects* objects = [] {
    auto* o = new kube::ClusterObjects;
    kube::Pod cand;
    cand.namespace_ = "v";
    cand.name = "cand";
    cand.node_name = "n3";
    cand.phase = "Running";
    kube::Container c;
    c.limits["nvidia.com/gpu"] = 1;
    cand.containers.push_back(c);
    o->pods["v/cand"] = cand;
    kube::Pod nb;
    nb.namespace_ = "lab";
    nb.name = "nb";
    nb.uid = "uid-lab-nb";  // gpuattr_pod_info's uid (a/x and b/y have no object)
    nb.node_name = "n2";
    nb.phase = "Running";
    o->pods["lab/nb"] = nb;
    return o;
  }();
  const std::string l0 = "gpu=\"0\",UUID=\"U0\",modelName=\"M\",namespace=\"a\",pod=\"x\"";
  const std::string l1 =
      "gpu=\"1\",UUID=\"U1\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"7\",namespace=\"b\",pod=\"y\"";
  std::string dcgm;
  for (const std::string& l : {l0, l1})
    dcgm += "DCGM_FI_DEV_GPU_UTIL{" + l + "} 1\nDCGM_FI_PROF_SM_ACTIVE{" + l +
            "} 0.5\nDCGM_FI_PROF_PIPE_TENSOR_ACTIVE{" + l + "} 0.2\nDCGM_FI_PROF_DRAM_ACTIVE{" + l +
            "} 0.1\nDCGM_FI_DEV_FB_USED{" + l + "} 1000\nDCGM_FI_DEV_FB_FREE{" + l +
            "} 9000\nDCGM_FI_DEV_POWER_USAGE{" + l + "} 100\nDCGM_FI_DEV_GPU_TEMP{" + l + "} 50\n";
  dcgm += "DCGM_FI_DEV_XID_ERRORS{" + l0 + "} 31\n";  // a health issue on n1's GPU 0
  dcgm += "DCGM_FI_DEV_XID_ERRORS{" + l1 + "} 43\n";  // and on the MIG slice's card
  std::string proc =
      "gpu_process_memory_bytes{namespace=\"lab\",pod=\"nb\",pid=\"1\",gpu=\"0\",uuid=\"P0\"} "
      "1e9\ngpu_process_utilization_percent{namespace=\"lab\",pod=\"nb\",pid=\"1\",gpu=\"0\","
      "uuid=\"P0\"} 1\ngpu_total_memory_bytes{gpu=\"0\",uuid=\"P0\"} 8e9\n"
      "gpu_power_usage_watts{gpu=\"0\",uuid=\"P0\"} 80\n";
  // No pod labels: a whole GPU and a MIG slice, each with the node's GPU pods as candidates.
  std::string plain =
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"N0\"} 30\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"N1\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"3\"} "
      "20\n";
  AttributionCase c;
  c.objects = *objects;
  for (auto [node, body] :
       {std::pair<std::string, std::string>{"n1", dcgm}, {"n2", proc}, {"n3", plain}})
    if (auto e = ReadExporter("gpu", "exp-" + node, node, body))
      c.exporters.push_back(std::move(*e));
  return RunCase(c, cluster);
}

inline attribution::Attribution RichAttribution(const std::string& cluster = "test") {
  return RichOutput(cluster).attribution;
}

inline std::vector<std::filesystem::path> AttributionScenarioDirs() {
  std::vector<std::filesystem::path> out;
  auto root = std::filesystem::path(GPUATTR_SOURCE_DIR) / "fixtures" / "scenarios";
  if (!std::filesystem::is_directory(root)) return out;
  for (const auto& e : std::filesystem::directory_iterator(root))
    if (e.is_directory() && e.path().filename().string().starts_with("attr-"))
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gpuattr::testing
