// docs/rightsizing.md#cost: what rightsizing adds to a cycle on a 1,000-node cluster (8 GPUs per
// node, half of the nodes MIG-partitioned into 3g.40gb + 2 × 2g.20gb, the other half whole
// A100 80GB) with 16,000 pods in 2,000 Deployments of 8 pods, and how large its state becomes.
// The attribution is built directly (no parsing): this is the rightsizing stage alone.
//
//   build/tests/rightsizing_bench --benchmark_counters_tabular=true
//
// The window is first filled: 8 slots of 1 day, each with 50 cycles of utilisation drawn at
// random over [0, 1] (every bucket of every sketch in use: the largest state), then measured:
//   BM_RecordCycle    Tracker::Record on one more cycle (20 s later)
//   BM_EncodeState    the state file's rightsizing section, encoded (state_bytes, MB)
//   BM_DecodeState    read back at start
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <tuple>
#include <string>

#include "gpuattr/ledger/state_codec.h"
#include "gpuattr/rightsizing/rightsizing.h"

namespace {

using namespace gpuattr;

constexpr int kNodes = 1000;
constexpr int kGpusPerNode = 8;
constexpr int kPodsPerDeployment = 8;
constexpr double kT0 = 1'764'028'800;  // a UTC midnight

struct Cluster {
  attribution::Attribution attribution;
  kube::ClusterObjects objects;
};

// Adds a device and its pod; pods are dealt to Deployments 8 at a time.
void AddPod(Cluster& c, int n, int g, const char* profile, const char* instance, int& pods) {
  attribution::Device d;
  d.id = {"gpu-node-" + std::to_string(n), std::to_string(g),
          profile ? std::optional<std::string>(instance) : std::nullopt};
  d.model = "NVIDIA A100-SXM4-80GB";
  if (profile) d.mig_profile = profile;
  d.memory_total_bytes = profile ? 20e9 : 85e9;
  c.attribution.devices.push_back(d);
  const int deployment = pods / kPodsPerDeployment;
  kube::Pod p;
  p.namespace_ = "team-" + std::to_string(deployment % 50);
  const std::string name = "app-" + std::to_string(deployment);
  p.name = name + "-5d8f9c-" + std::to_string(pods);
  p.node_name = d.id.node;
  p.labels["pod-template-hash"] = "5d8f9c";
  p.owners.push_back({"ReplicaSet", name + "-5d8f9c", true, "apps/v1"});
  attribution::PodDevice link;
  link.pod = p.Id();
  link.device = c.attribution.devices.size() - 1;
  link.sharing = profile ? attribution::Sharing::kMig : attribution::Sharing::kExclusive;
  c.attribution.pod_devices.push_back(link);
  c.objects.pods[p.Key()] = std::move(p);
  ++pods;
}

Cluster Make() {
  Cluster c;
  int pods = 0;
  for (int n = 0; n < kNodes; ++n)
    for (int g = 0; g < kGpusPerNode; ++g) {
      if (n % 2 == 0) {
        AddPod(c, n, g, nullptr, nullptr, pods);
      } else {
        AddPod(c, n, g, "3g.40gb", "1", pods);
        AddPod(c, n, g, "2g.20gb", "5", pods);
        AddPod(c, n, g, "2g.20gb", "6", pods);
      }
    }
  // As attribution gives them (types.h): sorted by (pod, device).
  std::sort(c.attribution.pod_devices.begin(), c.attribution.pod_devices.end(),
            [](const attribution::PodDevice& a, const attribution::PodDevice& b) {
              return std::tie(a.pod, a.device) < std::tie(b.pod, b.device);
            });
  return c;  // 4,000 pods on whole GPUs + 12,000 on slices: 16,000 pods, 2,000 Deployments
}

// New readings for every pod, as a cycle brings them.
void Randomise(Cluster& c, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  for (attribution::PodDevice& l : c.attribution.pod_devices) {
    l.utilization = u(rng);
    l.memory_used_bytes = 1e9 + 15e9 * u(rng);
  }
}

struct Filled {
  Cluster cluster;
  rightsizing::Tracker tracker{{7 * 86400, 86400, 0.2, 300}};
  double now = kT0;
};

Filled& Fill() {
  static Filled* f = [] {
    auto* f = new Filled{Make()};
    std::mt19937_64 rng(26);
    for (int day = 0; day < 8; ++day)
      for (int i = 0; i < 50; ++i) {
        f->now = kT0 + 86400.0 * day + 20.0 * i;
        Randomise(f->cluster, rng);
        f->tracker.Record(f->cluster.attribution, f->cluster.objects, f->now);
      }
    return f;
  }();
  return *f;
}

void Counters(benchmark::State& state, const Filled& f) {
  state.counters["pods"] = static_cast<double>(f.cluster.attribution.pod_devices.size());
  state.counters["workloads"] = static_cast<double>(f.tracker.state().workloads.size());
}

void BM_RecordCycle(benchmark::State& state) {
  Filled& f = Fill();
  for (auto _ : state)
    benchmark::DoNotOptimize(
        f.tracker.Record(f.cluster.attribution, f.cluster.objects, f.now += 20));
  Counters(state, f);
}

void BM_EncodeState(benchmark::State& state) {
  Filled& f = Fill();
  const ledger::RightsizingContents rs{{"scale", f.tracker.state()}};
  size_t bytes = 0;
  for (auto _ : state) {
    bytes = 0;
    ledger::EncodeStateFile(
        {}, [&](std::string_view chunk) { bytes += chunk.size(); }, &rs);
  }
  state.counters["state_MB"] = static_cast<double>(bytes) / 1e6;
  state.counters["bytes_per_workload"] =
      static_cast<double>(bytes) / static_cast<double>(f.tracker.state().workloads.size());
  Counters(state, f);
}

void BM_DecodeState(benchmark::State& state) {
  Filled& f = Fill();
  const ledger::RightsizingContents rs{{"scale", f.tracker.state()}};
  const std::string text = ledger::EncodeStateFile({}, &rs);
  for (auto _ : state) {
    ledger::RightsizingContents out;
    benchmark::DoNotOptimize(ledger::DecodeStateFile(text, &out));
  }
  Counters(state, f);
}

BENCHMARK(BM_RecordCycle)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeState)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeState)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
