// PodUid: a canonical UUID kept in 16 bytes, any other text as it is; either way the same text
// comes back, in comparisons and in the state file.
#include "gpuattr/ledger/pod_uid.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "gpuattr/ledger/state_codec.h"

namespace gpuattr::ledger {
namespace {

using ::testing::HasSubstr;

constexpr const char* kCanonical = "6f1c2a4e-0d1b-4b43-9a0e-3c2f5d6e7f80";

TEST(PodUid, ACanonicalUuidComesBackAsTheSameText) {
  const PodUid uid(kCanonical);
  EXPECT_FALSE(uid.empty());
  EXPECT_EQ(uid.str(), kCanonical);
  EXPECT_TRUE(uid == kCanonical);
  EXPECT_TRUE(uid == std::string(kCanonical));
  EXPECT_FALSE(uid == "6f1c2a4e-0d1b-4b43-9a0e-3c2f5d6e7f81");  // last digit differs
  EXPECT_FALSE(uid == "");
  EXPECT_EQ(uid, PodUid(std::string(kCanonical)));
  EXPECT_NE(uid, PodUid("6f1c2a4e-0d1b-4b43-9a0e-3c2f5d6e7f81"));
}

// Text that is not a canonical UUID is kept as it is: upper case (its bytes would print in lower
// case), dashes out of place, a non-hex character, a UUID with braces, any name.
TEST(PodUid, OtherTextIsKeptAsItIs) {
  for (const std::string text :
       {"6F1C2A4E-0D1B-4B43-9A0E-3C2F5D6E7F80", "6f1c2a4e0-d1b-4b43-9a0e-3c2f5d6e7f80",
        "6f1c2a4e-0d1b-4b43-9a0e-3c2f5d6e7f8g", "{6f1c2a4e-0d1b-4b43-9a0e-3c2f5d6e7f80}",
        "6f1c2a4e-0d1b-4b43-9a0e-3c2f5d6e7f8", "uid-a", "x"}) {
    const PodUid uid(text);
    EXPECT_EQ(uid.str(), text);
    EXPECT_TRUE(uid == text) << text;
    EXPECT_FALSE(uid == kCanonical) << text;
    EXPECT_NE(uid, PodUid(kCanonical)) << text;
    const PodUid copy = uid;  // shares the text
    EXPECT_EQ(copy, uid);
    EXPECT_EQ(copy.str(), text);
  }
  // The upper-case form names the same UUID, but is other text: not equal to the canonical one.
  EXPECT_NE(PodUid("6F1C2A4E-0D1B-4B43-9A0E-3C2F5D6E7F80"), PodUid(kCanonical));
}

TEST(PodUid, EmptyIsUnknown) {
  const PodUid none, from_text("");
  EXPECT_TRUE(none.empty());
  EXPECT_TRUE(from_text.empty());
  EXPECT_EQ(none, from_text);
  EXPECT_EQ(none.str(), "");
  EXPECT_TRUE(none == "");
  EXPECT_NE(none, PodUid("uid-a"));
  std::ostringstream out;
  out << PodUid(kCanonical) << "|" << none << "|" << PodUid("uid-a");
  EXPECT_EQ(out.str(), std::string(kCanonical) + "||uid-a");
}

// Every form survives the state file, in the energy records and the GPU-hours records, and the
// "seen_pods" keys find their records again.
TEST(PodUid, EveryFormRoundTripsThroughTheStateFile) {
  const std::vector<std::string> uids = {kCanonical, "6F1C2A4E-0D1B-4B43-9A0E-3C2F5D6E7F80",
                                         "uid-a", ""};
  LedgerState s;
  s.last_cycle_unix = 1764474000;
  s.accounting.last_unix = 1764474000;
  for (size_t i = 0; i < uids.size(); ++i) {
    const kube::PodId id{"ml", "pod-" + std::to_string(i)};
    PodRecord energy;
    energy.uid = uids[i];
    energy.node = "gpu-1";
    s.pods[id] = energy;
    PodHoursRecord r;
    r.uid = uids[i];
    r.node = "gpu-1";
    r.total.hours = {1.5, 1.25, 0.5};
    r.seen = uids[i].empty() ? SeenAs::kName : SeenAs::kUid;
    s.accounting.pod_hours[id] = r;
  }
  const StateFileContents contents{{"lab", s}};
  const std::string text = EncodeStateFile(contents);
  for (const std::string& uid : uids) {
    if (uid.empty()) continue;
    EXPECT_THAT(text, HasSubstr("\"uid\": \"" + uid + "\""));
  }
  auto back = DecodeStateFile(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, contents);
  const LedgerState& b = back->at("lab");
  for (size_t i = 0; i < uids.size(); ++i) {
    const kube::PodId id{"ml", "pod-" + std::to_string(i)};
    EXPECT_EQ(b.pods.at(id).uid.str(), uids[i]);
    EXPECT_EQ(b.accounting.pod_hours.at(id).uid.str(), uids[i]);
    EXPECT_EQ(b.accounting.pod_hours.at(id).seen, s.accounting.pod_hours.at(id).seen) << i;
  }
}

}  // namespace
}  // namespace gpuattr::ledger
