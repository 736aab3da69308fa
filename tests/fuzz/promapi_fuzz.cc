// libFuzzer target for the query-API path: decodes an instant-query answer, repairs and
// de-duplicates its series and reads them as dcgm/process readings, as the fallback does.
#include <cstdint>
#include <string_view>

#include "gpuattr/sources/label_budget.h"
#include "gpuattr/sources/promapi.h"

#include "fuzz_check.h"

using gpuattr::fuzz::Check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuattr::sources;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto decoded = DecodeQueryResponse(body, "query API fuzz/prometheus:9090");
  if (!decoded.ok()) {
    Check(decoded.error().message.find("fuzz/prometheus:9090") != std::string::npos,
          "a decode error names the service");
    return 0;
  }
  PodLookup lookup;
  lookup.is_exporter = [](std::string_view, std::string_view pod) {
    return pod.find("exporter") != std::string_view::npos;
  };
  lookup.node_of = [](std::string_view, std::string_view pod) {
    return pod.size() % 2 ? std::string("node-a") : std::string();
  };
  std::vector<RepairedSeries> repaired;
  for (const QuerySeries& s : decoded->series) {
    // As ReadQueryAnswer does first: a series with an oversized or control-character label is
    // rejected whole (issue 25, label_budget.h).
    bool vetted = true;
    for (const auto& [name, value] : s.labels)
      vetted = vetted && LabelTextVerdict(name).empty() && LabelTextVerdict(value).empty();
    if (!vetted) continue;
    if (auto r = RepairSeries(s, lookup)) {
      for (const auto& [name, value] : r->labels)
        Check(!IsDroppedTargetLabel(name), "a dropped label survives repair");
      repaired.push_back(std::move(*r));
    }
  }
  const size_t before = repaired.size();
  const size_t dropped = DeduplicateReplicas(repaired);
  Check(dropped + repaired.size() == before, "de-duplication accounts for every series");
  auto nodes = ReadPromSeries(repaired);
  for (size_t i = 1; i < nodes.size(); ++i)
    Check(nodes[i - 1].node < nodes[i].node, "readings sorted by node, one per node");
  // The fallback's one call does the same steps.
  auto answer = ReadQueryAnswer(body, "query API fuzz/prometheus:9090", lookup);
  Check(answer.ok(), "a decodable answer reads");
  Check(answer->nodes.size() == nodes.size(), "ReadQueryAnswer reads the same nodes");
  Check(answer->invalid_series == decoded->invalid_series, "invalid series counted once");
  return 0;
}
