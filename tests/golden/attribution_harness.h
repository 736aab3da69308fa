// Test harness for attribution: a scenario folder (fixtures/scenarios/NAME, the fake
// apiserver's format) or inline exposition text → AttributionInput → Attribution → the text of
// the attribution family groups, rendered through the publish group table.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/text_serializer.h>

#include "gpuattr/attribution/attribution.h"
#include "gpuattr/expo/parser.h"
#include "gpuattr/kube/decode.h"
#include "gpuattr/publish/families.h"
#include "gpuattr/publish/snapshot.h"
#include "gpuattr/sources/classify.h"
#include "gpuattr/sources/dcgm.h"
#include "gpuattr/sources/process.h"
#include "support/paths.h"
#include "support/scenario.h"

namespace gpuattr::testing {

struct AttributionCase {
  std::string name;
  kube::ClusterObjects objects;
  std::vector<attribution::ExporterReadings> exporters;
};

// Parses one exporter body and reads it as dcgm or process (by content, as discovery does).
inline Result<attribution::ExporterReadings> ReadExporter(std::string ns, std::string pod,
                                                          std::string node, std::string_view body) {
  expo::Exposition ex;
  expo::Parse(body, ex);
  attribution::ExporterReadings e{std::move(ns), std::move(pod), std::move(node), {}};
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

inline Result<AttributionCase> LoadAttributionCase(const std::filesystem::path& dir) {
  auto sc = LoadScenario(dir);
  if (!sc) return sc.error();
  AttributionCase c;
  c.name = sc->name;
  for (const nlohmann::json& obj : sc->objects) {
    const std::string kind = obj.value("kind", "");
    if (kind == "Pod") {
      auto pod = kube::DecodePod(obj);
      if (!pod) return pod.error();
      c.objects.pods[pod->Key()] = std::move(*pod);
    } else if (kind == "Node") {
      auto node = kube::DecodeNode(obj);
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
    if (!e) return e.error();
    c.exporters.push_back(std::move(*e));
  }
  return c;
}

inline attribution::Attribution AttributeCase(const AttributionCase& c,
                                              const std::string& cluster = "test") {
  attribution::AttributionInput in{cluster, c.objects, c.exporters, {}};
  return attribution::Attribute(in);
}

// The families of the attribution groups only (not self-metrics, whose labels carry the build's
// version), through the real group table.
inline std::string RenderAttribution(const attribution::Attribution& a) {
  static const std::set<std::string_view> kGroups = {"devices", "pods", "namespaces", "node_power"};
  std::set<std::string> names;
  for (const publish::FamilyGroup* g : publish::FamilyGroups())
    if (kGroups.count(g->name))
      for (const publish::FamilySpec& f : g->families) names.insert(std::string(f.name));
  publish::Snapshot s;
  s.complete = true;
  publish::ClusterSnapshot cs;
  cs.cluster = a.cluster;
  cs.attribution = std::make_shared<attribution::Attribution>(a);
  s.clusters.push_back(std::move(cs));
  std::vector<prometheus::MetricFamily> families;
  for (auto& f : publish::BuildFamilies(s))
    if (names.count(f.name)) families.push_back(std::move(f));
  return prometheus::TextSerializer().Serialize(families);
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
