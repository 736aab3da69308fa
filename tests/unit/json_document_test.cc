#include "gpuattr/util/json_document.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/json_compare.h"

namespace gpuattr {
namespace {

using ::testing::HasSubstr;

JsonDocument Parse(std::string text) {
  auto r = JsonDocument::Parse(std::move(text));
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? std::move(r).value() : JsonDocument();
}

std::string ParseError(std::string text) {
  auto r = JsonDocument::Parse(std::move(text));
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.error().message;
}

TEST(JsonDocument, ObjectsArraysAndScalars) {
  JsonDocument doc = Parse(R"( {"a": 1, "b": [true, false, null, -2.5e1, "x"], "c": {}} )");
  JsonValue root = doc.Root();
  ASSERT_TRUE(root.is_object());
  EXPECT_EQ(root.size(), 3u);
  EXPECT_EQ(root.Find("a").integer(), 1);
  JsonValue b = root.Find("b");
  ASSERT_TRUE(b.is_array());
  std::vector<std::string> types;
  for (JsonValue e : b.Elements()) types.push_back(e.type_name());
  EXPECT_EQ(types, (std::vector<std::string>{"boolean", "boolean", "null", "number", "string"}));
  std::vector<JsonValue> e(b.Elements().begin(), b.Elements().end());
  EXPECT_TRUE(e[0].boolean());
  EXPECT_FALSE(e[1].boolean());
  EXPECT_DOUBLE_EQ(e[3].number(), -25.0);
  EXPECT_FALSE(e[3].is_integer());
  EXPECT_EQ(e[4].str(), "x");
  EXPECT_TRUE(root.Find("c").is_object());
  EXPECT_EQ(root.Find("c").size(), 0u);
  EXPECT_TRUE(root.Find("missing").is_null());
  EXPECT_TRUE(b.Find("a").is_null());  // not an object
  EXPECT_EQ(b.Find("a").str(), "");
}

TEST(JsonDocument, MembersInDocumentOrderAndTheLastDuplicateWins) {
  JsonDocument doc = Parse(R"({"z": 1, "a": {"n": [1, [2, 3]]}, "z": 2})");
  std::vector<std::string> keys;
  for (auto m : doc.Root().Members()) keys.emplace_back(m.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"z", "a", "z"}));
  EXPECT_EQ(doc.Root().Find("z").integer(), 2);  // as nlohmann's DOM keeps it
}

TEST(JsonDocument, StringsWithEscapesAndUtf8) {
  JsonDocument doc = Parse(R"(["plain", "t\"ab\\\/\b\f\n\r\t", "\u00e9\u20ac\ud83d\ude00", "é€😀",
                                "a\u0000b"])");
  std::vector<std::string_view> s;
  for (JsonValue e : doc.Root().Elements()) s.push_back(e.str());
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0], "plain");
  EXPECT_EQ(s[1], "t\"ab\\/\b\f\n\r\t");
  EXPECT_EQ(s[2], "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  EXPECT_EQ(s[3], s[2]);
  EXPECT_EQ(s[4], std::string_view("a\0b", 3));
}

TEST(JsonDocument, Numbers) {
  JsonDocument doc = Parse(
      "[0, -0, 9223372036854775807, -9223372036854775808, 9223372036854775808, 1.5, 1e2, 1E-2,"
      " 1e-999, 4e-320]");
  std::vector<JsonValue> n(doc.Root().Elements().begin(), doc.Root().Elements().end());
  ASSERT_EQ(n.size(), 10u);
  EXPECT_TRUE(n[0].is_integer());
  EXPECT_EQ(n[2].integer(), INT64_MAX);
  EXPECT_EQ(n[3].integer(), INT64_MIN);
  EXPECT_FALSE(n[4].is_integer());  // beyond int64: a float, as the decoders expect no more
  EXPECT_DOUBLE_EQ(n[4].number(), 9223372036854775808.0);
  EXPECT_DOUBLE_EQ(n[5].number(), 1.5);
  EXPECT_FALSE(n[6].is_integer());
  EXPECT_DOUBLE_EQ(n[6].number(), 100.0);
  EXPECT_DOUBLE_EQ(n[7].number(), 0.01);
  EXPECT_EQ(n[8].number(), 0.0);  // underflow
  EXPECT_GT(n[9].number(), 0.0);  // a denormal
  // Beyond any double: refused (as nlohmann refuses it).
  EXPECT_THAT(ParseError("[1e999]"), HasSubstr("number out of range"));
  EXPECT_THAT(ParseError("[-1e999]"), HasSubstr("number out of range"));
}

TEST(JsonDocument, ErrorsSayWhatAndWhere) {
  EXPECT_THAT(ParseError(""), HasSubstr("at byte 0: unexpected end of input"));
  EXPECT_THAT(ParseError("{\"a\" 1}"), HasSubstr("at byte 5: expected ':'"));
  EXPECT_THAT(ParseError("[1,]"), HasSubstr("expected a value"));
  EXPECT_THAT(ParseError("{\"a\":1,}"), HasSubstr("expected a member name"));
  EXPECT_THAT(ParseError("[1] x"), HasSubstr("after the value"));
  EXPECT_THAT(ParseError("01"), HasSubstr("after the value"));
  EXPECT_THAT(ParseError("-"), HasSubstr("number"));
  EXPECT_THAT(ParseError("1."), HasSubstr("digits must follow '.'"));
  EXPECT_THAT(ParseError("1e+"), HasSubstr("exponent"));
  EXPECT_THAT(ParseError("tru"), HasSubstr("invalid literal"));
  EXPECT_THAT(ParseError("\"a\tb\""), HasSubstr("control character"));
  EXPECT_THAT(ParseError("\"\\x\""), HasSubstr("invalid escape"));
  EXPECT_THAT(ParseError("\"\\u12g4\""), HasSubstr("4 hex digits"));
  EXPECT_THAT(ParseError("\"\\ud800\""), HasSubstr("surrogate"));
  EXPECT_THAT(ParseError("\"\\udc00\""), HasSubstr("surrogate"));
  EXPECT_THAT(ParseError("\"\xC0\xAF\""), HasSubstr("UTF-8"));          // overlong
  EXPECT_THAT(ParseError("\"\xED\xA0\x80\""), HasSubstr("UTF-8"));      // a surrogate
  EXPECT_THAT(ParseError("\"\xF4\x90\x80\x80\""), HasSubstr("UTF-8"));  // beyond U+10FFFF
  EXPECT_THAT(ParseError("\"\xE2\x82\""), HasSubstr("UTF-8"));          // truncated
  EXPECT_THAT(ParseError("\"abc"), HasSubstr("end of input in a string"));
  // A raw NUL is not the end of the text (nlohmann stops there, as at the end of a C string).
  EXPECT_THAT(ParseError(std::string("3\0junk", 6)), HasSubstr("after the value"));
  EXPECT_THAT(ParseError(std::string("\"a\0b\"", 5)), HasSubstr("control character"));
}

TEST(JsonDocument, NestingIsBounded) {
  std::string ok(JsonDocument::kMaxDepth, '[');
  ok += std::string(JsonDocument::kMaxDepth, ']');
  EXPECT_TRUE(JsonDocument::Parse(ok).ok());
  std::string deep(JsonDocument::kMaxDepth + 1, '[');
  deep += std::string(JsonDocument::kMaxDepth + 1, ']');
  EXPECT_THAT(ParseError(deep), HasSubstr("nested too deeply"));
  // A million brackets: an error, not a stack overflow.
  EXPECT_THAT(ParseError(std::string(1 << 20, '[')), HasSubstr("nested too deeply"));
}

TEST(JsonDocument, DefaultValueIsNull) {
  JsonValue v;
  EXPECT_TRUE(v.is_null());
  EXPECT_EQ(v.size(), 0u);
  EXPECT_EQ(v.Elements().begin(), v.Elements().end());
  EXPECT_EQ(v.Members().begin(), v.Members().end());
  EXPECT_STREQ(v.type_name(), "null");
}

// The same answers as nlohmann's parser (which gpuattr used before) on every shape the decoders
// meet: valid or not, and for valid texts the same tree.
TEST(JsonDocument, AgreesWithNlohmann) {
  const char* texts[] = {
      R"({"kind":"PodList","metadata":{"continue":"x","resourceVersion":"1"},"items":[]})",
      R"({"a":[1,2,{"b":null}],"c":"\u00e9\n","d":-0.5e-3,"e":true,"f":{"g":[[],{}]}})",
      R"([1e400])",
      R"([4e-320, 1e-400, 12345678901234567890, -12345678901234567890])",
      "  [\"\\ud83d\\ude00\", \"\xf0\x9f\x98\x80\"]  ",
      "[1,]",
      "{,}",
      "[01]",
      "\"\\u0000\"",
      "nul",
      "[\"\x7f\"]",
      "\"\xff\"",
      "{\"a\":}",
      "",
      " ",
      "[-]",
      "[1.e5]",
      "[.5]",
      "[+1]",
      "[1e5.5]",
      "\"\\/\"",
      "{\"\":\"\"}",
  };
  for (const char* t : texts) {
    SCOPED_TRACE(t);
    auto ours = JsonDocument::Parse(t);
    nlohmann::json theirs = nlohmann::json::parse(t, nullptr, /*allow_exceptions=*/false);
    ASSERT_EQ(ours.ok(), !theirs.is_discarded()) << (ours.ok() ? "" : ours.error().message);
    if (ours.ok()) {
      EXPECT_EQ(testing::JsonDiff(ours->Root(), theirs), "");
    }
  }
}

}  // namespace
}  // namespace gpuattr
