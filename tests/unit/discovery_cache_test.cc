#include "gpuattr/discovery/cache.h"

#include <gtest/gtest.h>

#include "gpuattr/util/clock.h"
#include "support/fake_clock.h"

namespace gpuattr::discovery {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

Candidate Cand(std::string pod, Role role = Role::kExporter, std::string uid = "") {
  Candidate c;
  c.namespace_ = "ns";
  c.pod = std::move(pod);
  c.uid = uid.empty() ? "uid-" + c.pod : uid;
  c.port = 9400;
  c.role = role;
  return c;
}

ProbeVerdict Verdict(Outcome o) {
  ProbeVerdict v;
  v.outcome = o;
  v.kind = IsAccepted(o) ? sources::BodyKind::kDcgm : sources::BodyKind::kUnrecognised;
  return v;
}

TEST(TtlFor, ExporterResultsMinuteInferenceNegativesLonger) {
  CacheTtls t;
  EXPECT_EQ(TtlFor(Role::kExporter, Outcome::kUnrecognised, t), seconds(60));
  EXPECT_EQ(TtlFor(Role::kExporter, Outcome::kError, t), seconds(0));  // first: next cycle
  EXPECT_EQ(TtlFor(Role::kExporter, Outcome::kError, t, 2), seconds(60));
  EXPECT_EQ(TtlFor(Role::kExporter, Outcome::kAccepted, t), seconds(60));
  EXPECT_EQ(TtlFor(Role::kInference, Outcome::kAccepted, t), seconds(60));
  EXPECT_EQ(TtlFor(Role::kInference, Outcome::kUnrecognised, t), minutes(10));
  EXPECT_EQ(TtlFor(Role::kInference, Outcome::kError, t), minutes(2));
}

TEST(DiscoveryCache, EveryResultIsCachedUntilItExpires) {
  FakeClock clock;
  DiscoveryCache cache;
  std::vector<Candidate> cur = {Cand("a"), Cand("b")};
  EXPECT_EQ(cache.Due(cur, clock.Now()).size(), 2u);
  cache.Record(cur[0], Verdict(Outcome::kUnrecognised), {}, clock.Now(), 0);
  cache.Record(cur[1], Verdict(Outcome::kError), {}, clock.Now(), 0);
  // The first failed probe of an exporter is due again at the next cycle (issue 25: it hid the
  // node for a minute); the second failure in a row waits the period like any other result.
  ASSERT_EQ(cache.Due(cur, clock.Now()).size(), 1u);
  EXPECT_EQ(cache.Due(cur, clock.Now())[0].pod, "b");
  cache.Record(cur[1], Verdict(Outcome::kError), {}, clock.Now(), 0);
  EXPECT_TRUE(cache.Due(cur, clock.Now()).empty());
  clock.Advance(seconds(59));
  EXPECT_TRUE(cache.Due(cur, clock.Now()).empty());
  clock.Advance(seconds(1));
  EXPECT_EQ(cache.Due(cur, clock.Now()).size(), 2u);
}

TEST(DiscoveryCache, InferenceNegativeCaches) {
  FakeClock clock;
  DiscoveryCache cache;
  Candidate not_inf = Cand("web", Role::kInference);
  Candidate broken = Cand("vllm", Role::kInference);
  cache.Record(not_inf, Verdict(Outcome::kUnrecognised), {}, clock.Now(), 0);
  cache.Record(broken, Verdict(Outcome::kError), {}, clock.Now(), 0);
  clock.Advance(minutes(2));
  auto due = cache.Due({not_inf, broken}, clock.Now());
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].pod, "vllm");
  clock.Advance(minutes(8));
  EXPECT_EQ(cache.Due({not_inf, broken}, clock.Now()).size(), 2u);
}

TEST(TtlFor, InferenceErrorsBackOffToTheNotInferencePeriod) {
  CacheTtls t;
  EXPECT_EQ(TtlFor(Role::kInference, Outcome::kError, t, 1), minutes(2));
  EXPECT_EQ(TtlFor(Role::kInference, Outcome::kError, t, 2), minutes(4));
  EXPECT_EQ(TtlFor(Role::kInference, Outcome::kError, t, 3), minutes(8));
  EXPECT_EQ(TtlFor(Role::kInference, Outcome::kError, t, 4), minutes(10));
  EXPECT_EQ(TtlFor(Role::kInference, Outcome::kError, t, 1000), minutes(10));
  EXPECT_EQ(TtlFor(Role::kExporter, Outcome::kError, t, 5), seconds(60));  // exporters: no backoff
  t.inference_error = minutes(20);  // an error period above the cap is kept as given
  EXPECT_EQ(TtlFor(Role::kInference, Outcome::kError, t, 3), minutes(20));
}

TEST(DiscoveryCache, RepeatedErrorsOfOnePodBackOffAndASuccessResets) {
  FakeClock clock;
  DiscoveryCache cache;
  Candidate c = Cand("train", Role::kInference);
  auto due_after = [&](std::chrono::minutes m) {
    clock.Advance(m);
    return cache.Due({c}, clock.Now()).size();
  };
  cache.Record(c, Verdict(Outcome::kError), {}, clock.Now(), 0);
  EXPECT_EQ(due_after(minutes(2)), 1u);
  cache.Record(c, Verdict(Outcome::kError), {}, clock.Now(), 0);
  EXPECT_EQ(cache.entries().at(c.Key()).consecutive_errors, 2u);
  EXPECT_EQ(due_after(minutes(3)), 0u);
  EXPECT_EQ(due_after(minutes(1)), 1u);  // 4 min
  cache.Record(c, Verdict(Outcome::kError), {}, clock.Now(), 0);
  EXPECT_EQ(due_after(minutes(7)), 0u);
  EXPECT_EQ(due_after(minutes(1)), 1u);  // 8 min
  cache.Record(c, Verdict(Outcome::kAccepted), {}, clock.Now(), 0);
  EXPECT_EQ(cache.entries().at(c.Key()).consecutive_errors, 0u);
  clock.Advance(minutes(1));
  cache.Record(c, Verdict(Outcome::kError), {}, clock.Now(), 0);
  EXPECT_EQ(due_after(minutes(2)), 1u);  // back to 2 min
  // A replaced pod (new uid) starts over too.
  cache.Record(c, Verdict(Outcome::kError), {}, clock.Now(), 0);
  Candidate replaced = Cand("train", Role::kInference, "uid-new");
  cache.Record(replaced, Verdict(Outcome::kError), {}, clock.Now(), 0);
  EXPECT_EQ(cache.entries().at(c.Key()).consecutive_errors, 1u);
}

TEST(DiscoveryCache, SuccessfulScrapesKeepAnAcceptedTargetValid) {
  FakeClock clock;
  DiscoveryCache cache;
  Candidate c = Cand("dcgm");
  cache.Record(c, Verdict(Outcome::kAccepted), {}, clock.Now(), 0);
  for (int i = 0; i < 10; ++i) {
    clock.Advance(seconds(20));
    EXPECT_TRUE(cache.Due({c}, clock.Now()).empty()) << i;
    cache.Refresh(c.Key(), clock.Now());
  }
}

TEST(DiscoveryCache, RediscoveryExpiresExporterEntriesOnly) {
  FakeClock clock;
  DiscoveryCache cache;
  Candidate good = Cand("dcgm");
  Candidate other = Cand("gpu-thing");
  Candidate inf = Cand("web", Role::kInference);
  cache.Record(good, Verdict(Outcome::kAccepted), {}, clock.Now(), 0);
  cache.Record(other, Verdict(Outcome::kUnrecognised), {}, clock.Now(), 0);
  cache.Record(inf, Verdict(Outcome::kUnrecognised), {}, clock.Now(), 0);
  cache.RequestRediscovery();
  auto due = cache.Due({good, other, inf}, clock.Now());
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].pod, "dcgm");
  EXPECT_EQ(due[1].pod, "gpu-thing");
  cache.RediscoveryDone();
  EXPECT_TRUE(cache.Due({good, other, inf}, clock.Now()).empty());
}

TEST(DiscoveryCache, ReplacedOrVanishedPodsArePruned) {
  FakeClock clock;
  DiscoveryCache cache;
  Candidate old_pod = Cand("dcgm", Role::kExporter, "uid-1");
  Candidate gone = Cand("gone");
  cache.Record(old_pod, Verdict(Outcome::kAccepted), {}, clock.Now(), 0);
  cache.Record(gone, Verdict(Outcome::kAccepted), {}, clock.Now(), 0);
  Candidate new_pod = Cand("dcgm", Role::kExporter, "uid-2");  // same name, new pod
  EXPECT_EQ(cache.Due({new_pod}, clock.Now()).size(), 1u);
  cache.Prune({new_pod});
  EXPECT_TRUE(cache.entries().empty());
}

}  // namespace
}  // namespace gpuattr::discovery
