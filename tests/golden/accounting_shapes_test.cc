// GPU-hours per hour on each basis for every node shape in the fixtures, worked out by hand from
// the scenarios' exporter bodies and objects (docs/accounting.md). One row per card: each pod's
// share and the idle, as allocation / memory / usage.
#include <gtest/gtest.h>

#include <map>

#include "golden/accounting_harness.h"

namespace gpuattr::accounting {
namespace {

using gpuattr::testing::FixturePath;

// "pod" (namespace/name) or "idle" → allocation, memory, usage.
using CardRows = std::map<std::string, PerBasis>;

// "node/gpu" → the card's rows, from one cycle of the scenario.
std::map<std::string, CardRows> Shares(const std::string& scenario) {
  auto c = gpuattr::testing::LoadAccountingCase(FixturePath("scenarios/" + scenario));
  EXPECT_TRUE(c.ok()) << c.error().message;
  std::map<std::string, CardRows> out;
  if (!c.ok()) return out;
  for (const CardAccount& card : gpuattr::testing::ShareCase(*c)) {
    CardRows& rows = out[card.node + "/" + card.gpu];
    for (const PodAccount& p : card.pods) rows[p.pod.Text()] = p.value;
    rows["idle"] = card.idle;
  }
  return out;
}

void ExpectCard(const std::map<std::string, CardRows>& shares, const std::string& card,
                const CardRows& want) {
  SCOPED_TRACE(card);
  auto it = shares.find(card);
  ASSERT_NE(it, shares.end());
  const CardRows& got = it->second;
  EXPECT_EQ(got.size(), want.size());
  for (const auto& [who, v] : want) {
    auto g = got.find(who);
    ASSERT_NE(g, got.end()) << who;
    for (Basis b : kAllBases)
      EXPECT_NEAR(At(g->second, b), At(v, b), 1e-9) << who << " " << BasisName(b);
  }
}

// Whole GPUs (attr-whole-gpus, 4× H100, dcgm with pod labels): a whole GPU is its holder's on
// allocation and memory; usage is GPU_UTIL. GPU 0 trainer-0 at 91 %, GPU 1 trainer-0 at 45 %,
// GPU 2 embed-1 at 12 %, GPU 3 nobody's (0 %).
TEST(AccountingShapes, WholeGpus) {
  const auto s = Shares("attr-whole-gpus");
  EXPECT_EQ(s.size(), 4u);
  ExpectCard(s, "gpu-h100-a/0", {{"ml/trainer-0", {1, 1, 0.91}}, {"idle", {0, 0, 0.09}}});
  ExpectCard(s, "gpu-h100-a/1", {{"ml/trainer-0", {1, 1, 0.45}}, {"idle", {0, 0, 0.55}}});
  ExpectCard(s, "gpu-h100-a/2", {{"web/embed-1", {1, 1, 0.12}}, {"idle", {0, 0, 0.88}}});
  ExpectCard(s, "gpu-h100-a/3", {{"idle", {1, 1, 1}}});
}

// Mixed MIG (attr-mig-shared-zero, A100: G = 7; the .shared resources at 0 share nothing).
// Card 0 is 3 + 4 × 1 = 7 compute slices: 3g serve-0 (66 %), 1g whisper-0 (31 %), 1g whisper-1
// (12 %), 1g ocr-0 (4 %) and a 1g slice without a pod. allocation = memory = g/7 each, idle 1/7
// (the slice without a pod). usage = g/7 × utilisation: 1.98/7, 0.31/7, 0.12/7, 0.04/7; idle
// 1 − 2.45/7 = 0.65. Card 1: one 7g slice, train-0 at 93 %.
TEST(AccountingShapes, MixedMig) {
  const auto s = Shares("attr-mig-shared-zero");
  ExpectCard(s, "mig-mixed-2/0",
             {{"llm/serve-0", {3.0 / 7, 3.0 / 7, 1.98 / 7}},
              {"asr/whisper-0", {1.0 / 7, 1.0 / 7, 0.31 / 7}},
              {"asr/whisper-1", {1.0 / 7, 1.0 / 7, 0.12 / 7}},
              {"docs/ocr-0", {1.0 / 7, 1.0 / 7, 0.04 / 7}},
              {"idle", {1.0 / 7, 1.0 / 7, 0.65}}});
  ExpectCard(s, "mig-mixed-2/1", {{"llm/train-0", {1, 1, 0.93}}, {"idle", {0, 0, 0.07}}});
}

// Time-sliced (attr-replicas): ts-plain-1 labels nvidia.com/gpu.replicas=4 (r = 4). GPU 0
// (81920 MiB, device utilisation the max line, 50 %): bot-0 holds 1 replica and uses 12288 MiB,
// bot-1 holds 2 and uses 30720 MiB. allocation 1/4, 2/4, idle 1/4; memory 12288/81920 = 0.15,
// 30720/81920 = 0.375, idle 0.475; usage 0.5 split 12288:30720 = 2:5, so 1/7 and 5/14, idle 0.5.
// whole-1: GPU 0 train-0 whole at 97 %; GPU 1 nobody's.
TEST(AccountingShapes, TimeSliced) {
  const auto s = Shares("attr-replicas");
  ExpectCard(s, "ts-plain-1/0",
             {{"chat/bot-0", {0.25, 0.15, 1.0 / 7}},
              {"chat/bot-1", {0.5, 0.375, 5.0 / 14}},
              {"idle", {0.25, 0.475, 0.5}}});
  ExpectCard(s, "whole-1/0", {{"chat/train-0", {1, 1, 0.97}}, {"idle", {0, 0, 0.03}}});
  ExpectCard(s, "whole-1/1", {{"idle", {1, 1, 1}}});
}

// Process tier (attr-process-shared, 80 GiB cards, no replicas label so r is unknown). GPU 0:
// ml/vllm-0 (50 GiB) and search/tei-1 (20 GiB) at 75 %: allocation split evenly 1/2 each;
// memory 50/80 = 0.625 and 20/80 = 0.25, idle 0.125; usage 0.75 split 5:2 = 0.75 × 5/7 and
// 0.75 × 2/7, idle 0.25. GPU 1: tei-2 alone at 3 %. GPU 2: lab/notebook-0 requests no GPU: no
// allocation (idle 1), its memory whole, usage 1 %. GPU 3: no process.
TEST(AccountingShapes, ProcessTier) {
  const auto s = Shares("attr-process-shared");
  ExpectCard(s, "gpu-proc-a/0",
             {{"ml/vllm-0", {0.5, 0.625, 0.75 * 5 / 7}},
              {"search/tei-1", {0.5, 0.25, 0.75 * 2 / 7}},
              {"idle", {0, 0.125, 0.25}}});
  ExpectCard(s, "gpu-proc-a/1", {{"search/tei-2", {1, 1, 0.03}}, {"idle", {0, 0, 0.97}}});
  ExpectCard(s, "gpu-proc-a/2", {{"lab/notebook-0", {0, 1, 0.01}}, {"idle", {1, 0, 0.99}}});
  ExpectCard(s, "gpu-proc-a/3", {{"idle", {1, 1, 1}}});
}

// DRA (dra, dcgm without pod labels): gpu-0's claim is reserved for ml/llm-dra-0, so that whole
// H100 is its on allocation and memory (an exclusive GPU); no exporter says who computes on it,
// so usage is idle. gpu-1 is nobody's. Card 2's two 3g.40gb slices (3/7 each of an H100) cannot
// be told apart by DRA (research/notebook-mig holds one of them): idle on every basis.
TEST(AccountingShapes, Dra) {
  const auto s = Shares("dra");
  ExpectCard(s, "dgx-a/0", {{"ml/llm-dra-0", {1, 1, 0}}, {"idle", {0, 0, 1}}});
  ExpectCard(s, "dgx-a/1", {{"idle", {1, 1, 1}}});
  ExpectCard(s, "dgx-a/2", {{"idle", {1, 1, 1}}});
}

}  // namespace
}  // namespace gpuattr::accounting
