// Rightsizing through a real session over time (docs/rightsizing.md): the fake apiserver serves
// the basic scenario with the dcgm-exporter's body changing every cycle, so the Deployment
// ml/train-resnet (one pod, a whole A100 80GB, GPU 2 of gpu-node-1) is observed across twelve
// 20 s cycles of the fake clock with its memory and utilisation moving. The workload's peak
// memory is the largest any body showed, its observed time the intervals between cycles, and its
// recommendation is worked out by hand below. A Job's pod that appears at cycle 8 on the idle
// GPU 3 has too little time observed; and a new session on the same state file (a restart)
// carries the recommendation on.
#include <gtest/gtest.h>

#include <unistd.h>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "gpuattr/ledger/state_file.h"
#include "gpuattr/rightsizing/recommend.h"
#include "support/paths.h"
#include "support/scenario.h"
#include "support/session_harness.h"

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
  // read. Each cycle that sees a workload adds that cycle's interval, its first included: at most
  // 80 s observed, short of the 200 asked for.
  const rightsizing::WorkloadView* late = Find(*cycle->result.output, {"ml", "Job", "late-eval"});
  ASSERT_NE(late, nullptr);
  EXPECT_GT(late->observed_seconds, 0);
  EXPECT_LE(late->observed_seconds, 80);
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

}  // namespace
}  // namespace gpuattr
