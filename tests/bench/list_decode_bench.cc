// The initial LIST's share of a first cycle (docs/design.md#targets, scale): one 500-pod page of
// the generated cluster (support/generated_cluster.h, ~2.8 KB of JSON per pod, as the fake
// apiserver serves it), parsed into a JsonDocument and decoded into kube::Pod records as the
// ListWatcher and the ObjectCache do, next to nlohmann's DOM parse and lexer on the same bytes. A
// 1,000-node cluster lists 18,000 pods: 36 such pages.
//
//   build-release/tests/list_decode_bench
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuattr/kube/decode.h"
#include "support/generated_cluster.h"

namespace {

using nlohmann::json;

const std::string& PodPage() {
  static const std::string page = [] {
    gpuattr::testing::GeneratedClusterSpec spec;
    spec.nodes = 30;  // 30 × (16 GPU pods + 2 daemon pods) on average: 540 pods
    spec.inference_pods = 2;
    spec.notebook_pods = 2;
    gpuattr::testing::Scenario s = gpuattr::testing::GenerateCluster(spec);
    std::string items;
    size_t n = 0;
    for (const json& o : s.objects) {
      if (o.value("kind", "") != "Pod" || n == 500) continue;
      if (n++) items += ",";
      items += o.dump();
    }
    return R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[)" +
           items + "]}";
  }();
  return page;
}

// nlohmann's DOM, which gpuattr used before its own JsonDocument (kept for the comparison).
void BM_NlohmannParsePage(benchmark::State& state) {
  const std::string& page = PodPage();
  for (auto _ : state) benchmark::DoNotOptimize(json::parse(page));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * page.size()));
}

// What gpuattr does with a page: parse it into a JsonDocument and decode every pod from it.
void BM_ParseAndDecodePage(benchmark::State& state) {
  const std::string& page = PodPage();
  size_t pods = 0;
  for (auto _ : state) {
    auto doc = gpuattr::JsonDocument::Parse(page);
    pods = 0;
    for (gpuattr::JsonValue item : doc->Root().Find("items").Elements())
      pods += gpuattr::kube::DecodePod(item).ok();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * page.size()));
  state.counters["pods"] = static_cast<double>(pods);
}

// The parse alone.
void BM_JsonDocumentPage(benchmark::State& state) {
  const std::string& page = PodPage();
  for (auto _ : state) benchmark::DoNotOptimize(gpuattr::JsonDocument::Parse(page));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * page.size()));
}

// nlohmann's lexer alone: a SAX pass that builds nothing (the floor for any nlohmann-based
// decoder).
struct NullSax : nlohmann::json_sax<json> {
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }
};

void BM_LexPage(benchmark::State& state) {
  const std::string& page = PodPage();
  for (auto _ : state) {
    NullSax sax;
    benchmark::DoNotOptimize(json::sax_parse(page, &sax));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * page.size()));
}

BENCHMARK(BM_NlohmannParsePage)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LexPage)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_JsonDocumentPage)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParseAndDecodePage)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
