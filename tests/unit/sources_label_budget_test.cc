// The label budget (sources/label_budget.h, docs/design.md#rejected-lines): at most 256 bytes, no
// control character (C0, DEL, C1), no bidirectional override or isolate. A line with such a label
// is rejected whole before a reader holds anything of it (sources/body.cc, the query API's reader),
// counted by reason.
#include "gpuattr/sources/label_budget.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuattr/sources/body.h"
#include "gpuattr/sources/promapi.h"

namespace gpuattr::sources {
namespace {

TEST(LabelBudget, AtMost256Bytes) {
  EXPECT_EQ(LabelTextVerdict(std::string(256, 'a')), "");
  EXPECT_EQ(LabelTextVerdict(std::string(257, 'a')), kLabelTooLong);
  EXPECT_EQ(LabelTextVerdict(std::string(1 << 20, 'm')), kLabelTooLong);  // the 1 MiB model name
  // Length first: a long value with a control character is too long.
  EXPECT_EQ(LabelTextVerdict(std::string(300, '\x1b')), kLabelTooLong);
  EXPECT_EQ(LabelTextVerdict(""), "");
}

TEST(LabelBudget, ControlCharactersAreBad) {
  for (int c = 0; c < 0x20; ++c)
    EXPECT_EQ(LabelTextVerdict("a" + std::string(1, static_cast<char>(c)) + "b"), kBadLabel) << c;
  EXPECT_EQ(LabelTextVerdict("a\x7f"), kBadLabel);      // DEL
  EXPECT_EQ(LabelTextVerdict("\x1b[2J"), kBadLabel);    // ESC: clears a terminal
  EXPECT_EQ(LabelTextVerdict("bell\a"), kBadLabel);     // BEL
  EXPECT_EQ(LabelTextVerdict("a\xc2\x80"), kBadLabel);  // U+0080, the first C1
  EXPECT_EQ(LabelTextVerdict("a\xc2\x9b"
                             "2J"),
            kBadLabel);                                 // U+009B CSI
  EXPECT_EQ(LabelTextVerdict("a\xc2\x9f"), kBadLabel);  // U+009F, the last C1
}

TEST(LabelBudget, BidirectionalOverridesAndIsolatesAreBad) {
  const char* bad[] = {"\xe2\x80\xaa", "\xe2\x80\xab", "\xe2\x80\xac", "\xe2\x80\xad",
                       "\xe2\x80\xae",  // U+202A..U+202E; U+202E: right-to-left override
                       "\xe2\x81\xa6", "\xe2\x81\xa7", "\xe2\x81\xa8", "\xe2\x81\xa9"};  // 2066..9
  for (const char* b : bad) EXPECT_EQ(LabelTextVerdict(std::string("ml") + b + "gnp"), kBadLabel);
}

TEST(LabelBudget, OtherTextIsFine) {
  for (const char* ok : {"meta-llama/Llama-3.1-70B-Instruct", "NVIDIA H100 80GB HBM3",
                         "00000000:07:00.0", "équipe", "模型", "\xf0\x9f\x9a\x80",
                         "\xc2\xa0",      // U+00A0, just past C1
                         "\xe2\x80\xa9",  // U+2029, just before the overrides
                         "\xe2\x80\xaf",  // U+202F, just after
                         "\xe2\x81\xa5",  // U+2065, just before the isolates
                         "\xe2\x81\xaa",  // U+206A, just after
                         "tab-free text with spaces"})
    EXPECT_EQ(LabelTextVerdict(ok), "") << ok;
}

TEST(LabelBudget, LabelsVerdictLooksAtNamesAndValues) {
  const std::string long_name(300, 'n');
  std::vector<expo::Label> labels = {{"gpu", "0"}, {"UUID", "GPU-1"}};
  EXPECT_EQ(LabelsVerdict(labels), "");
  labels.push_back({long_name, "x"});
  EXPECT_EQ(LabelsVerdict(labels), kLabelTooLong);
  labels.back() = {"modelName", "H100\xe2\x80\xae"};
  EXPECT_EQ(LabelsVerdict(labels), kBadLabel);
}

uint64_t Rejected(const BodyRead& r, std::string_view reason) {
  const auto& m = StatsOf(*r.readings).rejected;
  auto it = m.find(std::string(reason));
  return it == m.end() ? 0 : it->second;
}

// Issue 25: 12 GPU pods serving ~1 MiB vLLM model names made a 189 MB /metrics.
TEST(LabelBudget, EveryReaderRejectsTheLineBeforeHoldingIt) {
  const std::string huge((1 << 20) - 1024, 'm');  // just under the parser's 1 MiB line cap
  const BodyRead vllm = ReadBody("vllm:num_requests_running{model_name=\"" + huge +
                                     "\"} 3\n"
                                     "vllm:num_requests_running{model_name=\"small\"} 1\n"
                                     "vllm:num_requests_waiting{model_name=\"bad\\nname\"} 1\n",
                                 BodyKind::kVllm);
  ASSERT_TRUE(vllm.readings);
  const auto& models = std::get<InferenceReadings>(*vllm.readings).models;
  ASSERT_EQ(models.size(), 1u);
  EXPECT_EQ(models[0].model_name, "small");
  EXPECT_EQ(Rejected(vllm, kLabelTooLong), 1u);
  EXPECT_EQ(Rejected(vllm, kBadLabel), 1u);  // the escaped newline, unescaped

  const BodyRead dcgm = ReadBody(
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\"} 100\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"GPU-2\",modelName=\"H100\xe2\x80\xae\"} 999\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-1\",namespace=\"ml\",pod=\"" +
          std::string(300, 'p') + "\"} 1\n",
      BodyKind::kDcgm);
  ASSERT_TRUE(dcgm.readings);
  const auto& records = std::get<DcgmReadings>(*dcgm.readings).records;
  ASSERT_EQ(records.size(), 1u);  // the rejected lines made no device, no pod
  EXPECT_FALSE(records[0].pod);
  EXPECT_EQ(Rejected(dcgm, kBadLabel), 1u);
  EXPECT_EQ(Rejected(dcgm, kLabelTooLong), 1u);

  const BodyRead process = ReadBody(
      "gpu_process_memory_bytes{namespace=\"ml\",pod=\"a\x1b[31m\",uuid=\"GPU-1\",gpu=\"0\","
      "pid=\"1\"} 1e9\n"
      "gpu_total_memory_bytes{uuid=\"GPU-1\",gpu=\"0\"} 8e10\n",
      BodyKind::kProcess);
  ASSERT_TRUE(process.readings);
  EXPECT_TRUE(std::get<ProcessReadings>(*process.readings).processes.empty());
  EXPECT_EQ(Rejected(process, kBadLabel), 1u);
}

// A query API's series carry labels from bodies too: the same budget.
TEST(LabelBudget, AQueryApisSeriesWithABadLabelIsDropped) {
  const std::string body =
      R"({"status":"success","data":{"resultType":"vector","result":[
    {"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","gpu":"0","node":"n1"},"value":[1,"100"]},
    {"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","gpu":"1","node":"n1",
      "modelName":")" +
      std::string(300, 'x') + R"("},"value":[1,"4999"]},
    {"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","gpu":"2","node":"n1",
      "modelName":"H100\u202e"},"value":[1,"4999"]}]}})";
  auto answer = ReadQueryAnswer(body, "query API test", {});
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer->rejected.at(std::string(kLabelTooLong)), 1u);
  EXPECT_EQ(answer->rejected.at(std::string(kBadLabel)), 1u);
  ASSERT_EQ(answer->nodes.size(), 1u);
  EXPECT_EQ(answer->nodes[0].dcgm->records.size(), 1u);
}

}  // namespace
}  // namespace gpuattr::sources
