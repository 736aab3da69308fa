#include "gpuattr/util/log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
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
    SetLineFormat(LineFormat::kLogfmt);
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

// key → value of a logfmt line (values unquoted and unescaped).
std::map<std::string, std::string> LogfmtFields(const std::string& line) {
  static const std::regex pair(R"re(([a-z_]+)=("((?:[^"\\]|\\.)*)"|[^ ]*))re");
  std::map<std::string, std::string> out;
  for (auto it = std::sregex_iterator(line.begin(), line.end(), pair); it != std::sregex_iterator();
       ++it) {
    const std::string v = (*it)[3].matched ? (*it)[3].str() : (*it)[2].str();
    std::string plain;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] != '\\' || i + 1 == v.size()) {
        plain += v[i];
        continue;
      }
      ++i;
      plain += v[i] == 'n' ? '\n' : v[i];
    }
    out[(*it)[1]] = plain;
  }
  return out;
}

// --log.format json: each event is one JSON object with the logfmt line's fields, in its order
// (ts, level, msg, then the event's), every value a string; quotes, newlines and control bytes
// escaped.
TEST_F(LogTest, JsonLinesParseAndCarryTheLogfmtFields) {
  const auto event = [] {
    Warn("cycle error", {{"cluster", "kind \"gpu\""}, {"err", "a\nb\\c\x01"}, {"n", 3}});
  };
  event();
  SetLineFormat(LineFormat::kJson);
  event();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[1], Not(HasSubstr("\n")));
  nlohmann::json j = nlohmann::json::parse(lines[1]);  // throws (fails) when it is no JSON
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["level"], "warn");
  EXPECT_EQ(j["msg"], "cycle error");
  EXPECT_EQ(j["cluster"], "kind \"gpu\"");
  EXPECT_EQ(j["err"], "a\nb\\c\x01");
  EXPECT_EQ(j["n"], "3");
  EXPECT_TRUE(std::regex_match(j["ts"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));
  // The same fields as the logfmt line (the timestamps aside).
  auto logfmt = LogfmtFields(lines[0]);
  EXPECT_EQ(logfmt.size(), j.size());
  for (const auto& [k, v] : logfmt) {
    if (k != "ts" && k != "err") {
      EXPECT_EQ(j[k], v) << k;
    }
  }
  EXPECT_EQ(FormatJson(Level::kInfo, "m", {{"a", "1"}, {"b", "2"}}).substr(0, 7), "{\"ts\":\"");
  EXPECT_THAT(FormatJson(Level::kInfo, "m", {{"a", "1"}, {"b", "2"}}),
              HasSubstr("\"level\":\"info\",\"msg\":\"m\",\"a\":\"1\",\"b\":\"2\"}"));
}

TEST_F(LogTest, ParseLineFormatNames) {
  LineFormat f;
  EXPECT_TRUE(ParseLineFormat("json", f));
  EXPECT_EQ(f, LineFormat::kJson);
  EXPECT_TRUE(ParseLineFormat("logfmt", f));
  EXPECT_EQ(f, LineFormat::kLogfmt);
  EXPECT_FALSE(ParseLineFormat("JSON", f));
}

}  // namespace
}  // namespace gpuattr::log
