#include "gpuattr/util/strings.h"

#include <gtest/gtest.h>

namespace gpuattr {
namespace {

using std::chrono::milliseconds;

TEST(ParseDuration, AcceptsGoSyntax) {
  EXPECT_EQ(*ParseDuration("20s"), milliseconds(20'000));
  EXPECT_EQ(*ParseDuration("1m30s"), milliseconds(90'000));
  EXPECT_EQ(*ParseDuration("500ms"), milliseconds(500));
  EXPECT_EQ(*ParseDuration("2h"), milliseconds(7'200'000));
  EXPECT_EQ(*ParseDuration("1.5s"), milliseconds(1'500));
}

TEST(ParseDuration, RejectsWithReason) {
  auto r = ParseDuration("20");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("missing unit"), std::string::npos);
  EXPECT_FALSE(ParseDuration("").ok());
  EXPECT_FALSE(ParseDuration("5y").ok());
  EXPECT_FALSE(ParseDuration("s").ok());
}

TEST(FormatDuration, RoundTrips) {
  EXPECT_EQ(FormatDuration(milliseconds(20'000)), "20s");
  EXPECT_EQ(FormatDuration(milliseconds(120'000)), "2m");
  EXPECT_EQ(FormatDuration(milliseconds(250)), "250ms");
}

TEST(Strings, CaseInsensitiveContains) {
  EXPECT_TRUE(ContainsIgnoreCase("nvidia-DCGM-exporter", "dcgm"));
  EXPECT_FALSE(ContainsIgnoreCase("kube-proxy", "gpu"));
  EXPECT_EQ(ToLower("AbC"), "abc");
  EXPECT_EQ(Trim("  x \n"), "x");
}

}  // namespace
}  // namespace gpuattr
