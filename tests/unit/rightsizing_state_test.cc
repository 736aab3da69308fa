// Rightsizing in the state file (docs/rightsizing.md#in-the-state-file): the optional
// "rightsizing" section round-trips, older files load with no observations, its bytes per
// workload are bounded, and a restart keeps a workload's observations and recommendation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "gpuattr/ledger/state_codec.h"
#include "gpuattr/ledger/state_file.h"
#include "gpuattr/rightsizing/rightsizing.h"

namespace gpuattr::rightsizing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kT0 = 1'764'000'000;

WorkloadRecord SampleRecord() {
  WorkloadRecord r;
  r.current = {"NVIDIA A100-SXM4-80GB", "3g.40gb", 1, 42e9};
  r.last_seen_unix = kT0 + 86400.5;
  WindowSlot a{kT0, 3600, 12e9, {}};
  a.utilization.Add(0);
  a.utilization.Add(0.5, 3);
  a.utilization.Add(0.07, 2);
  WindowSlot b{kT0 + 86400, 60, std::nullopt, {}};
  b.utilization.Add(0.004);  // the zero bucket only
  r.slots = {a, b};
  return r;
}

ledger::RightsizingContents SampleContents() {
  RightsizingState s;
  s.last_cycle_unix = kT0 + 86400.5;
  s.workloads[{"ml", "Deployment", "chat"}] = SampleRecord();
  WorkloadRecord share;
  share.current = {"Tesla T4", "", 4, std::nullopt};
  s.workloads[{"ml", "Pod", "notebook \"é\""}] = share;  // no slot; a name needing escapes
  return {{"kind-gpu", s}};
}

TEST(RightsizingState, RoundTrips) {
  const ledger::RightsizingContents in = SampleContents();
  const std::string text = ledger::EncodeStateFile({}, &in);
  EXPECT_THAT(text, HasSubstr("\"rightsizing\""));
  ledger::RightsizingContents out;
  auto decoded = ledger::DecodeStateFile(text, &out);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(out, in);
  // Read without asking for it: only checked.
  EXPECT_TRUE(ledger::DecodeStateFile(text).ok());
}

TEST(RightsizingState, OlderFilesHaveNoneAndNoneWritesNothing) {
  const std::string older = R"({"clusters": {"kind-gpu": {"pods": []}},
                                "format": "gpuattr-state", "version": 1})";
  ledger::RightsizingContents out = SampleContents();
  ASSERT_TRUE(ledger::DecodeStateFile(older, &out).ok());
  EXPECT_TRUE(out.empty());
  // Without observations the file is byte for byte what it was before rightsizing existed.
  const ledger::RightsizingContents none;
  EXPECT_EQ(ledger::EncodeStateFile({}, &none), ledger::EncodeStateFile({}));
  EXPECT_THAT(ledger::EncodeStateFile({}), Not(HasSubstr("rightsizing")));
}

TEST(RightsizingState, BadSectionsAreErrorsNamingTheField) {
  auto error = [](const std::string& section) {
    const std::string text =
        R"({"format": "gpuattr-state", "version": 1, "rightsizing": )" + section + "}";
    auto r = ledger::DecodeStateFile(text);
    return r.ok() ? std::string("ok") : r.error().message;
  };
  EXPECT_THAT(error("[]"), HasSubstr("rightsizing is not an object"));
  const std::string slot_head =
      R"({"c": {"workloads": [{"namespace": "ml", "kind": "Pod", "name": "p", "slots": [)";
  EXPECT_THAT(error(slot_head + R"({"start_unix": 1, "utilization": "3:1"}]}]}})"),
              HasSubstr("rightsizing[\"c\"].workloads[0].slots[0].utilization has a bucket "
                        "out of range"));
  EXPECT_THAT(error(slot_head + R"({"start_unix": 1, "utilization": "x"}]}]}})"),
              HasSubstr("slots[0].utilization is not"));
  // Negative numbers are caught by the state file's range check (0 to 1e18) first.
  EXPECT_THAT(error(slot_head + R"({"start_unix": 1, "utilization_zero": -1}]}]}})"),
              HasSubstr("utilization_zero is out of range"));
  EXPECT_THAT(error(slot_head + R"({"start_unix": 1, "utilization_zero": 1.5}]}]}})"),
              HasSubstr("utilization_zero is not a count"));
  EXPECT_THAT(error(R"({"c": {"workloads": [{"kind": "Pod", "name": "p"}]}})"),
              HasSubstr("workloads[0].namespace is not a string"));
  std::string nine_slots = slot_head;
  for (int i = 0; i < 9; ++i) nine_slots += std::string(i ? "," : "") + R"({"start_unix": 1})";
  EXPECT_THAT(error(nine_slots + "]}]}}"), HasSubstr("more than 8 slots"));
}

TEST(RightsizingState, BytesPerWorkloadAreBounded) {
  // The most a workload can hold: 8 slots, every bucket of every sketch used with the largest
  // count, a long model name.
  WorkloadRecord r;
  r.current = {std::string(64, 'M'), "7g.141gb", 1, 150e9};
  r.last_seen_unix = kT0;
  for (int k = 0; k <= kSlotsPerWindow; ++k) {
    WindowSlot s{kT0 + 86400.0 * k, 86400, 141e9, {}};
    for (int i = UtilizationSketch::kMinIndex; i <= 0; ++i)
      s.utilization.Add(UtilizationSketch::ValueOf(i), UINT32_MAX);
    s.utilization.Add(0, 1'000'000'000'000);
    r.slots.push_back(s);
  }
  RightsizingState s;
  s.workloads[{std::string(63, 'n'), "StatefulSet", std::string(63, 'w')}] = r;
  const ledger::RightsizingContents one{{"c", s}};
  const size_t bytes =
      ledger::EncodeStateFile({}, &one).size() - ledger::EncodeStateFile({}).size();
  EXPECT_LE(bytes, 12u * 1024u) << bytes;  // docs/rightsizing.md#in-the-state-file: 12 KiB
}

TEST(RightsizingState, ARestartKeepsTheObservationsAndTheRecommendation) {
  // One whole A100 80GB pod of a Deployment, 12 GB used at 10 %, every minute.
  attribution::Attribution a;
  attribution::Device d;
  d.id = {"gpu-1", "0", std::nullopt};
  d.model = "NVIDIA A100-SXM4-80GB";
  d.memory_total_bytes = 85899345920;
  d.utilization = 0.10;
  a.devices.push_back(d);
  attribution::PodDevice link;
  link.pod = {"ml", "chat-abc12-x"};
  link.memory_used_bytes = 12e9;
  a.pod_devices.push_back(link);
  kube::ClusterObjects objects;
  kube::Pod pod;
  pod.namespace_ = "ml";
  pod.name = "chat-abc12-x";
  pod.labels["pod-template-hash"] = "abc12";
  pod.owners.push_back({"ReplicaSet", "chat-abc12", true, "apps/v1"});
  objects.pods[pod.Key()] = pod;
  const RightsizingParams params{7 * 86400, 200, 0.2, 300};  // 200 s before a recommendation

  char tmpl[] = "/tmp/rightsizing-state-XXXXXX";
  const fs::path dir = ::mkdtemp(tmpl);
  const std::string path = (dir / "state.json").string();
  {
    auto f = ledger::StateFile::Open(path, true);
    Tracker t(params, f->LoadRightsizing("kind-gpu"));
    t.Record(a, objects, kT0);
    t.Record(a, objects, kT0 + 60);
    const RightsizingView v = t.Record(a, objects, kT0 + 120);
    EXPECT_EQ(ReasonName(v.workloads[0].recommendation.reason), "insufficient_data");  // 120 s
    f->Save("kind-gpu", ledger::LedgerState{}, &t.state());
  }
  auto f = ledger::StateFile::Open(path, true);
  Tracker restarted(params, f->LoadRightsizing("kind-gpu"));
  // One missed cycle while restarting (120 s ≤ the 300 s gap): counted as observed, 240 s.
  const RightsizingView v = restarted.Record(a, objects, kT0 + 240);
  ASSERT_EQ(v.workloads.size(), 1u);
  EXPECT_DOUBLE_EQ(v.workloads[0].observed_seconds, 240);
  EXPECT_DOUBLE_EQ(*v.workloads[0].memory_peak_bytes, 12e9);
  EXPECT_EQ(v.workloads[0].recommendation.recommended, "1g.20gb");
  EXPECT_EQ(ReasonName(v.workloads[0].recommendation.reason), "fits_smaller");
  EXPECT_EQ(f->LoadRightsizing("other"), RightsizingState{});
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpuattr::rightsizing
