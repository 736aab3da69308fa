// The state file's decoder on the tape parser (util/json_document.h,
// docs/accounting.md#loading-time): every part a written file holds comes back as it was, and the
// rules of the format that nlohmann's DOM defined still hold: integers and floats are the same
// numbers, a key holding null is present, the last of duplicate keys wins, sections are read in key
// order, numbers in messages are written as json::dump writes them, a byte order mark is skipped.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "gpuattr/ledger/state_codec.h"

namespace gpuattr::ledger {
namespace {

using ::testing::HasSubstr;

GpuHours Hours(double base, bool priced) {
  GpuHours g;
  g.hours = {base, base / 3, base * 1e-7};
  g.priced = priced;
  if (priced) g.cost = {base * 2.5, 0, 1e18};
  return g;
}

// Something in every field of every part: the ledger's pods and namespaces (with marks), the
// accounting (cards, currency, days with labels, pods, namespaces, nodes, seen pods), and the
// rightsizing section; names that need escapes and non-ASCII bytes.
StateFileContents EveryPart() {
  LedgerState s;
  s.last_cycle_unix = 1764474000.125;
  s.pods[{"ml", "trainer-0"}] = {"uid-1", "gpu-1", 1764470000.5,  1764473980.125,
                                 5400.25, 250.0,   1764473990.125};
  s.pods[{"ml", "bare"}] = {"", "gpu-2", {}, {}, {}, {}, {}};
  s.namespaces["ml"] = {9000.75, 1764474000.125, {{1764470400.5, 8000.5}, {1764474000, 0}}};
  s.namespaces["équipe \"q\"\n"] = {0, 0, {}};
  AccountingState& a = s.accounting;
  a.last_unix = 1764474000.5;
  a.cards = {"gpu-1/GPU-5a1c", "gpu-2/0"};
  a.currency = "EUR";
  a.namespace_labels = {"team", "cost-center"};
  a.pod_hours[{"ml", "trainer-0"}] = {"uid-1", "gpu-1", Hours(12.5, true), SeenAs::kUid};
  a.pod_hours[{"ml", "bare"}] = {"", "gpu-2", Hours(0.25, false), SeenAs::kName};
  a.namespace_hours["ml"] = {Hours(12.75, true), 1764474000};
  a.node_idle["gpu-1"] = {Hours(3, false), 1764473000.75};
  DayTotals& day = a.days[20425];
  day.cards = Hours(48, true);
  day.idle = Hours(4, false);
  day.namespaces["ml"] = {Hours(44, true), {{"team", "vision"}, {"cost-center", "42 \\ é"}}};
  day.namespaces["web"] = {Hours(0, false), {}};
  a.days[20426].cards = Hours(1, false);
  return {{"kind-gpu", s}, {"prod \"eu\" ü", LedgerState{}}};
}

RightsizingContents Observations() {
  rightsizing::WorkloadRecord r;
  r.current = {"NVIDIA A100-SXM4-80GB", "3g.40gb", 3, 42e9};
  r.last_seen_unix = 1764474000.5;
  rightsizing::WindowSlot slot{1764460800, 3600, 12e9, {}};
  slot.utilization.Add(0);
  slot.utilization.Add(0.5, 3);
  slot.utilization.Add(0.07, 2);
  r.slots = {slot, rightsizing::WindowSlot{1764547200, 60, std::nullopt, {}}};
  rightsizing::RightsizingState s;
  s.last_cycle_unix = 1764474000.5;
  s.workloads[{"ml", "Deployment", "chat"}] = r;
  s.workloads[{"ml", "Pod", "notebook \"é\""}] = {};
  return {{"kind-gpu", s}, {"other", {}}};
}

TEST(StateDecode, AWrittenFileRoundTripsEveryPart) {
  const StateFileContents in = EveryPart();
  const RightsizingContents observations = Observations();
  const std::string text = EncodeStateFile(in, &observations);
  // The file holds every part (a part the encoder left out would round-trip trivially).
  for (const char* key : {"\"marks\"", "\"accounting\"", "\"days\"", "\"labels\"", "\"cost\"",
                          "\"seen_pods\"", "\"namespace_labels\"", "\"rightsizing\"", "\"slots\""})
    EXPECT_THAT(text, HasSubstr(key));
  RightsizingContents back_observations;
  auto back = DecodeStateFile(text, &back_observations);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, in);
  EXPECT_EQ(back_observations, observations);
  EXPECT_EQ(EncodeStateFile(*back, &back_observations), text);  // and byte for byte again
}

std::string File(const std::string& cluster) {
  return R"({"format": "gpuattr-state", "version": 2, "clusters": {"c": )" + cluster + "}}";
}

std::string Workload(const std::string& current, const std::string& slot) {
  return R"({"format": "gpuattr-state", "version": 2, "rightsizing": {"c": {"workloads": [
      {"namespace": "ml", "kind": "Pod", "name": "p", "current": )" +
         current + R"(, "slots": [)" + slot + "]}]}}}";
}

std::string Error(const std::string& text) {
  auto r = DecodeStateFile(text);
  return r.ok() ? std::string("ok") : r.error().message;
}

// The tape keeps 3 as an integer and 3.0 as a float; both are the number 3 wherever the file
// holds a number, and a count must be whole whichever way it is written.
TEST(StateDecode, IntegersAndFloatsAreTheSameNumbers) {
  for (const char* replicas : {"3", "3.0", "3e0", "0.3e1"}) {
    SCOPED_TRACE(replicas);
    RightsizingContents out;
    auto r = DecodeStateFile(
        Workload(std::string(R"({"model": "m", "profile": "", "replicas": )") + replicas + "}",
                 R"({"start_unix": 1, "utilization_zero": 2.0})"),
        &out);
    ASSERT_TRUE(r.ok()) << r.error().message;
    const rightsizing::WorkloadRecord& w = out.at("c").workloads.begin()->second;
    EXPECT_EQ(w.current.replicas, 3);
    EXPECT_EQ(w.slots.at(0).utilization.zero_count(), 2u);
  }
  EXPECT_THAT(Error(Workload(R"({"model": "m", "profile": "", "replicas": 2.5})", "")),
              HasSubstr("workloads[0].current.replicas is not a count"));
  EXPECT_THAT(Error(Workload(R"({"model": "m", "profile": "", "replicas": 1})",
                             R"({"start_unix": 1, "utilization_zero": 1e16})")),
              HasSubstr("slots[0].utilization_zero is not a count"));
  EXPECT_THAT(Error(Workload(R"({"model": "m", "profile": "", "replicas": "3"})", "")),
              HasSubstr("current.replicas is not a finite number"));

  // Joules: 5 and 5.0 are the same; out of range, the number is shown as nlohmann showed it.
  for (const char* joules : {"5", "5.0", "5e0", "500e-2"}) {
    auto r = DecodeStateFile(
        File(std::string(R"({"namespaces": [{"namespace": "ml", "joules": )") + joules + "}]}"));
    ASSERT_TRUE(r.ok()) << joules << ": " << r.error().message;
    EXPECT_EQ(r->at("c").namespaces.at("ml").joules, 5.0) << joules;
  }
  const std::pair<const char*, const char*> shown[] = {{"-5", "(-5;"},
                                                       {"-5.0", "(-5.0;"},
                                                       {"-5e0", "(-5.0;"},
                                                       {"1e19", "(1e+19;"},
                                                       {"-0.25", "(-0.25;"}};
  for (const auto& [joules, dump] : shown)
    EXPECT_THAT(Error(File(std::string(R"({"namespaces": [{"namespace": "ml", "joules": )") +
                           joules + "}]}")),
                HasSubstr(std::string("namespaces[0].joules is out of range ") + dump))
        << joules;

  // The version is an integer: 2.0 is no version (as before), 2 is.
  EXPECT_THAT(Error(R"({"format": "gpuattr-state", "version": 2.0})"),
              HasSubstr("unsupported state file version 2.0 (this gpuattr reads versions 1 to 2)"));
  EXPECT_THAT(Error(R"({"format": "gpuattr-state", "version": "2"})"),
              HasSubstr("unsupported state file version \"2\""));
  EXPECT_THAT(Error(R"({"format": "gpuattr-state"})"),
              HasSubstr("unsupported state file version (none)"));
  EXPECT_EQ(Error(R"({"format": "gpuattr-state", "version": 2})"), "ok");
}

// A key holding null is there (a list or an object must be one); for a number it is absent.
TEST(StateDecode, NullIsPresentButNoNumber) {
  EXPECT_THAT(Error(File(R"({"pods": null})")), HasSubstr("clusters[\"c\"].pods is not a list"));
  EXPECT_THAT(Error(File(R"({"accounting": null})")),
              HasSubstr("clusters[\"c\"].accounting is not an object"));
  EXPECT_THAT(Error(File(R"({"accounting": {"nodes": [{"node": "n", "cost": null}]}})")),
              HasSubstr("accounting.nodes[0].cost is not an object"));
  EXPECT_THAT(
      Error(File(R"({"pods": [{"namespace": "ml", "pod": "p", "node": "n", "uid": null}]})")),
      HasSubstr("pods[0].uid is not a string"));
  EXPECT_THAT(Error(File(R"({"namespaces": [{"namespace": "ml", "joules": null}]})")),
              HasSubstr("namespaces[0].joules is missing"));
  auto r = DecodeStateFile(File(R"({"last_cycle_unix": null, "pods": [
      {"namespace": "ml", "pod": "p", "node": "n", "joules": null}]})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->at("c").last_cycle_unix.has_value());
  EXPECT_FALSE(r->at("c").pods.at({"ml", "p"}).joules.has_value());
  EXPECT_THAT(Error(R"({"format": "gpuattr-state", "version": 2, "rightsizing": null})"),
              HasSubstr("rightsizing is not an object"));
  EXPECT_THAT(Error(R"({"format": "gpuattr-state", "version": 2, "clusters": null})"),
              HasSubstr("clusters is not an object"));
}

// The last of duplicate keys wins, and only it is checked; sections are read in key order.
TEST(StateDecode, TheLastOfDuplicateKeysWinsAndSectionsComeInKeyOrder) {
  auto r = DecodeStateFile(R"({"format": "x", "format": "gpuattr-state", "version": 7,
      "version": 2, "clusters": {"c": 1, "c": {"namespaces": [
      {"namespace": "ml", "joules": -1, "joules": 7}]}}})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->size(), 1u);
  EXPECT_EQ(r->at("c").namespaces.at("ml").joules, 7.0);
  EXPECT_THAT(Error(R"({"format": "gpuattr-state", "version": 2, "clusters": {"c": {}, "c": 1}})"),
              HasSubstr("clusters[\"c\"] is not an object"));
  // Both bad: the first in key order is named, wherever it is in the file.
  EXPECT_THAT(Error(R"({"format": "gpuattr-state", "version": 2, "clusters": {"b": 1, "a": 2}})"),
              HasSubstr("clusters[\"a\"] is not an object"));
  RightsizingContents out;
  ASSERT_TRUE(DecodeStateFile(Workload(R"({"model": "m", "profile": "", "replicas": 9,
                                           "replicas": 2})",
                                       ""),
                              &out)
                  .ok());
  EXPECT_EQ(out.at("c").workloads.begin()->second.current.replicas, 2);
}

TEST(StateDecode, AByteOrderMarkIsSkippedAndBadJsonSaysWhere) {
  auto r = DecodeStateFile("\xEF\xBB\xBF" + File("{}"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->count("c"), 1u);
  EXPECT_NE(Error(File("{}") + "x"), "ok");
  EXPECT_NE(Error(File("{}").substr(0, 40)), "ok");
  EXPECT_NE(Error(File(R"({"pods": [{"namespace": "\xff"}]})")), "ok");  // not UTF-8
}

}  // namespace
}  // namespace gpuattr::ledger
