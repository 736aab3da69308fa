// docs/accounting.md#daily-totals: the state file of a large cluster with a full year of daily
// totals — 16,000 pods (idle runs, energy and GPU-hour counters, on 8,000 cards of 1,000 nodes)
// and 400 days of 20 namespaces (every one priced, with a team label) — read at start.
//
//   build/tests/state_file_bench --benchmark_counters_tabular=true
//
//   BM_LoadStateFile   StateFile::Open on the file on disk: read, parse, decode (target ≤ 200 ms)
//   BM_ReadOnly        reading the file's bytes alone, as StateFile::Read does (64 KiB chunks)
//   BM_ParseOnly       JsonDocument::Parse of the same text alone (its tape), as the decoder does
//   BM_DecodeText      DecodeStateFile of the text (parse + decode, no disk)
//   BM_ParseNlohmannDom  nlohmann::json::parse of the text into its DOM: what the decoder used
//                      before (for comparison)
//   BM_LoadStateFileWithoutDays   the same file without the days, for comparison
// Counters: the file's bytes (state_MB), the bytes of the days per namespace-day; the tape's
// values and bytes (ParseOnly); the peak memory of a process that only loads the file, above
// one that loads nothing (peak_MB, LoadStateFile: measured in a child process, `--peak-rss`).
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "gpuattr/ledger/state_codec.h"
#include "gpuattr/ledger/state_file.h"
#include "gpuattr/util/json_document.h"
#include "gpuattr/util/log.h"

namespace {

using namespace gpuattr;

constexpr int kPods = 16'000;
constexpr int kNamespaces = 20;
constexpr int kDays = 400;
constexpr double kNow = 1'764'028'800;  // a UTC midnight

// Numbers with all their digits, as real accruals have them.
double Value(int i, int k) { return (i * 7919 + k * 104729) % 100000 / 3.0 + 0.123456789; }

accounting::PerBasis Basis(int i) { return {Value(i, 1), Value(i, 2), Value(i, 3)}; }

ledger::GpuHours Hours(int i) { return {Basis(i), Basis(i + 1), true}; }

std::string Ns(int n) { return "team-" + std::to_string(n) + "-inference"; }

ledger::LedgerState Pods() {
  ledger::LedgerState s;
  s.last_cycle_unix = kNow;
  ledger::AccountingState& a = s.accounting;
  a.last_unix = kNow;
  a.currency = "USD";
  a.namespace_labels = {"team"};
  for (int i = 0; i < kPods; ++i) {
    const std::string node = "gpu-node-" + std::to_string(i / 16);
    const kube::PodId id{Ns(i % kNamespaces),
                         "app-" + std::to_string(i / 8) + "-5d8f9c-" + std::to_string(i)};
    const std::string uid = "6f1c2a3e-1b2c-4d5e-8f90-" + std::to_string(100000000000 + i);
    s.pods[id] = {uid, node, kNow - 3600, kNow, Value(i, 4) * 1e4, 250.5, kNow};
    a.pod_hours[id] = {uid, node, Hours(i), ledger::SeenAs::kUid};
    if (i % 2 == 0) a.cards.insert(node + "/GPU-5a1c2b3d-" + std::to_string(100000 + i));
  }
  for (int n = 0; n < kNamespaces; ++n) {
    s.namespaces[Ns(n)] = {Value(n, 5) * 1e6, kNow, {}};
    a.namespace_hours[Ns(n)] = {Hours(n), kNow};
  }
  for (int node = 0; node < 1000; ++node)
    a.node_idle["gpu-node-" + std::to_string(node)] = {Hours(node), kNow};
  return s;
}

void AddDays(ledger::AccountingState& a) {
  const ledger::UtcDay today = static_cast<ledger::UtcDay>(kNow / 86400);
  for (int d = 0; d < kDays; ++d) {
    ledger::DayTotals& day = a.days[today - d];
    for (int n = 0; n < kNamespaces; ++n)
      day.namespaces[Ns(n)] = {Hours(d * kNamespaces + n), {{"team", "team-" + std::to_string(n)}}};
    day.idle = Hours(d);
    day.cards = Hours(d + 1);
  }
}

struct Files {
  std::filesystem::path with_days, without_days;
  size_t bytes = 0, bytes_without_days = 0;
};

const Files& Written() {
  static Files* f = [] {
    auto* f = new Files;
    ledger::LedgerState s = Pods();
    const std::string without = ledger::EncodeStateFile({{"scale", s}});
    AddDays(s.accounting);
    const std::string with = ledger::EncodeStateFile({{"scale", s}});
    const auto dir = std::filesystem::temp_directory_path() /
                     ("gpuattr-state-bench-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    f->with_days = dir / "state.json";
    f->without_days = dir / "state-no-days.json";
    std::ofstream(f->with_days, std::ios::binary) << with;
    std::ofstream(f->without_days, std::ios::binary) << without;
    f->bytes = with.size();
    f->bytes_without_days = without.size();
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(Written().with_days.parent_path(), ec);
    });
    return f;
  }();
  return *f;
}

std::string Text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The peak resident memory (bytes) of this binary run with `--peak-rss <path>`: a fresh process
// that loads the state file at `path` (nothing when it does not exist) and exits.
double PeakRss(const std::filesystem::path& path) {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 0;
  self[n] = 0;
  const std::string command = std::string(self) + " --peak-rss '" + path.string() + "'";
  FILE* child = popen(command.c_str(), "r");
  if (child == nullptr) return 0;
  double kib = 0;
  if (std::fscanf(child, "%lf", &kib) != 1) kib = 0;
  pclose(child);
  return kib * 1024;
}

void Counters(benchmark::State& state, const Files& f) {
  state.counters["state_MB"] = static_cast<double>(f.bytes) / 1e6;
  state.counters["days_MB"] = static_cast<double>(f.bytes - f.bytes_without_days) / 1e6;
  state.counters["bytes_per_ns_day"] =
      static_cast<double>(f.bytes - f.bytes_without_days) / (kDays * kNamespaces);
}

void BM_LoadStateFile(benchmark::State& state) {
  const Files& f = Written();
  for (auto _ : state) {
    auto file = ledger::StateFile::Open(f.with_days.string(), /*writable=*/false);
    benchmark::DoNotOptimize(file->Load("scale"));
  }
  Counters(state, f);
  const double peak = PeakRss(f.with_days) - PeakRss(f.with_days.string() + ".absent");
  state.counters["peak_MB"] = peak / 1e6;
  state.counters["peak_per_file_byte"] = peak / static_cast<double>(f.bytes);
}

void BM_LoadStateFileWithoutDays(benchmark::State& state) {
  const Files& f = Written();
  for (auto _ : state) {
    auto file = ledger::StateFile::Open(f.without_days.string(), /*writable=*/false);
    benchmark::DoNotOptimize(file->Load("scale"));
  }
  Counters(state, f);
}

void BM_ReadOnly(benchmark::State& state) {
  const Files& f = Written();
  for (auto _ : state) {
    std::ifstream in(f.with_days, std::ios::binary);
    std::string text;
    char chunk[1 << 16];
    while (in.read(chunk, sizeof chunk).gcount() > 0)
      text.append(chunk, static_cast<size_t>(in.gcount()));
    benchmark::DoNotOptimize(text);
  }
  Counters(state, f);
}

// Where the time goes: the parse into the tape alone (with the copy of the text the document
// keeps, as DecodeStateFile makes it), and parse + decode of that text.
void BM_ParseOnly(benchmark::State& state) {
  const Files& f = Written();
  const std::string text = Text(f.with_days);
  size_t nodes = 0;
  for (auto _ : state) {
    auto doc = JsonDocument::Parse(text);
    if (!doc.ok()) state.SkipWithError(doc.error().message.c_str());
    nodes = doc.ok() ? doc->node_count() : 0;
    benchmark::DoNotOptimize(doc);
  }
  Counters(state, f);
  state.counters["tape_values_M"] = static_cast<double>(nodes) / 1e6;
  state.counters["tape_MB"] = static_cast<double>(nodes * sizeof(JsonDocument::Node)) / 1e6;
}

void BM_DecodeText(benchmark::State& state) {
  const Files& f = Written();
  const std::string text = Text(f.with_days);
  for (auto _ : state) benchmark::DoNotOptimize(ledger::DecodeStateFile(text));
  Counters(state, f);
}

void BM_ParseNlohmannDom(benchmark::State& state) {
  const Files& f = Written();
  const std::string text = Text(f.with_days);
  for (auto _ : state) benchmark::DoNotOptimize(nlohmann::json::parse(text));
  Counters(state, f);
}

BENCHMARK(BM_LoadStateFile)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadOnly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParseOnly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeText)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParseNlohmannDom)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LoadStateFileWithoutDays)->Unit(benchmark::kMillisecond);

// `--peak-rss <path>`: load the state file at `path` and print the process's peak RSS in KiB.
int PeakRssMain(const char* path) {
  gpuattr::log::SetLevel(gpuattr::log::Level::kWarn);
  auto file = ledger::StateFile::Open(path, /*writable=*/false);
  benchmark::DoNotOptimize(file->Load("scale"));
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("%ld\n", usage.ru_maxrss);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--peak-rss") == 0) return PeakRssMain(argv[2]);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
