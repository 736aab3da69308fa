// Rightsizing through a real session over time (docs/rightsizing.md): the fake apiserver serves
// the basic scenario with the dcgm-exporter's body changing every cycle, so the Deployment
// ml/train-resnet (one pod, a whole A100 80GB, GPU 2 of gpu-node-1) is observed across twelve
// 20 s cycles of the fake clock with its memory and utilisation moving. The workload's peak
// memory is the largest any body showed, its observed time the intervals between cycles, and its
// recommendation is worked out by hand below. A Job's pod that appears at cycle 8 on the idle
// GPU 3 has too little time observed; and a new session on the same state file (a restart)
// carries the recommendation on. The second test does the same through the daemon binary.
#include <gtest/gtest.h>

#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gpuattr/ledger/state_file.h"
#include "gpuattr/rightsizing/recommend.h"
#include "support/fake_apiserver.h"
#include "support/paths.h"
#include "support/scenario.h"
#include "support/session_harness.h"
#include "support/subprocess.h"
#include "test_paths.h"

namespace gpuattr {
namespace {

using std::chrono::seconds;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr int kCycles = 12;
// GPU 2's memory used (MiB) and utilisation per cycle: the peak, 9,000 MiB, comes third.
constexpr double kMemoryMiB[kCycles] = {6000, 7000, 9000, 6500, 6000, 6000,
                                        7000, 6000, 6500, 6000, 7000, 6000};
constexpr double kUtilization[kCycles] = {0.20, 0.21, 0.22, 0.20, 0.21, 0.20,
                                          0.22, 0.21, 0.20, 0.21, 0.22, 0.20};

// `body` with GPU 2's memory and utilisation lines set to cycle `k`'s values (80 GiB in all).
std::string BodyOfCycle(const std::string& body, int k) {
  const std::string used = std::to_string(static_cast<long>(kMemoryMiB[k]));
  const std::string free = std::to_string(static_cast<long>(81920 - kMemoryMiB[k]));
  const std::string util = std::to_string(kUtilization[k]);
  const std::string percent = std::to_string(static_cast<long>(kUtilization[k] * 100 + 0.5));
  const std::pair<std::string, std::string> values[] = {
      {"DCGM_FI_DEV_FB_USED{gpu=\"2\"", used},
      {"DCGM_FI_DEV_FB_FREE{gpu=\"2\"", free},
      {"DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"2\"", util},
      {"DCGM_FI_DEV_GPU_UTIL{gpu=\"2\"", percent}};
  std::istringstream in(body);
  std::string out, line;
  int replaced = 0;
  while (std::getline(in, line)) {
    for (const auto& [prefix, value] : values)
      if (line.starts_with(prefix)) {
        line = line.substr(0, line.rfind(' ') + 1) + value;
        ++replaced;
      }
    out += line + "\n";
  }
  EXPECT_EQ(replaced, 4) << "the basic scenario's body changed shape";
  return out;
}

// `body` with GPU 3 (no pod in the scenario) held by ml/late-eval.
std::string WithLateEvalOnGpu3(const std::string& body) {
  std::istringstream in(body);
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.find("{gpu=\"3\"") != std::string::npos && line.find("pod=") == std::string::npos) {
      const size_t close = line.rfind('}');
      line.insert(close, ",container=\"eval\",namespace=\"ml\",pod=\"late-eval\"");
    }
    out += line + "\n";
  }
  return out;
}

// The pod of Job ml/late-eval on gpu-node-1, one GPU requested: train-resnet's pod renamed.
nlohmann::json LateEvalPod(const testing::Scenario& scenario) {
  for (const nlohmann::json& o : scenario.objects)
    if (o.value("kind", "") == "Pod" &&
        o["metadata"].value("name", "") == "train-resnet-7c9f8-abcde") {
      nlohmann::json pod = o;
      pod["metadata"]["name"] = "late-eval";
      pod["metadata"]["uid"] = "5b0e8c1e-0000-4000-8000-00000000e7a1";
      pod["metadata"]["labels"] = {{"job-name", "late-eval"}};
      pod["metadata"]["ownerReferences"] = {{{"apiVersion", "batch/v1"},
                                             {"kind", "Job"},
                                             {"name", "late-eval"},
                                             {"uid", "5b0e8c1e-0000-4000-8000-00000000j0b1"},
                                             {"controller", true}}};
      return pod;
    }
  ADD_FAILURE() << "the basic scenario lost train-resnet's pod";
  return {};
}

const rightsizing::WorkloadView* Find(const model::CycleOutput& out,
                                      const rightsizing::WorkloadId& id) {
  for (const rightsizing::WorkloadView& w : out.rightsizing.workloads)
    if (w.id == id) return &w;
  return nullptr;
}

const rightsizing::WorkloadView* TrainResnet(const model::CycleOutput& out) {
  return Find(out, {"ml", "Deployment", "train-resnet"});
}

TEST(RightsizingSession, AWorkloadObservedOverChangingBodiesGetsItsRecommendation) {
  auto scenario = testing::LoadScenario(testing::FixturePath("scenarios/basic"));
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  std::vector<std::string>& bodies =
      scenario->exporter_bodies["gpu-operator/nvidia-dcgm-exporter-7xk2p:9400"];
  ASSERT_FALSE(bodies.empty());
  const std::string first = bodies.front();
  bodies.clear();
  for (int k = 0; k < kCycles; ++k) bodies.push_back(BodyOfCycle(first, k));
  const nlohmann::json late_eval = LateEvalPod(*scenario);
  const testing::Scenario again = *scenario;

  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gpuattr-rs-e2e-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string state_path = (dir / "state.json").string();
  auto options = [&] {
    app::KubeSessionOptions o;
    o.rightsizing.window_seconds = 3600;
    o.rightsizing.min_observation_seconds = 200;
    o.rightsizing.headroom = 0.2;
    o.state_file = ledger::StateFile::Open(state_path, /*writable=*/true);
    return o;
  };
  auto h = std::make_unique<testing::SessionHarness>();
  ASSERT_TRUE(h->Start(std::move(*scenario), options()));

  const rightsizing::WorkloadView* seen = nullptr;
  std::shared_ptr<const testing::SessionCycle> cycle;
  for (int k = 0; k < kCycles; ++k) {
    if (k == 8) {  // ml/late-eval starts, and the exporter sees it on GPU 3
      ASSERT_TRUE(h->server->Upsert(late_eval).ok());
      std::vector<std::string> rest;
      for (int j = k; j < kCycles; ++j) rest.push_back(WithLateEvalOnGpu3(BodyOfCycle(first, j)));
      h->server->SetExporterBodies("gpu-operator", "nvidia-dcgm-exporter-7xk2p", 9400, rest);
    }
    if (k > 0) {
      ASSERT_TRUE(h->WaitForWatches());
      h->clock.Advance(seconds(20));
    }
    cycle = h->Cycle();
    ASSERT_TRUE(cycle->up) << k << ": " << (cycle->errors.empty() ? "" : cycle->errors[0]);
    seen = TrainResnet(*cycle->result.output);
    ASSERT_NE(seen, nullptr) << "cycle " << k;
    // The first cycle has no interval before it; each later one adds its 20 s.
    EXPECT_DOUBLE_EQ(seen->observed_seconds, 20.0 * k) << "cycle " << k;
    if (k == 5) {  // 100 s observed, 200 s asked for
      EXPECT_EQ(seen->recommendation.reason, rightsizing::Reason::kInsufficientData);
    }
  }

  // Worked out by hand. Peak memory 9,000 MiB (cycle 3), needed with the 20 % headroom:
  // 10,800 MiB = 11.32 GB. p95 utilisation about 0.22 (the sketch: within 2 %), needed compute
  // 0.22 x 1 (a whole GPU) x 1.2 = 0.264. The A100 80GB's offerings, smallest first: 1g.10gb
  // and 1g.20gb (1/7 = 0.143 of compute: too little), then 2g.20gb (2/7 = 0.286 >= 0.264,
  // 20 GB >= 11.32 GB): fits smaller, and 1 - 2/7 of a GPU-equivalent is reclaimable.
  EXPECT_DOUBLE_EQ(*seen->memory_peak_bytes, 9000 * kMiB);
  ASSERT_TRUE(seen->utilization_p95.has_value());
  EXPECT_NEAR(*seen->utilization_p95, 0.22, 0.22 * 0.02);
  EXPECT_EQ(seen->pods, 1u);
  EXPECT_EQ(seen->recommendation.current, "whole");
  EXPECT_EQ(seen->recommendation.recommended, "2g.20gb");
  EXPECT_EQ(rightsizing::ReasonName(seen->recommendation.reason), "fits_smaller");
  EXPECT_DOUBLE_EQ(seen->gpu_equivalents, 1);
  EXPECT_NEAR(seen->reclaimable_gpu_equivalents, 1 - 2.0 / 7, 1e-12);

  // The late Job: seen from cycle 8, or later when the pod's watch event came after that cycle's
  // read. A workload is observed from its first cycle on (that cycle adds no time): at most the
  // 60 s of cycles 9-11, short of the 200 asked for.
  const rightsizing::WorkloadView* late = Find(*cycle->result.output, {"ml", "Job", "late-eval"});
  ASSERT_NE(late, nullptr);
  EXPECT_GT(late->observed_seconds, 0);
  EXPECT_LE(late->observed_seconds, 60);
  EXPECT_EQ(late->recommendation.reason, rightsizing::Reason::kInsufficientData);
  EXPECT_EQ(late->pods, 1u);

  // A restart: a new session on the same state file, 20 s after the last cycle of the first
  // (its fake clock starts where the first one's did). The observations carry on.
  h.reset();
  auto restarted = std::make_unique<testing::SessionHarness>();
  ASSERT_TRUE(restarted->Start(again, options()));
  restarted->clock.Advance(seconds(20 * kCycles));
  auto after = restarted->Cycle();
  ASSERT_TRUE(after->up) << (after->errors.empty() ? "" : after->errors[0]);
  const rightsizing::WorkloadView* kept = TrainResnet(*after->result.output);
  ASSERT_NE(kept, nullptr);
  EXPECT_DOUBLE_EQ(kept->observed_seconds, 20.0 * kCycles);
  EXPECT_DOUBLE_EQ(*kept->memory_peak_bytes, 9000 * kMiB);
  EXPECT_EQ(kept->recommendation.recommended, "2g.20gb");
  restarted.reset();
  fs::remove_all(dir);
}

// The same through the daemon binary in server mode, as Prometheus sees it: the real gpuattr
// with a 1 s interval against the fake apiserver serving the changing bodies, its /metrics
// scraped until the recommendation is there, then restarted on its state file.
using Exposition = std::map<std::string, double>;  // "name{labels}" -> value

Exposition Samples(const std::string& text) {
  Exposition out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    if (space != std::string::npos)
      out[line.substr(0, space)] = std::strtod(line.c_str() + space + 1, nullptr);
  }
  return out;
}

// The value of the one series of `family` whose labels contain every one of `parts`.
std::optional<double> Value(const Exposition& e, const std::string& family,
                            const std::vector<std::string>& parts = {}) {
  for (const auto& [series, value] : e) {
    if (!series.starts_with(family + "{")) continue;
    if (std::all_of(parts.begin(), parts.end(),
                    [&](const std::string& p) { return series.find(p) != std::string::npos; }))
      return value;
  }
  return std::nullopt;
}

const std::vector<std::string> kTrainResnet = {"namespace=\"ml\"", "workload_kind=\"Deployment\"",
                                               "workload=\"train-resnet\""};

class Daemon {
 public:
  Daemon(const std::vector<std::string>& args, const std::filesystem::path& dir)
      : child_(testing::SpawnChild(args, testing::EnvironmentWithout({"KUBECONFIG"}), dir)) {}
  ~Daemon() {
    if (child_.pid > 0 && !stopped_) {
      kill(child_.pid, SIGKILL);
      testing::WaitChild(child_.pid, std::chrono::seconds(5));
    }
  }
  bool started() const { return child_.pid > 0; }
  std::string Log() const { return testing::SlurpFile(child_.err); }
  // The port of its "msg=serving address=127.0.0.1:PORT" line; 0 after 20 s without it.
  int Port() const { return testing::WaitForServingPort(child_.err, std::chrono::seconds(20)); }
  int Stop() {
    stopped_ = true;
    kill(child_.pid, SIGTERM);
    return testing::WaitChild(child_.pid, std::chrono::seconds(10));
  }

 private:
  testing::Child child_;
  bool stopped_ = false;
};

// Scrapes /metrics every 200 ms until `done` holds of what it served, at most `limit`.
Exposition ScrapeUntil(int port, const std::function<bool(const Exposition&)>& done,
                       std::chrono::seconds limit) {
  httplib::Client cli("127.0.0.1", port);
  Exposition last;
  for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;
       std::this_thread::sleep_for(std::chrono::milliseconds(200))) {
    auto r = cli.Get("/metrics");
    if (!r || r->status != 200) continue;
    last = Samples(r->body);
    if (done(last)) break;
  }
  return last;
}

TEST(RightsizingDaemon, TheRecommendationOverChangingBodiesIsServedOnMetricsAndSurvivesARestart) {
  auto scenario = testing::LoadScenario(testing::FixturePath("scenarios/basic"));
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  std::vector<std::string>& bodies =
      scenario->exporter_bodies["gpu-operator/nvidia-dcgm-exporter-7xk2p:9400"];
  ASSERT_FALSE(bodies.empty());
  const std::string first = bodies.front();
  bodies.clear();  // one body per GET, the last one repeated
  for (int k = 0; k < kCycles; ++k) bodies.push_back(BodyOfCycle(first, k));
  testing::FakeApiServerOptions so;
  so.bookmark_interval = std::chrono::seconds(120);  // quiet streams: SIGTERM need not wait
  testing::FakeApiServer server(std::move(*scenario), so);
  ASSERT_TRUE(server.Start().ok());

  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("gpuattr-rs-daemon-" + std::to_string(getpid()));
  fs::create_directories(dir);
  ASSERT_TRUE(server.WriteKubeconfig(dir / "kubeconfig").ok());
  std::ofstream(dir / "config.yaml") << "rightsizing:\n  window: 1h\n  min_observation: 8s\n"
                                        "  headroom: 0.2\n";
  const std::vector<std::string> args = {testing::DaemonBinary(),
                                         "--kubeconfig",
                                         (dir / "kubeconfig").string(),
                                         "--config.file",
                                         (dir / "config.yaml").string(),
                                         "--web.listen-address",
                                         "127.0.0.1:0",
                                         "--interval",
                                         "1s",
                                         "--state.file",
                                         (dir / "state.json").string()};

  auto daemon = std::make_unique<Daemon>(args, dir);
  ASSERT_TRUE(daemon->started());
  int port = daemon->Port();
  ASSERT_GT(port, 0) << daemon->Log();
  // Early, short of the 8 s asked for: insufficient_data, with the time it has.
  const Exposition early = ScrapeUntil(
      port,
      [](const Exposition& e) {
        return Value(e, "gpuattr_workload_observed_seconds", kTrainResnet).value_or(0) >= 1;
      },
      std::chrono::seconds(30));
  ASSERT_TRUE(Value(early, "gpuattr_workload_recommendation",
                    {"workload=\"train-resnet\"", "reason=\"insufficient_data\""}))
      << daemon->Log();
  // A Job's pod starts now on the idle GPU 3 (its watch event, and the bodies from the third on
  // naming it): it is observed from its first cycle on, short of the 8 s when train-resnet has
  // them.
  const nlohmann::json late_eval = LateEvalPod(server.scenario());
  ASSERT_TRUE(server.Upsert(late_eval).ok());
  std::vector<std::string> rest;
  for (int k = 2; k < kCycles; ++k) rest.push_back(WithLateEvalOnGpu3(BodyOfCycle(first, k)));
  server.SetExporterBodies("gpu-operator", "nvidia-dcgm-exporter-7xk2p", 9400, rest);
  // Observed time grows with the cycles: from one scrape to a later one by the time between
  // their cycles (gpuattr_last_cycle_timestamp_seconds), every interval being under the ledger's
  // gap.
  const Exposition done = ScrapeUntil(
      port,
      [](const Exposition& e) {
        return Value(e, "gpuattr_workload_recommendation",
                     {"workload=\"train-resnet\"", "reason=\"fits_smaller\""})
            .has_value();
      },
      std::chrono::seconds(60));
  const auto observed = [](const Exposition& e) {
    return Value(e, "gpuattr_workload_observed_seconds", kTrainResnet).value_or(-1);
  };
  const auto cycle_time = [](const Exposition& e) {
    return Value(e, "gpuattr_last_cycle_timestamp_seconds").value_or(-1);
  };
  EXPECT_NEAR(observed(done) - observed(early), cycle_time(done) - cycle_time(early),
              0.25);  // the timestamp is taken as the cycle ends, its clock as it starts
  EXPECT_GE(observed(done), 8);
  // Worked out as in the session test above: peak 9,000 MiB (the third body), p95 about 0.22,
  // 2g.20gb fits, 1 - 2/7 of a GPU-equivalent reclaimable.
  EXPECT_EQ(Value(done, "gpuattr_workload_recommendation",
                  {"workload=\"train-resnet\"", "current=\"whole\"", "recommended=\"2g.20gb\"",
                   "reason=\"fits_smaller\""}),
            1.0)
      << daemon->Log();
  EXPECT_EQ(Value(done, "gpuattr_workload_memory_peak_bytes", kTrainResnet), 9000 * kMiB);
  EXPECT_NEAR(Value(done, "gpuattr_workload_utilization_p95_ratio", kTrainResnet).value_or(-1),
              0.22, 0.22 * 0.02);
  EXPECT_EQ(Value(done, "gpuattr_workload_pods", kTrainResnet), 1.0);
  const std::vector<std::string> late = {"workload_kind=\"Job\"", "workload=\"late-eval\""};
  EXPECT_LT(Value(done, "gpuattr_workload_observed_seconds", late).value_or(99), 8);
  std::vector<std::string> late_insufficient = late;
  late_insufficient.push_back("reason=\"insufficient_data\"");
  EXPECT_EQ(Value(done, "gpuattr_workload_recommendation", late_insufficient), 1.0);
  EXPECT_EQ(Value(done, "gpuattr_workload_gpu_equivalents", kTrainResnet), 1.0);
  EXPECT_NEAR(
      Value(done, "gpuattr_workload_reclaimable_gpu_equivalents", kTrainResnet).value_or(-1),
      1 - 2.0 / 7, 1e-9);
  const double before_stop = observed(ScrapeUntil(
      port, [](const Exposition&) { return true; }, std::chrono::seconds(5)));
  EXPECT_EQ(daemon->Stop(), 0) << daemon->Log();

  // A restart on the same state file: the observations carry on (the restart's gap is under the
  // ledger's, so it counts too), the peak with them although every body now says 6,000 MiB.
  daemon = std::make_unique<Daemon>(args, dir);
  ASSERT_TRUE(daemon->started());
  port = daemon->Port();
  ASSERT_GT(port, 0) << daemon->Log();
  const Exposition after = ScrapeUntil(
      port,
      [](const Exposition& e) {
        return Value(e, "gpuattr_workload_observed_seconds", kTrainResnet).has_value();
      },
      std::chrono::seconds(30));
  EXPECT_GE(observed(after), before_stop);
  EXPECT_EQ(Value(after, "gpuattr_workload_memory_peak_bytes", kTrainResnet), 9000 * kMiB);
  EXPECT_EQ(Value(after, "gpuattr_workload_recommendation",
                  {"workload=\"train-resnet\"", "recommended=\"2g.20gb\""}),
            1.0)
      << daemon->Log();
  EXPECT_EQ(daemon->Stop(), 0) << daemon->Log();
  daemon.reset();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpuattr
