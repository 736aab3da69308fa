// Throughput of the exposition parser on dcgm-exporter-shaped bodies.
//
// Inputs, in order of preference:
//   GPUATTR_BENCH_FILES=a.prom:b.prom   measure exactly these files (the same bytes as the peers)
//   /work/shared/perf-peers/gen_dcgm.py (or $GPUATTR_GEN_DCGM) --nodes 1 and --nodes 100
//   a built-in generator of the same shape (25 DCGM families, 8 GPUs per node, 10 labels)
//
// `--peers-protocol FILE...` instead times like ../shared/perf-peers and prints its RESULT lines.
//
// Reported (wall time, like the peers): bytes_per_second, and ns_per_sample = wall time per parse /
// number of samples (the peers divide by the file's sample lines; the bench checks they are equal).
#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "gpuattr/expo/parser.h"
#include "support/paths.h"

namespace {

struct Input {
  std::string name;
  std::string body;
};

// Same families, label set and value formats as gen_dcgm.py (values differ: another RNG).
std::string BuiltInDcgm(int nodes) {
  static const char* kFamilies[] = {"DCGM_FI_DEV_SM_CLOCK",
                                    "DCGM_FI_DEV_MEM_CLOCK",
                                    "DCGM_FI_DEV_MEMORY_TEMP",
                                    "DCGM_FI_DEV_GPU_TEMP",
                                    "DCGM_FI_DEV_POWER_USAGE",
                                    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                                    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
                                    "DCGM_FI_DEV_GPU_UTIL",
                                    "DCGM_FI_DEV_MEM_COPY_UTIL",
                                    "DCGM_FI_DEV_ENC_UTIL",
                                    "DCGM_FI_DEV_DEC_UTIL",
                                    "DCGM_FI_DEV_XID_ERRORS",
                                    "DCGM_FI_DEV_FB_FREE",
                                    "DCGM_FI_DEV_FB_USED",
                                    "DCGM_FI_DEV_FB_RESERVED",
                                    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
                                    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
                                    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
                                    "DCGM_FI_DEV_ROW_REMAP_FAILURE",
                                    "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
                                    "DCGM_FI_PROF_SM_ACTIVE",
                                    "DCGM_FI_PROF_SM_OCCUPANCY",
                                    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
                                    "DCGM_FI_PROF_DRAM_ACTIVE",
                                    "DCGM_FI_PROF_PCIE_TX_BYTES"};
  static const char* kBus[] = {"07", "0F", "47", "4E", "87", "90", "B7", "BD"};
  static const char* kNamespaces[] = {"ml-training", "inference-prod", "research-nlp", "cv-team"};
  static const char* kWorkloads[] = {"llama2-70b-finetune", "triton-resnet50", "vllm-mistral-7b"};
  std::mt19937_64 rng(1);
  std::vector<std::string> gpus;
  char buf[512];
  for (int n = 0; n < nodes; ++n) {
    for (int g = 0; g < 8; ++g) {
      bool busy = rng() % 10 < 7;
      uint64_t a = rng(), b = rng();
      std::string pod, ns, container;
      if (busy) {
        ns = kNamespaces[rng() % 4];
        container = "pytorch";
        pod = std::string(kWorkloads[rng() % 3]) + "-" + std::to_string(rng() % 10000000000ull) +
              "-x7k2q";
      }
      std::snprintf(buf, sizeof buf,
                    "gpu=\"%d\",UUID=\"GPU-%08llx-%04llx-%04llx-%04llx-%012llx\","
                    "pci_bus_id=\"00000000:%s:00.0\",device=\"nvidia%d\","
                    "modelName=\"NVIDIA A100-SXM4-80GB\",Hostname=\"dgx-a100-%03d\","
                    "DCGM_FI_DRIVER_VERSION=\"535.129.03\",container=\"%s\",namespace=\"%s\","
                    "pod=\"%s\"",
                    g, (unsigned long long)(a >> 32), (unsigned long long)(a >> 16 & 0xffff),
                    (unsigned long long)(a & 0xffff), (unsigned long long)(b >> 48),
                    (unsigned long long)(b & 0xffffffffffffull), kBus[g], g, n + 1,
                    container.c_str(), ns.c_str(), pod.c_str());
      gpus.push_back(buf);
    }
  }
  std::string out;
  int f = 0;
  for (const char* family : kFamilies) {
    out +=
        std::string("# HELP ") + family + " Field " + family + ".\n# TYPE " + family + " gauge\n";
    bool is_float = f == 4 || f >= 19;
    for (const std::string& labels : gpus) {
      if (is_float) {
        std::snprintf(buf, sizeof buf, "%f", static_cast<double>(rng() % 1000000) / 2500.0);
      } else {
        std::snprintf(buf, sizeof buf, "%llu", (unsigned long long)(rng() % 100000));
      }
      out += std::string(family) + "{" + labels + "} " + buf + "\n";
    }
    ++f;
  }
  return out;
}

std::string Generated(int nodes) {
  const char* env = std::getenv("GPUATTR_GEN_DCGM");
  std::string gen = env != nullptr ? env : "/work/shared/perf-peers/gen_dcgm.py";
  if (std::filesystem::exists(gen)) {
    auto path = std::filesystem::temp_directory_path() /
                ("gpuattr-bench-dcgm-" + std::to_string(nodes) + "node.prom");
    std::string cmd =
        "python3 '" + gen + "' --nodes " + std::to_string(nodes) + " -o '" + path.string() + "'";
    if (std::system(cmd.c_str()) == 0) {
      std::string body = gpuattr::testing::ReadFile(path);
      std::filesystem::remove(path);
      return body;
    }
    std::fprintf(stderr, "note: %s failed; using the built-in generator\n", cmd.c_str());
  }
  return BuiltInDcgm(nodes);
}

std::vector<Input> LoadInputs() {
  std::vector<Input> inputs;
  if (const char* files = std::getenv("GPUATTR_BENCH_FILES"); files != nullptr && *files) {
    std::string list = files;
    size_t start = 0;
    while (start <= list.size()) {
      size_t colon = list.find(':', start);
      if (colon == std::string::npos) colon = list.size();
      std::string path = list.substr(start, colon - start);
      if (!path.empty()) {
        inputs.push_back(
            {std::filesystem::path(path).filename().string(), gpuattr::testing::ReadFile(path)});
      }
      start = colon + 1;
    }
    return inputs;
  }
  inputs.push_back({"dcgm_1node", Generated(1)});
  inputs.push_back({"dcgm_100node", Generated(100)});
  return inputs;
}

// Non-blank lines that do not start with '#': the peers' divisor.
size_t SampleLines(const std::string& body) {
  size_t n = 0, start = 0;
  while (start < body.size()) {
    size_t nl = body.find('\n', start);
    if (nl == std::string::npos) nl = body.size();
    size_t p = body.find_first_not_of(" \t\r", start);
    if (p < nl && body[p] != '#') ++n;
    start = nl + 1;
  }
  return n;
}

void BM_Parse(benchmark::State& state, const Input* input) {
  gpuattr::expo::Exposition e;  // reused across parses, as a scraper reuses it per target
  gpuattr::expo::Parse(input->body, e);
  size_t lines = SampleLines(input->body);
  if (e.samples.size() != lines || e.error_count != 0) {
    state.SkipWithError("sample count differs from the file's sample lines");
    return;
  }
  size_t label_count = 0;
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    gpuattr::expo::Parse(input->body, e);
    // Touch the result so that nothing is optimised away.
    benchmark::DoNotOptimize(e.samples.data());
    benchmark::DoNotOptimize(label_count += e.labels.size());
  }
  double elapsed_ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * input->body.size()));
  state.counters["samples"] = static_cast<double>(e.samples.size());
  state.counters["labels"] = static_cast<double>(e.labels.size());
  // Wall time per parse / samples, the peers' measure (bytes_per_second is wall time too).
  state.counters["ns_per_sample"] =
      elapsed_ns / static_cast<double>(state.iterations() * e.samples.size());
}

double NowNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 != 0 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The perf-peers timing protocol (warm-up, calibrated repetitions, wall and CPU time), printing
// the same RESULT lines as ../shared/perf-peers, so summarize.py can put us in its table.
int PeersProtocol(int argc, char** argv) {
  int reps = 3;
  double rep_sec = 0.25, warm_sec = 0.5;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
      continue;
    }
    if (arg == "--rep-sec" && i + 1 < argc) {
      rep_sec = std::atof(argv[++i]);
      continue;
    }
    if (arg == "--warm-sec" && i + 1 < argc) {
      warm_sec = std::atof(argv[++i]);
      continue;
    }
    std::string body = gpuattr::testing::ReadFile(arg);
    gpuattr::expo::Exposition e;
    double t0 = NowNs(CLOCK_MONOTONIC);
    long done = 0;
    while (done < 2 || NowNs(CLOCK_MONOTONIC) - t0 < warm_sec * 1e9) {
      gpuattr::expo::Parse(body, e);
      ++done;
    }
    double per = (NowNs(CLOCK_MONOTONIC) - t0) / 1e9 / static_cast<double>(done);
    long iters = std::max(1L, static_cast<long>(rep_sec / per + 0.5));
    std::vector<double> wall, cpu;
    for (int r = 0; r < reps; ++r) {
      double c0 = NowNs(CLOCK_PROCESS_CPUTIME_ID), w0 = NowNs(CLOCK_MONOTONIC);
      for (long k = 0; k < iters; ++k) {
        gpuattr::expo::Parse(body, e);
        benchmark::DoNotOptimize(e.samples.data());
        benchmark::ClobberMemory();
      }
      wall.push_back((NowNs(CLOCK_MONOTONIC) - w0) / static_cast<double>(iters));
      cpu.push_back((NowNs(CLOCK_PROCESS_CPUTIME_ID) - c0) / static_cast<double>(iters));
    }
    std::printf("RESULT\tcpp-gpuattr-expo-Parse\t%s\t%zu\t%zu\t%d\t%ld\t%.0f\t%.0f\t%.0f\n",
                std::filesystem::path(arg).filename().c_str(), body.size(), e.samples.size(), reps,
                iters, *std::min_element(wall.begin(), wall.end()), Median(wall), Median(cpu));
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // `expo_parser_bench --peers-protocol [--reps N] [--rep-sec S] [--warm-sec S] FILE...`
  if (argc > 1 && std::string(argv[1]) == "--peers-protocol") return PeersProtocol(argc, argv);
  static std::vector<Input> inputs = LoadInputs();
  for (const Input& in : inputs) {
    benchmark::RegisterBenchmark(("Parse/" + in.name).c_str(), BM_Parse, &in)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
