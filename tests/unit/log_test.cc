#include "gpuattr/util/log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpuattr::log {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SetSink([this](std::string_view l) { lines.emplace_back(l); });
    SetLevel(Level::kInfo);
  }
  void TearDown() override {
    ResetSink();
    SetLevel(Level::kInfo);
  }
  std::vector<std::string> lines;
};

TEST_F(LogTest, LogfmtQuotesWhenNeeded) {
  Warn("apiserver unreachable",
       {{"cluster", "kind-gpu"}, {"error", "connect: refused \"x\""}, {"n", 3}});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("level=warn msg=\"apiserver unreachable\" cluster=kind-gpu"));
  EXPECT_THAT(lines[0], HasSubstr("error=\"connect: refused \\\"x\\\"\""));
  EXPECT_THAT(lines[0], HasSubstr(" n=3"));
  EXPECT_THAT(lines[0], Not(HasSubstr("\n")));
}

TEST_F(LogTest, LevelsFilter) {
  Debug("hidden");
  Info("shown");
  SetLevel(Level::kError);
  Warn("hidden too");
  Error("shown too", {{"multi", "a\nb"}});
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[1], HasSubstr("multi=\"a\\nb\""));
}

TEST_F(LogTest, ParseLevelNames) {
  Level l;
  EXPECT_TRUE(ParseLevel("debug", l));
  EXPECT_EQ(l, Level::kDebug);
  EXPECT_TRUE(ParseLevel("warn", l));
  EXPECT_FALSE(ParseLevel("loud", l));
}

}  // namespace
}  // namespace gpuattr::log
