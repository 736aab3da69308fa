// docs/design.md#targets, scale: a synthetic 1,000-node cluster (8 GPUs per node, half of the nodes
// MIG-partitioned, ~16,000 GPU pods) through the pure stages of one cycle: parse and read every
// node's dcgm-exporter body, then the daemon's stage function (app::RunStages: attribute,
// allocate, node health, inference, ledger), render /metrics. Attribute and Allocate are also
// timed alone. The HTTP side (proxy GETs through the apiserver) is not included: this measures
// gpuattr's own work per cycle.
//
//   build/tests/cycle_scale_bench --benchmark_counters_tabular=true
//
// Reported: time per stage and for the whole pipeline, bytes parsed, series rendered, peak RSS.
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <prometheus/text_serializer.h>
#include <sys/resource.h>

#include <algorithm>

#include <memory>
#include <string>
#include <vector>

#include "gpuattr/accounting/accounting.h"
#include "gpuattr/accounting/prices.h"
#include "gpuattr/accounting/teams.h"
#include "gpuattr/allocation/allocation.h"
#include "gpuattr/allocation/types.h"
#include "gpuattr/app/stages.h"
#include "gpuattr/attribution/attribution.h"
#include "gpuattr/attribution/node_shape.h"
#include "gpuattr/expo/parser.h"
#include "gpuattr/kube/objects.h"
#include "gpuattr/ledger/ledger.h"
#include "gpuattr/metrics/exposition.h"
#include "gpuattr/metrics/families.h"
#include "gpuattr/metrics/store.h"
#include "gpuattr/metrics/text_writer.h"
#include "gpuattr/model/snapshot.h"
#include "gpuattr/sources/dcgm.h"
#include "support/family_collector.h"

namespace {

using namespace gpuattr;

constexpr int kNodes = 1000;
constexpr int kGpusPerNode = 8;
// MIG nodes split every card into one 3g.40gb and two 2g.20gb slices: 24 pods per node.
struct Slice {
  const char* profile;
  const char* instance;
};
constexpr Slice kSlices[] = {{"3g.40gb", "1"}, {"2g.20gb", "5"}, {"2g.20gb", "6"}};

bool IsMigNode(int n) { return n % 2 == 1; }
std::string NodeName(int n) { return "gpu-node-" + std::to_string(n); }

struct Cluster {
  std::vector<std::string> bodies;  // one dcgm-exporter body per node
  kube::ClusterObjects objects;
  std::shared_ptr<const kube::ClusterObjects> shared_objects;  // the same, as the stages take it
  size_t bytes = 0;
};

// One device's dcgm lines (power and temperature on every line of the card, as dcgm repeats them).
void AppendDevice(std::string& out, int n, int g, const Slice* slice, const std::string& ns,
                  const std::string& pod, int seed) {
  std::string labels = "gpu=\"" + std::to_string(g) + "\",UUID=\"GPU-" + std::to_string(n) + "-" +
                       std::to_string(g) + "\",pci_bus_id=\"00000000:" + std::to_string(10 + g) +
                       ":00.0\",device=\"nvidia" + std::to_string(g) +
                       "\",modelName=\"NVIDIA A100-SXM4-80GB\",Hostname=\"" + NodeName(n) + "\"";
  if (slice)
    labels += std::string(",GPU_I_PROFILE=\"") + slice->profile + "\",GPU_I_ID=\"" +
              slice->instance + "\"";
  labels += ",container=\"main\",namespace=\"" + ns + "\",pod=\"" + pod + "\"";
  const int util = (seed * 37) % 100;
  out += "DCGM_FI_PROF_GR_ENGINE_ACTIVE{" + labels + "} 0." + std::to_string(util) + "\n";
  if (!slice) out += "DCGM_FI_DEV_GPU_UTIL{" + labels + "} " + std::to_string(util) + "\n";
  out += "DCGM_FI_DEV_FB_USED{" + labels + "} " + std::to_string(1000 + seed % 30000) + "\n";
  out += "DCGM_FI_DEV_FB_FREE{" + labels + "} " + std::to_string(40000 - seed % 30000) + "\n";
  out += "DCGM_FI_DEV_POWER_USAGE{" + labels + "} " + std::to_string(90 + seed % 300) + ".5\n";
  out += "DCGM_FI_DEV_GPU_TEMP{" + labels + "} " + std::to_string(40 + seed % 40) + "\n";
}

kube::Pod GpuPod(std::string ns, std::string name, std::string node, std::string resource) {
  kube::Pod p;
  p.namespace_ = std::move(ns);
  p.name = std::move(name);
  p.node_name = std::move(node);
  p.phase = "Running";
  p.all_containers_ready = true;
  kube::Container c;
  c.name = "main";
  c.image = "registry.example/trainer:1";
  c.limits[resource] = 1;
  c.requests[resource] = 1;
  p.containers.push_back(std::move(c));
  return p;
}

const Cluster& Synthetic() {
  static const Cluster* cluster = [] {
    auto* c = new Cluster;
    int seed = 0;
    for (int n = 0; n < kNodes; ++n) {
      kube::Node node;
      node.name = NodeName(n);
      std::string body =
          "# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n"
          "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n";
      for (int g = 0; g < kGpusPerNode; ++g) {
        if (!IsMigNode(n)) {
          const std::string ns = "team-" + std::to_string(seed % 40);
          const std::string pod = "train-" + std::to_string(seed);
          AppendDevice(body, n, g, nullptr, ns, pod, seed);
          c->objects.pods.emplace(ns + "/" + pod, GpuPod(ns, pod, node.name, "nvidia.com/gpu"));
          ++seed;
          continue;
        }
        for (const Slice& s : kSlices) {
          const std::string ns = "team-" + std::to_string(seed % 40);
          const std::string pod = "nb-" + std::to_string(seed);
          AppendDevice(body, n, g, &s, ns, pod, seed);
          c->objects.pods.emplace(
              ns + "/" + pod,
              GpuPod(ns, pod, node.name, std::string("nvidia.com/mig-") + s.profile));
          ++seed;
        }
      }
      // A fifth of the nodes are spot: the price rules below price them apart.
      node.labels = {{"cloud.google.com/gke-spot", n % 5 == 0 ? "true" : "false"}};
      if (IsMigNode(n)) {
        node.capacity = node.allocatable = {{"nvidia.com/mig-3g.40gb", kGpusPerNode},
                                            {"nvidia.com/mig-2g.20gb", 2 * kGpusPerNode}};
      } else {
        node.capacity = node.allocatable = {{"nvidia.com/gpu", kGpusPerNode}};
      }
      c->objects.nodes.emplace(node.name, node);
      kube::Pod exporter;
      exporter.namespace_ = "gpu-operator";
      exporter.name = "nvidia-dcgm-exporter-" + std::to_string(n);
      exporter.node_name = node.name;
      exporter.phase = "Running";
      c->objects.pods.emplace(exporter.Key(), exporter);
      c->bytes += body.size();
      c->bodies.push_back(std::move(body));
    }
    // 40 namespaces, two to a team (accounting.namespace_labels: team).
    for (int t = 0; t < 40; ++t) {
      kube::Namespace ns;
      ns.name = "team-" + std::to_string(t);
      ns.labels = {{"team", "team-" + std::to_string(t / 2)}};
      c->objects.namespaces.emplace(ns.name, ns);
    }
    c->shared_objects = std::make_shared<const kube::ClusterObjects>(c->objects);
    return c;
  }();
  return *cluster;
}

std::vector<sources::ExporterReadings> ParseAndRead(const Cluster& c) {
  std::vector<sources::ExporterReadings> out;
  out.reserve(c.bodies.size());
  expo::Exposition e;
  for (size_t n = 0; n < c.bodies.size(); ++n) {
    e = expo::Exposition{};
    (void)expo::Parse(c.bodies[n], e);
    out.push_back({"gpu-operator", "nvidia-dcgm-exporter-" + std::to_string(n),
                   NodeName(static_cast<int>(n)), sources::ReadDcgm(e)});
  }
  return out;
}

double PeakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void Counters(benchmark::State& state) {
  const Cluster& c = Synthetic();
  state.counters["nodes"] = kNodes;
  state.counters["pods"] = static_cast<double>(c.objects.pods.size() - kNodes);
  state.counters["peak_rss_MiB"] = PeakRssMiB();
}

void BM_ParseAndRead(benchmark::State& state) {
  const Cluster& c = Synthetic();
  for (auto _ : state) benchmark::DoNotOptimize(ParseAndRead(c));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.bytes));
  Counters(state);
}

void BM_Attribute(benchmark::State& state) {
  const Cluster& c = Synthetic();
  const auto readings = ParseAndRead(c);
  for (auto _ : state) {
    attribution::AttributionInput in{"scale", c.objects, readings, {}};
    benchmark::DoNotOptimize(attribution::Attribute(in));
  }
  Counters(state);
}

void BM_Allocate(benchmark::State& state) {
  const Cluster& c = Synthetic();
  const auto readings = ParseAndRead(c);
  const attribution::Attribution a = attribution::Attribute({"scale", c.objects, readings, {}});
  for (auto _ : state)
    benchmark::DoNotOptimize(allocation::Allocate({"scale", c.objects, a, 1764460800}));
  Counters(state);
}

// The daemon's own stage function (app/stages.h) on one cycle's input; `state` carries the
// ledger and inference readings from cycle to cycle as a session does.
model::CycleOutput Stages(const Cluster& c, std::vector<sources::ExporterReadings> readings,
                          app::StageState& state, double now_unix) {
  app::CycleInput in;
  in.cluster = "scale";
  in.objects = c.shared_objects;
  in.readings = std::move(readings);
  in.now_unix = now_unix;
  return app::RunStages(in, state, {});
}

model::Snapshot MakeSnapshot(model::CycleOutput output) {
  model::Snapshot s;
  s.complete = true;
  model::ClusterSnapshot cs;
  cs.cluster = "scale";
  cs.latest.up = true;
  cs.latest.output = std::make_shared<const model::CycleOutput>(std::move(output));
  s.clusters.push_back(std::move(cs));
  return s;
}

// attribute → allocate → node health → inference → ledger, steady state (20 s cycles).
void BM_RunStages(benchmark::State& state) {
  const Cluster& c = Synthetic();
  const auto readings = ParseAndRead(c);
  app::StageState stages;
  double now = 1764460800;
  for (auto _ : state) benchmark::DoNotOptimize(Stages(c, readings, stages, now += 20));
  Counters(state);
}

void BM_RenderMetrics(benchmark::State& state) {
  const Cluster& c = Synthetic();
  app::StageState stages;
  const model::Snapshot s = MakeSnapshot(Stages(c, ParseAndRead(c), stages, 1764460800));
  size_t bytes = 0;
  for (auto _ : state) {
    metrics::ExpositionText text = metrics::RenderChunks(s, bytes);  // as SnapshotStore does
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["metrics_MB"] = static_cast<double>(bytes) / 1e6;
  Counters(state);
}

// The previous way, and the reference the streamed text is tested against: prometheus-cpp's
// MetricFamily objects and TextSerializer.
void BM_RenderMetricsReference(benchmark::State& state) {
  const Cluster& c = Synthetic();
  app::StageState stages;
  const model::Snapshot s = MakeSnapshot(Stages(c, ParseAndRead(c), stages, 1764460800));
  for (auto _ : state)
    benchmark::DoNotOptimize(prometheus::TextSerializer().Serialize(metrics::BuildFamilies(s)));
  Counters(state);
}

void BM_GzipExposition(benchmark::State& state) {
  const Cluster& c = Synthetic();
  app::StageState stages;
  const std::string text =
      metrics::RenderText(MakeSnapshot(Stages(c, ParseAndRead(c), stages, 1764460800)));
  size_t gz = 0;
  for (auto _ : state) {
    metrics::Exposition e = metrics::MakeExposition(metrics::ExpositionText::Of(text));
    gz = e.gzip_head.size();
    benchmark::DoNotOptimize(e);
  }
  state.counters["gzip_MB"] = static_cast<double>(gz) / 1e6;
  state.counters["metrics_MB"] = static_cast<double>(text.size()) / 1e6;
  Counters(state);
}

// Render and gzip once, then swap: what a publication costs the cycle.
void BM_PublishSnapshot(benchmark::State& state) {
  const Cluster& c = Synthetic();
  app::StageState stages;
  auto s = std::make_shared<const model::Snapshot>(
      MakeSnapshot(Stages(c, ParseAndRead(c), stages, 1764460800)));
  metrics::SnapshotStore store;
  for (auto _ : state) store.Publish(s);
  Counters(state);
}

// What one cycle of the daemon computes after the GETs: parse+read, the stages, the render.
void BM_FullCycleStages(benchmark::State& state) {
  const Cluster& c = Synthetic();
  app::StageState stages;
  double now = 1764460800;
  for (auto _ : state) {
    model::Snapshot s = MakeSnapshot(Stages(c, ParseAndRead(c), stages, now += 20));
    benchmark::DoNotOptimize(metrics::RenderText(s));
  }
  Counters(state);
}

// Prices as a user writes them (docs/accounting.md#prices): spot nodes first, then by model;
// the card matches the third rule's regex after failing the first two.
std::shared_ptr<const accounting::PriceList> Prices() {
  static const auto prices = [] {
    std::vector<accounting::PriceRule> rules(3);
    rules[0].node_labels = {{"cloud.google.com/gke-spot", "true"}};
    rules[0].model = ".*A100.*";
    rules[0].per_gpu_hour = 1.1;
    rules[1].model = "NVIDIA H100.*";
    rules[1].per_gpu_hour = 4.0;
    rules[2].model = "NVIDIA A100.*";
    rules[2].per_gpu_hour = 2.2;
    return std::make_shared<const accounting::PriceList>(*accounting::PriceList::Make(rules));
  }();
  return prices;
}

// Heap bytes in use (glibc): what a step keeps allocated, without the pages malloc holds free.
double HeapInUseMiB() { return static_cast<double>(mallinfo2().uordblks) / (1024.0 * 1024.0); }

// The accounting stage alone (docs/accounting.md), as RunStages runs it after the ledger's
// Record: each card's shares, its price, the teams, the GPU-hours into a ledger that persists
// from cycle to cycle (20 s apart). Counters: cards priced, and the heap the accounting keeps
// across cycles (its ledger state and one cycle's view of the counters).
void BM_Accounting(benchmark::State& state) {
  const Cluster& c = Synthetic();
  const attribution::Attribution a =
      attribution::Attribute({"scale", c.objects, ParseAndRead(c), {}});
  const allocation::Allocation alloc = allocation::Allocate({"scale", c.objects, a, 1764460800});
  ledger::PodUids in_cluster;
  for (const auto& [key, pod] : c.objects.pods) in_cluster.emplace(pod.Id(), pod.uid);
  const auto prices = Prices();
  const double heap_before = HeapInUseMiB();
  auto ledger = std::make_unique<ledger::Ledger>();
  auto view = std::make_unique<ledger::LedgerView>();
  double now = 1764460800;
  size_t priced = 0;
  for (auto _ : state) {
    // As the daemon does (app/stages.cc): the cards' shares streamed into the ledger.
    const std::vector<std::optional<double>> card_prices =
        accounting::PriceCards(*prices, a.cards, c.objects);
    const accounting::NamespaceLabels teams =
        accounting::TeamLabelsOf(c.objects.namespaces, {"team"});
    *view = ledger::LedgerView{};
    ledger->RecordGpuHoursOf(
        [&](const ledger::Ledger::CardSink& sink) {
          accounting::ForEachCardShare(
              {a, alloc, c.objects}, [&](size_t ci, const accounting::CardAccount& card) {
                sink(card, ci < card_prices.size() ? card_prices[ci] : std::nullopt);
              });
        },
        "USD", now += 20, &in_cluster, *view, teams, &a.pods);
    priced = std::count_if(card_prices.begin(), card_prices.end(),
                           [](const auto& p) { return p.has_value(); });
  }
  state.counters["cards_priced"] = static_cast<double>(priced);
  state.counters["accounting_heap_MiB"] = HeapInUseMiB() - heap_before;
  Counters(state);
}

// The ledger's Record alone (idle runs and energy), as RunStages runs it on each cycle's
// attribution, with every pod still in the cluster. Counter: the heap its view of the pods
// holds (the published output keeps one while the next cycle builds another).
void BM_LedgerRecord(benchmark::State& state) {
  const Cluster& c = Synthetic();
  const attribution::Attribution a =
      attribution::Attribute({"scale", c.objects, ParseAndRead(c), {}});
  ledger::PodUids in_cluster;
  for (const auto& [key, pod] : c.objects.pods) in_cluster.emplace(pod.Id(), pod.uid);
  ledger::Ledger ledger;
  double now = 1764460800;
  for (auto _ : state) benchmark::DoNotOptimize(ledger.Record(a, now += 20, &in_cluster));
  const double heap_before = HeapInUseMiB();
  const ledger::LedgerView view = ledger.Record(a, now += 20, &in_cluster);
  state.counters["ledger_view_heap_MiB"] = HeapInUseMiB() - heap_before;
  Counters(state);
}

// Of which each card's shares (a pure function of the cycle's attribution and allocation).
void BM_ShareCards(benchmark::State& state) {
  const Cluster& c = Synthetic();
  const attribution::Attribution a =
      attribution::Attribute({"scale", c.objects, ParseAndRead(c), {}});
  const allocation::Allocation alloc = allocation::Allocate({"scale", c.objects, a, 1764460800});
  for (auto _ : state) benchmark::DoNotOptimize(accounting::ShareCards({a, alloc, c.objects}));
  Counters(state);
}

// The whole stage function with the prices above (BM_RunStages runs it unpriced).
void BM_RunStagesPriced(benchmark::State& state) {
  const Cluster& c = Synthetic();
  const auto readings = ParseAndRead(c);
  app::StageState stages;
  app::StageParams params;
  params.prices = Prices();
  double now = 1764460800;
  for (auto _ : state) {
    app::CycleInput in;
    in.cluster = "scale";
    in.objects = c.shared_objects;
    in.readings = readings;
    in.now_unix = now += 20;
    benchmark::DoNotOptimize(app::RunStages(in, stages, params));
  }
  Counters(state);
}

// The node shape of a HAMi node (8 cards registered in hami.io/node-nvidia-register, v2.10.0
// JSON), as every stage asks for it: per pod in allocation, per device link in rightsizing, per
// card kind in accounting. Arg 0 reads the registration on every call, as NodeShapeOf did before
// the decoder kept it read (kube/hami_register.h); arg 1 is NodeShapeOf as it is now.
void BM_NodeShapeOfHamiNode(benchmark::State& state) {
  std::string text = "[";
  for (int i = 0; i < 8; ++i)
    text +=
        std::string(i ? "," : "") + "{\"id\":\"GPU-" + std::to_string(i) +
        "\",\"count\":10,\"devmem\":23034,\"devcore\":100,\"type\":\"NVIDIA-L4\",\"health\":true}";
  text += "]";
  kube::Node node;
  node.name = "hami-node";
  node.labels = {{"gpu", "on"}, {"kubernetes.io/hostname", "hami-node"}};
  node.capacity["nvidia.com/gpu"] = 80;
  node.hami_registration = kube::ReadHamiRegistration(text);
  const bool reparse = state.range(0) == 0;
  for (auto _ : state) {
    if (reparse) node.hami_registration = kube::ReadHamiRegistration(text);
    benchmark::DoNotOptimize(attribution::NodeShapeOf(node));
  }
}

BENCHMARK(BM_ParseAndRead)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Attribute)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Allocate)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RunStages)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Accounting)->Unit(benchmark::kMillisecond);
// Fixed counts for counting instructions under callgrind (a loaded machine's timings vary by
// 30 %; instructions do not): one cycle's cost in steady state is (I(3) - I(1)) / 2
// (docs/performance.md "Counting instructions").
BENCHMARK(BM_Accounting)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Accounting)->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LedgerRecord)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ShareCards)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RunStagesPriced)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RenderMetrics)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FullCycleStages)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RenderMetricsReference)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GzipExposition)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PublishSnapshot)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NodeShapeOfHamiNode)->Arg(0)->Arg(1)->Unit(benchmark::kNanosecond);

}  // namespace

BENCHMARK_MAIN();
