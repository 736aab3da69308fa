// The discovery report as the loop keeps it across a failed cycle (discovery/report.h).
#include <gtest/gtest.h>

#include "gpuattr/discovery/report.h"

namespace gpuattr::discovery {
namespace {

DiscoveryReport TwoExporters() {
  DiscoveryReport r;
  r.cluster = "lab";
  r.exporters.resize(2);
  r.exporters[0].pod = "dcgm-a";
  r.exporters[0].up = true;
  r.exporters[0].http_status = 200;
  r.exporters[0].bytes = 6000;
  r.exporters[0].rejected = {{"unknown_pod", 1}};
  r.exporters[1].pod = "dcgm-b";
  r.exporters[1].http_status = 503;
  r.exporters[1].reason = "HTTP 503";
  r.probes.resize(1);
  r.outcome_counts = {{"accepted", 2}};
  return r;
}

TEST(DiscoveryReport, NotScrapedMarksTheUpExportersDownWithTheReason) {
  const DiscoveryReport before = TwoExporters();
  const DiscoveryReport after = MarkNotScraped(before, "not scraped: the cycle failed");
  ASSERT_EQ(after.exporters.size(), 2u);
  EXPECT_FALSE(after.exporters[0].up);
  EXPECT_EQ(after.exporters[0].http_status, 0);
  EXPECT_EQ(after.exporters[0].reason, "not scraped: the cycle failed");
  // What the last read found stays: only whether it is up now changes.
  EXPECT_EQ(after.exporters[0].bytes, 6000u);
  EXPECT_EQ(after.exporters[0].rejected, (std::map<std::string, uint64_t>{{"unknown_pod", 1}}));
}

TEST(DiscoveryReport, NotScrapedKeepsADownExportersReasonAndEverythingElse) {
  const DiscoveryReport before = TwoExporters();
  const DiscoveryReport after = MarkNotScraped(before, "not scraped");
  EXPECT_EQ(after.exporters[1].reason, "HTTP 503");
  EXPECT_EQ(after.exporters[1].http_status, 503);
  EXPECT_EQ(after.cluster, "lab");
  EXPECT_EQ(after.probes.size(), 1u);
  EXPECT_EQ(after.outcome_counts, before.outcome_counts);
  EXPECT_TRUE(before.exporters[0].up);  // the input is not changed
}

}  // namespace
}  // namespace gpuattr::discovery
