#include "gpuattr/expo/parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <regex>
#include <string>

#include "support/paths.h"

namespace gpuattr::expo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Exposition ParseText(std::string_view body, const Limits& limits = {}) {
  Exposition e;
  Parse(body, e, limits);
  return e;
}

std::string Labels(const Exposition& e, const Sample& s) {
  std::string out;
  for (const Label& l : e.LabelsOf(s)) {
    if (!out.empty()) out += ',';
    out += std::string(l.name) + "=" + std::string(l.value);
  }
  return out;
}

// Exactly one error, on `line`, whose reason is `reason`; no samples kept from it.
void ExpectOneError(std::string_view body, uint32_t line, const std::string& reason) {
  SCOPED_TRACE(std::string(body));
  Exposition e = ParseText(body);
  ASSERT_EQ(e.error_count, 1u);
  ASSERT_EQ(e.errors.size(), 1u);
  EXPECT_EQ(e.errors[0].line, line);
  EXPECT_EQ(e.errors[0].reason, reason);
  for (const Sample& s : e.samples) EXPECT_NE(s.line, line);
}

// ---------------------------------------------------------------------------------------------
// Grammar.

TEST(ExpoParser, PlainSamplesWithAndWithoutLabels) {
  auto e = ParseText("up 1\nfoo{a=\"x\",b=\"y\"} 2.5\n");
  ASSERT_EQ(e.samples.size(), 2u);
  EXPECT_EQ(e.samples[0].name, "up");
  EXPECT_EQ(e.samples[0].value, 1);
  EXPECT_EQ(e.samples[0].label_count, 0u);
  EXPECT_EQ(e.samples[0].line, 1u);
  EXPECT_EQ(e.samples[1].name, "foo");
  EXPECT_EQ(e.samples[1].value, 2.5);
  EXPECT_EQ(e.samples[1].line, 2u);
  EXPECT_EQ(Labels(e, e.samples[1]), "a=x,b=y");
  EXPECT_EQ(e.error_count, 0u);
  EXPECT_FALSE(e.truncated);
}

TEST(ExpoParser, ViewsPointIntoTheBody) {
  std::string body = "m{k=\"v\"} 1\n";
  auto e = ParseText(body);
  ASSERT_EQ(e.samples.size(), 1u);
  EXPECT_EQ(e.samples[0].name.data(), body.data());
  EXPECT_EQ(e.labels[0].name.data(), body.data() + 2);
  EXPECT_EQ(e.labels[0].value.data(), body.data() + 5);
  EXPECT_TRUE(e.unescaped.empty());
}

TEST(ExpoParser, HelpAndTypeLines) {
  auto e = ParseText(
      "# HELP a_total Help text with \\\\ and \\n.\n"
      "# TYPE a_total counter\n"
      "a_total 3\n"
      "# TYPE g gauge\n# TYPE h histogram\n# TYPE s summary\n# TYPE u untyped\n"
      "# TYPE i info\n# TYPE st stateset\n# TYPE gh gaugehistogram\n# TYPE x unknown\n"
      "# just a comment\n#no space comment\n#\n");
  EXPECT_EQ(e.error_count, 0u) << e.errors[0].Describe();
  ASSERT_EQ(e.types.size(), 9u);
  EXPECT_EQ(e.types[0].family, "a_total");
  EXPECT_EQ(e.types[0].type, MetricType::kCounter);
  EXPECT_EQ(e.types[1].type, MetricType::kGauge);
  EXPECT_EQ(e.types[2].type, MetricType::kHistogram);
  EXPECT_EQ(e.types[3].type, MetricType::kSummary);
  EXPECT_EQ(e.types[4].type, MetricType::kUntyped);
  EXPECT_EQ(e.types[5].type, MetricType::kInfo);
  EXPECT_EQ(e.types[6].type, MetricType::kStateSet);
  EXPECT_EQ(e.types[7].type, MetricType::kGaugeHistogram);
  EXPECT_EQ(e.types[8].type, MetricType::kUnknown);
  EXPECT_EQ(MetricTypeName(e.types[7].type), "gaugehistogram");
  ASSERT_EQ(e.samples.size(), 1u);
  EXPECT_EQ(e.samples[0].line, 3u);
}

TEST(ExpoParser, OpenMetricsTolerated) {
  auto e = ParseText(
      "# TYPE req counter\n"
      "# UNIT req_seconds seconds\n"
      "# HELP req Requests.\n"
      "req_total{code=\"200\"} 5 # {trace_id=\"abc\"} 1.0 1700000000.123\n"
      "req_created{code=\"200\"} 1.7e9\n"
      "# EOF\n");
  EXPECT_EQ(e.error_count, 0u) << e.errors[0].Describe();
  ASSERT_EQ(e.samples.size(), 2u);
  EXPECT_EQ(e.samples[0].value, 5);
  EXPECT_EQ(e.samples[1].name, "req_created");
  EXPECT_EQ(e.samples[1].value, 1.7e9);
}

TEST(ExpoParser, EscapesInLabelValues) {
  std::string body = R"(m{a="back\\slash",b="say \"hi\"",c="two\nlines",d="keep\t",e="plain"} 1)";
  auto e = ParseText(body);
  ASSERT_EQ(e.samples.size(), 1u) << e.errors[0].Describe();
  EXPECT_EQ(*e.LabelValue(e.samples[0], "a"), "back\\slash");
  EXPECT_EQ(*e.LabelValue(e.samples[0], "b"), "say \"hi\"");
  EXPECT_EQ(*e.LabelValue(e.samples[0], "c"), "two\nlines");
  EXPECT_EQ(*e.LabelValue(e.samples[0], "d"), "keep\\t");  // unknown escape kept as written
  EXPECT_EQ(e.unescaped.size(), 4u);
  // Unescaped values live in `unescaped`, plain ones in the body.
  auto plain = *e.LabelValue(e.samples[0], "e");
  EXPECT_GE(plain.data(), body.data());
  EXPECT_LT(plain.data(), body.data() + body.size());
  auto a = *e.LabelValue(e.samples[0], "a");
  EXPECT_EQ(a.data(), e.unescaped[0].data());
}

TEST(ExpoParser, Utf8InLabelValuesAndQuotedNames) {
  auto e = ParseText(
      "m{model=\"modèle-日本語 🚀\"} 1\n"
      "{\"my.metric\",\"label.with.dots\"=\"v\",plain=\"p\"} 2\n"
      "{\"quoted\\\"name\"} 3\n"
      "# TYPE \"my.metric\" gauge\n");
  ASSERT_EQ(e.error_count, 0u) << e.errors[0].Describe();
  ASSERT_EQ(e.samples.size(), 3u);
  EXPECT_EQ(*e.LabelValue(e.samples[0], "model"), "modèle-日本語 🚀");
  EXPECT_EQ(e.samples[1].name, "my.metric");
  EXPECT_EQ(Labels(e, e.samples[1]), "label.with.dots=v,plain=p");
  EXPECT_EQ(e.samples[2].name, "quoted\"name");
  ASSERT_EQ(e.types.size(), 1u);
  EXPECT_EQ(e.types[0].family, "my.metric");
}

TEST(ExpoParser, SpecialValues) {
  auto e = ParseText(
      "a NaN\nb +Inf\nc -Inf\nd Nan\ne Inf\nf nan\ng -0\nh 1e3\ni -1.5E-3\nj .5\nk 1.\n"
      "l +7\nm 123456789012345678901234567890\nn 0.1234567890123456789\no 52.636000\n"
      "p 18446744073709551616\nq +inf\n");
  ASSERT_EQ(e.error_count, 0u) << e.errors[0].Describe();
  ASSERT_EQ(e.samples.size(), 17u);
  EXPECT_TRUE(std::isnan(e.samples[0].value));
  EXPECT_EQ(e.samples[1].value, HUGE_VAL);
  EXPECT_EQ(e.samples[2].value, -HUGE_VAL);
  EXPECT_TRUE(std::isnan(e.samples[3].value));
  EXPECT_EQ(e.samples[4].value, HUGE_VAL);
  EXPECT_TRUE(std::isnan(e.samples[5].value));
  EXPECT_TRUE(std::signbit(e.samples[6].value));
  EXPECT_EQ(e.samples[7].value, 1000);
  EXPECT_EQ(e.samples[8].value, -1.5e-3);
  EXPECT_EQ(e.samples[9].value, 0.5);
  EXPECT_EQ(e.samples[10].value, 1);
  EXPECT_EQ(e.samples[11].value, 7);
  EXPECT_EQ(e.samples[12].value, 123456789012345678901234567890.0);
  EXPECT_EQ(e.samples[13].value, 0.1234567890123456789);
  EXPECT_EQ(e.samples[14].value, 52.636);
  EXPECT_EQ(e.samples[15].value, 18446744073709551616.0);
  EXPECT_EQ(e.samples[16].value, HUGE_VAL);
}

TEST(ExpoParser, FastPathDecimalsRoundCorrectly) {
  // Every value the fast path takes must equal what strtod gives.
  const char* values[] = {"0.1",      "0.3",        "52.636000",        "999999999999999",
                          "1.000001", "310.5",      "123456.789012345", "0.000000000000001",
                          "-2.5",     "42949672960"};
  for (const char* v : values) {
    auto e = ParseText(std::string("m ") + v + "\n");
    ASSERT_EQ(e.samples.size(), 1u) << v;
    EXPECT_EQ(e.samples[0].value, std::strtod(v, nullptr)) << v;
  }
}

TEST(ExpoParser, TimestampsAreAcceptedAndIgnored) {
  auto e = ParseText("a 1 1700000000000\nb{x=\"y\"} 2 -5\nc 3 1700000000.5\n");
  ASSERT_EQ(e.error_count, 0u) << e.errors[0].Describe();
  ASSERT_EQ(e.samples.size(), 3u);
  EXPECT_EQ(e.samples[0].value, 1);
  EXPECT_EQ(e.samples[1].value, 2);
  EXPECT_EQ(e.samples[2].value, 3);
}

TEST(ExpoParser, HistogramsAndSummariesArePlainSamples) {
  auto e = ParseText(
      "# TYPE h histogram\n"
      "h_bucket{le=\"0.1\"} 1\nh_bucket{le=\"+Inf\"} 3\nh_sum 0.7\nh_count 3\n"
      "# TYPE s summary\n"
      "s{quantile=\"0.5\"} 0.2\ns{quantile=\"0.99\"} NaN\ns_sum 1\ns_count 4\n");
  ASSERT_EQ(e.error_count, 0u);
  ASSERT_EQ(e.samples.size(), 8u);
  EXPECT_EQ(*e.LabelValue(e.samples[1], "le"), "+Inf");
  EXPECT_EQ(e.samples[2].name, "h_sum");
  EXPECT_EQ(*e.LabelValue(e.samples[5], "quantile"), "0.99");
  EXPECT_TRUE(std::isnan(e.samples[5].value));
}

TEST(ExpoParser, BlankLinesCrlfAndWhitespaceVariants) {
  auto e = ParseText(
      "\n\r\n   \n\t\n"
      "a 1\r\n"
      "  b{x=\"1\"}   2  \r\n"
      "c\t3\n"
      "d { x = \"1\" , y=\"2\" , } 4\n"
      "e{x=\"1\",} 5\n"
      "f{} 6\n"
      "g{x=\"\"}7\n"
      "  # TYPE h gauge\n"
      "h 8");  // last line without a newline
  ASSERT_EQ(e.error_count, 0u) << e.errors[0].Describe();
  ASSERT_EQ(e.samples.size(), 8u);
  EXPECT_EQ(e.samples[0].line, 5u);
  EXPECT_EQ(e.samples[0].value, 1);
  EXPECT_EQ(e.samples[1].name, "b");
  EXPECT_EQ(e.samples[1].value, 2);
  EXPECT_EQ(e.samples[2].value, 3);
  EXPECT_EQ(Labels(e, e.samples[3]), "x=1,y=2");
  EXPECT_EQ(Labels(e, e.samples[4]), "x=1");
  EXPECT_EQ(e.samples[5].label_count, 0u);
  EXPECT_EQ(e.samples[6].value, 7);
  EXPECT_EQ(*e.LabelValue(e.samples[6], "x"), "");
  EXPECT_EQ(e.samples[7].name, "h");
  EXPECT_EQ(e.samples[7].line, 13u);
  ASSERT_EQ(e.types.size(), 1u);
}

TEST(ExpoParser, LabelValueAndClear) {
  Exposition e;
  Parse("m{a=\"1\",b=\"\"} 1\nn 2\n", e);
  ASSERT_EQ(e.samples.size(), 2u);
  EXPECT_EQ(e.LabelValue(e.samples[0], "a"), std::optional<std::string_view>("1"));
  EXPECT_EQ(e.LabelValue(e.samples[0], "b"), std::optional<std::string_view>(""));
  EXPECT_EQ(e.LabelValue(e.samples[0], "c"), std::nullopt);
  EXPECT_EQ(e.LabelValue(e.samples[1], "a"), std::nullopt);

  Parse("bad line here\nm{a=\"x\\\\\"} 1\n", e);
  EXPECT_EQ(e.error_count, 1u);
  EXPECT_EQ(e.unescaped.size(), 1u);
  size_t sample_cap = e.samples.capacity();
  size_t label_cap = e.labels.capacity();
  e.Clear();
  EXPECT_TRUE(e.samples.empty());
  EXPECT_TRUE(e.labels.empty());
  EXPECT_TRUE(e.types.empty());
  EXPECT_TRUE(e.errors.empty());
  EXPECT_TRUE(e.unescaped.empty());
  EXPECT_EQ(e.error_count, 0u);
  EXPECT_FALSE(e.truncated);
  EXPECT_EQ(e.samples.capacity(), sample_cap);  // kept for reuse
  EXPECT_EQ(e.labels.capacity(), label_cap);
}

TEST(ExpoParser, ReusedExpositionDoesNotGrow) {
  std::string body;
  for (int i = 0; i < 100; ++i) {
    body += "m{gpu=\"" + std::to_string(i) + "\",x=\"y\"} " + std::to_string(i) + "\n";
  }
  Exposition e;
  Parse(body, e);
  const Sample* samples = e.samples.data();
  const Label* labels = e.labels.data();
  Parse(body, e);
  EXPECT_EQ(e.samples.data(), samples);
  EXPECT_EQ(e.labels.data(), labels);
  EXPECT_EQ(e.samples.size(), 100u);
}

// ---------------------------------------------------------------------------------------------
// Malformed lines: skipped, recorded with the line number and the reason; the rest is kept.

TEST(ExpoParserErrors, MissingValue) {
  ExpectOneError("a 1\nb\n", 2, "missing value");
  ExpectOneError("a 1\nb{x=\"1\"}\n", 2, "missing value");
  ExpectOneError("a 1\nb{x=\"1\"}   \r\n", 2, "missing value");
}

TEST(ExpoParserErrors, InvalidNumber) {
  ExpectOneError("a abc\n", 1, "invalid number \"abc\"");
  ExpectOneError("a 1\n\nb 1.2.3\n", 3, "invalid number \"1.2.3\"");
  ExpectOneError("a 0x10\n", 1, "invalid number \"0x10\"");
  ExpectOneError("a +-1\n", 1, "invalid number \"+-1\"");
  ExpectOneError("a -\n", 1, "invalid number \"-\"");
  ExpectOneError("a 1e999\n", 1, "number out of range \"1e999\"");
}

TEST(ExpoParserErrors, Timestamps) {
  ExpectOneError("a 1 later\n", 1, "invalid timestamp \"later\"");
  ExpectOneError("a 1 2 3\n", 1, "unexpected text after the timestamp: \"3\"");
}

TEST(ExpoParserErrors, LabelSets) {
  ExpectOneError("a{x=\"1} 2\n", 1, "unterminated label value (label \"x\")");
  ExpectOneError("a{x=\"1\\\"} 2\n", 1, "unterminated label value (label \"x\")");
  ExpectOneError("a{x=\"1\\", 1, "unterminated label value (label \"x\")");
  ExpectOneError("a{x=\"1\"\n", 1, "expected ',' or '}' after the value of label \"x\"");
  ExpectOneError("a{x=\"1\" y=\"2\"} 3\n", 1, "expected ',' or '}' after the value of label \"x\"");
  ExpectOneError("a{x=1} 2\n", 1, "expected '\"' to open the value of label \"x\"");
  ExpectOneError("a{x \"1\"} 2\n", 1, "expected '=' after label name \"x\"");
  ExpectOneError("a{1x=\"1\"} 2\n", 1, "invalid label name at \"1x=\\\"1\\\"} 2\"");
  ExpectOneError("a{x=\"1\",\n", 1, "unterminated label set (missing '}')");
  ExpectOneError("{x=\"1\"} 2\n", 1, "label set without a metric name");
  ExpectOneError("{\"a\",\"b\"} 2\n", 1, "two metric names in one label set");
  ExpectOneError("{\"a} 2\n", 1, "unterminated quoted name");
}

TEST(ExpoParserErrors, MetricNames) {
  ExpectOneError("a 1\n```\nb 2\n", 2, "expected a metric name, found \"```\"");
  ExpectOneError("1abc 2\n", 1, "expected a metric name, found \"1abc\"");
  ExpectOneError("a-b 2\n", 1, "unexpected \"-b\" after the metric name");
  ExpectOneError("Here is the output: 1\n", 1, "invalid number \"is\"");
}

TEST(ExpoParserErrors, InvalidUtf8) {
  ExpectOneError("a{x=\"bad \xff byte\"} 1\n", 1, "invalid UTF-8 in the value of label \"x\"");
  ExpectOneError("a{x=\"\xc3\"} 1\n", 1, "invalid UTF-8 in the value of label \"x\"");  // cut
  ExpectOneError("a{x=\"\xc0\xaf\"} 1\n", 1, "invalid UTF-8 in the value of label \"x\"");
  ExpectOneError("a{x=\"\xed\xa0\x80\"} 1\n", 1,  // a surrogate
                 "invalid UTF-8 in the value of label \"x\"");
  ExpectOneError("a{x=\"\xf4\x90\x80\x80\"} 1\n", 1,  // above U+10FFFF
                 "invalid UTF-8 in the value of label \"x\"");
  ExpectOneError("{\"m\xff\"} 1\n", 1, "invalid UTF-8 in quoted name \"m\\xff\"");
  auto e = ParseText("a{x=\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x9a\x80\"} 1\n");  // é € 🚀
  EXPECT_EQ(e.error_count, 0u);
  EXPECT_EQ(e.samples.size(), 1u);
}

TEST(ExpoParserErrors, HelpAndType) {
  ExpectOneError("# HELP\n", 1, "HELP line without a metric name");
  ExpectOneError("# TYPE   \n", 1, "TYPE line without a metric name");
  ExpectOneError("# TYPE foo\n", 1, "TYPE line for \"foo\" without a type");
  ExpectOneError("# TYPE foo bar\n", 1, "invalid metric type \"bar\"");
}

// The faulting token can be a string the line unescaped, which the rejected line then drops: the
// reason is written first (the fuzz smoke found a use-after-free here; ASan builds catch it).
TEST(ExpoParserErrors, ReasonsQuoteUnescapedTokensOfTheRejectedLine) {
  ExpectOneError("a{\"label\\\"with_a_long_escaped_name\"=\"1\" x} 2\n", 1,
                 "expected ',' or '}' after the value of label "
                 "\"label\\\"with_a_long_escaped_name\"");
  ExpectOneError("# TYPE \"family\\\"with_a_long_escaped_name\"\n", 1,
                 "TYPE line for \"family\\\"with_a_long_escaped_name\" without a type");
}

TEST(ExpoParserErrors, ControlBytesAreEscapedInReasons) {
  ExpectOneError("a \x01\x7f\n", 1, "invalid number \"\\x01\\x7f\"");
  std::string long_token(100, 'z');
  ExpectOneError("a " + long_token + "\n", 1, "invalid number \"" + std::string(40, 'z') + "...\"");
}

TEST(ExpoParserErrors, GoodLinesAroundBadOnesAreKept) {
  auto e = ParseText(
      "# TYPE a gauge\n"
      "a{x=\"1\"} 1\n"
      "a{x=\"2\" 2\n"
      "a{x=\"3\"} 3\n"
      "garbage\n"
      "a{x=\"4\"} 4\n");
  ASSERT_EQ(e.samples.size(), 3u);
  EXPECT_EQ(e.samples[0].value, 1);
  EXPECT_EQ(e.samples[1].value, 3);
  EXPECT_EQ(e.samples[2].value, 4);
  // The failed line's labels were rolled back: every sample's labels are its own.
  EXPECT_EQ(e.labels.size(), 3u);
  EXPECT_EQ(*e.LabelValue(e.samples[1], "x"), "3");
  ASSERT_EQ(e.error_count, 2u);
  EXPECT_EQ(e.errors[0].line, 3u);
  EXPECT_EQ(e.errors[1].line, 5u);
  EXPECT_EQ(e.errors[1].reason, "missing value");
  EXPECT_EQ(e.errors[1].Describe(), "line 5: missing value");
}

// ---------------------------------------------------------------------------------------------
// Limits.

TEST(ExpoParserLimits, TooManyLabels) {
  Limits limits;
  limits.max_labels_per_sample = 3;
  auto e =
      ParseText("a{a=\"1\",b=\"2\",c=\"3\"} 1\nb{a=\"1\",b=\"2\",c=\"3\",d=\"4\"} 2\n", limits);
  ASSERT_EQ(e.samples.size(), 1u);
  ASSERT_EQ(e.errors.size(), 1u);
  EXPECT_EQ(e.errors[0].line, 2u);
  EXPECT_EQ(e.errors[0].reason, "too many labels (4 > 3)");
  EXPECT_EQ(e.labels.size(), 3u);

  std::string many = "m{";
  for (int i = 0; i < 129; ++i) {
    many += 'l';  // appended piecewise: "l" + std::string trips a GCC 12 -Wrestrict false positive
    many += std::to_string(i);
    many += "=\"v\",";
  }
  many += "} 1\n";
  ExpectOneError(many, 1, "too many labels (129 > 128)");
}

// Only what is kept holds memory: a rejected line's unescaped values go with it, and TYPE lines
// are not kept when the reader says so (sources/body.cc), though still checked.
TEST(ExpoParserLimits, RejectedLinesLeaveNothingBehind) {
  std::string body;
  for (int i = 0; i < 100; ++i) body += "a{b=\"x\\ny\"} not-a-number\n";
  body += "# HELP \"c\\nd\" help with an escaped name\n";
  body += "kept{b=\"x\\ny\"} 1\n";
  Exposition e;
  Parse(body, e);
  EXPECT_EQ(e.error_count, 100u);
  ASSERT_EQ(e.samples.size(), 1u);
  EXPECT_EQ(e.unescaped.size(), 1u);  // kept's value only
  EXPECT_EQ(e.LabelValue(e.samples[0], "b"), "x\ny");

  const std::string types = "# TYPE a gauge\n# TYPE b counter\n# TYPE c nonsense\na 1\n";
  Limits no_types;
  no_types.keep_types = false;
  Parse(types, e, no_types);
  EXPECT_TRUE(e.types.empty());
  EXPECT_EQ(e.error_count, 1u);  // the invalid type, still found
  EXPECT_EQ(e.samples.size(), 1u);
  Parse(types, e);
  EXPECT_EQ(e.types.size(), 2u);
}

// The labels kept are capped like the samples: parsing stops at the sample that would pass it.
TEST(ExpoParserLimits, LabelLimitStopsAtTheSampleThatPassesIt) {
  std::string body;
  for (int i = 0; i < 10; ++i) body += "a{b=\"1\",c=\"2\"} 1\n";
  Exposition e;
  Limits limits;
  limits.max_labels = 7;
  Parse(body, e, limits);
  EXPECT_TRUE(e.label_limit_hit);
  EXPECT_FALSE(e.sample_limit_hit);
  EXPECT_EQ(e.samples.size(), 3u);
  EXPECT_EQ(e.labels.size(), 6u);
  limits.max_labels = 20;
  Parse(body, e, limits);
  EXPECT_FALSE(e.label_limit_hit);
  EXPECT_EQ(e.samples.size(), 10u);
}

TEST(ExpoParserLimits, LineLength) {
  std::string long_line = "m{a=\"" + std::string((1u << 20) + 10, 'x') + "\"} 1\n";
  ExpectOneError("a 1\n" + long_line + "b 2\n", 2, "line longer than 1048576 bytes");
  auto e = ParseText("a 1\n" + long_line + "b 2\n");
  ASSERT_EQ(e.samples.size(), 2u);
  EXPECT_EQ(e.samples[1].line, 3u);

  Limits limits;
  limits.max_line_bytes = 10;
  e = ParseText("short 1\nthis_is_long 1\n0123456789\n", limits);
  ASSERT_EQ(e.errors.size(), 2u);
  EXPECT_EQ(e.errors[0].line, 2u);
  EXPECT_EQ(e.errors[0].reason, "line longer than 10 bytes");
  EXPECT_EQ(e.errors[1].line, 3u);  // 10 bytes are allowed, but it is not a sample
  EXPECT_EQ(e.errors[1].reason, "expected a metric name, found \"0123456789\"");
}

TEST(ExpoParserLimits, BodySizeTruncatesAtTheLastCompleteLine) {
  Limits limits;
  limits.max_body_bytes = 12;  // "a 1\nbb 22\nc" fits; "c 333" is cut
  auto e = ParseText("a 1\nbb 22\nc 333\n", limits);
  EXPECT_TRUE(e.truncated);
  ASSERT_EQ(e.samples.size(), 2u);
  EXPECT_EQ(e.samples[1].value, 22);
  EXPECT_EQ(e.error_count, 0u);

  limits.max_body_bytes = 3;  // no complete line at all
  e = ParseText("a 1\n", limits);
  EXPECT_TRUE(e.truncated);
  EXPECT_TRUE(e.samples.empty());

  limits.max_body_bytes = 4;  // exactly the body: not truncated
  e = ParseText("a 1\n", limits);
  EXPECT_FALSE(e.truncated);
  EXPECT_EQ(e.samples.size(), 1u);
}

TEST(ExpoParserLimits, ErrorsKeptAreCappedButAllCounted) {
  Limits limits;
  limits.max_errors_kept = 2;
  auto e = ParseText("x\ny\nz\nok 1\nw\n", limits);
  EXPECT_EQ(e.error_count, 4u);
  ASSERT_EQ(e.errors.size(), 2u);
  EXPECT_EQ(e.errors[1].line, 2u);
  EXPECT_EQ(e.samples.size(), 1u);
}

TEST(ExpoParser, SeedFixtures) {
  auto grammar = testing::ReadFile(testing::FixturePath("exporters/parser-grammar.prom"));
  auto e = ParseText(grammar);
  EXPECT_EQ(e.error_count, 0u) << e.errors[0].Describe();
  EXPECT_EQ(e.samples.size(), 15u);
  EXPECT_EQ(e.types.size(), 3u);
  auto malformed = testing::ReadFile(testing::FixturePath("exporters/parser-malformed.prom"));
  e = ParseText(malformed);
  ASSERT_EQ(e.samples.size(), 2u);
  EXPECT_EQ(e.error_count, 8u);
  EXPECT_EQ(e.samples[1].line, 11u);
  auto om = testing::ReadFile(testing::FixturePath("exporters/parser-openmetrics-crlf.prom"));
  e = ParseText(om);
  EXPECT_EQ(e.error_count, 0u);
  EXPECT_EQ(e.samples.size(), 2u);
}

TEST(ExpoParser, EmptyBody) {
  auto e = ParseText("");
  EXPECT_TRUE(e.samples.empty());
  EXPECT_EQ(e.error_count, 0u);
}

// ---------------------------------------------------------------------------------------------
// The bitmask fast path and the general path agree, on every kind of line.

void ExpectSameBothPaths(std::string_view body) {
  SCOPED_TRACE(std::string(body.substr(0, 200)));
  Limits general;
  general.fast_path = false;
  Exposition fast = ParseText(body);
  Exposition slow = ParseText(body, general);
  ASSERT_EQ(fast.samples.size(), slow.samples.size());
  ASSERT_EQ(fast.labels.size(), slow.labels.size());
  ASSERT_EQ(fast.error_count, slow.error_count);
  for (size_t i = 0; i < fast.samples.size(); ++i) {
    EXPECT_EQ(fast.samples[i].name, slow.samples[i].name);
    EXPECT_EQ(fast.samples[i].line, slow.samples[i].line);
    EXPECT_EQ(Labels(fast, fast.samples[i]), Labels(slow, slow.samples[i]));
    if (!std::isnan(fast.samples[i].value)) {
      EXPECT_EQ(fast.samples[i].value, slow.samples[i].value);
    }
  }
  for (size_t i = 0; i < fast.errors.size(); ++i) {
    EXPECT_EQ(fast.errors[i].Describe(), slow.errors[i].Describe());
  }
}

TEST(ExpoParserFastPath, AgreesWithTheGeneralPath) {
  ExpectSameBothPaths(
      "a{x=\"1\",y=\"\"} 1\n"
      "b{x=\"1\",} 2\n"
      "c{} 3\n"
      "d{x=\"a\\\"b\"} 4\n"  // escape: general path
      "e{ x=\"1\"} 5\n"      // blank: general path
      "f{x=\"1\"\n"          // errors
      "g{x=\"1\",y=\"2\"\n"
      "h{x=\"1\"y=\"2\"} 6\n"
      "i{=\"1\"} 7\n"
      "j{1=\"1\"} 8\n"
      "k{x-y=\"1\"} 9\n"
      "l{\"q.name\"=\"1\"} 10\n"
      "{\"m\",x=\"1\"} 11\n"
      "n{x=\"1\",,y=\"2\"} 12\n"
      "o{x=\"1\"}}\n"
      "p{x=\"1\"} # exemplar {a=\"b\"} 1\n"
      "q{x=\"a\"b\"} 13\n"
      "t{x=\"\xc3\xa9\"} 14\n"  // non-ASCII: general path
      "u{x=\"\xff\"} 15\n"
      "r{x=\"1\",");  // body ends inside the label set
  std::string wide = "s{";
  for (int i = 0; i < 60; ++i) {
    wide += 'l';
    wide += std::to_string(i);
    wide += "=\"" + std::string(static_cast<size_t>(i), 'v') + "\",";
  }
  wide += "} 1\n";
  ExpectSameBothPaths(wide);  // > 1 KiB of labels: general path
  ExpectSameBothPaths(wide.substr(0, 700) + "} 1\n");
  for (size_t cut = 0; cut < 60; ++cut) {  // every truncation of a line at the body's end
    ExpectSameBothPaths(std::string("m{ab=\"cd\",ef=\"gh\",ij=\"kl\"} 1 2").substr(0, cut));
  }
}

// ---------------------------------------------------------------------------------------------
// Real captures: every sample line is kept; anything else (a reporter's ``` or prose) is an error.

// An independent, deliberately simple classifier of a line: blank, comment, sample or other.
enum class Kind { kBlank, kComment, kSample, kOther };
Kind Classify(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  static const std::regex kBlank(R"(^[ \t]*$)");
  static const std::regex kComment(R"(^[ \t]*#.*$)");
  static const std::regex kSample(
      R"re(^[ \t]*[a-zA-Z_:][a-zA-Z0-9_:]*[ \t]*(\{([ \t]*[a-zA-Z_][a-zA-Z0-9_]*[ \t]*=[ \t]*"([^"\\]|\\.)*"[ \t]*,?)*[ \t]*\})?[ \t]*[-+]?([0-9.eE+-]+|[Nn]a[Nn]|[Ii]nf)([ \t]+-?[0-9]+)?[ \t]*$)re");
  if (std::regex_match(line, kBlank)) return Kind::kBlank;
  if (std::regex_match(line, kComment)) return Kind::kComment;
  if (std::regex_match(line, kSample)) return Kind::kSample;
  return Kind::kOther;
}

TEST(ExpoParserRealFixtures, EverySampleLineIsKept) {
  auto dir = testing::RealFixturesDir();
  if (!dir) GTEST_SKIP() << "no ../shared/fixtures-real";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(*dir)) {
    if (entry.path().extension() != ".prom") continue;
    ++files;
    SCOPED_TRACE(entry.path().filename().string());
    std::string body = testing::ReadFile(entry.path());
    size_t sample_lines = 0;
    std::vector<uint32_t> other_lines;
    uint32_t line_no = 0;
    size_t start = 0;
    while (start < body.size()) {
      size_t nl = body.find('\n', start);
      if (nl == std::string::npos) nl = body.size();
      ++line_no;
      switch (Classify(body.substr(start, nl - start))) {
        case Kind::kSample:
          ++sample_lines;
          break;
        case Kind::kOther:
          other_lines.push_back(line_no);
          break;
        default:
          break;
      }
      start = nl + 1;
    }
    Exposition e;
    Parse(body, e);
    EXPECT_GT(sample_lines, 0u);
    EXPECT_EQ(e.samples.size(), sample_lines);
    std::vector<uint32_t> error_lines;
    for (const ParseError& err : e.errors) error_lines.push_back(err.line);
    EXPECT_EQ(error_lines, other_lines);  // markup/prose lines are errors, nothing else is
    for (const Sample& s : e.samples) EXPECT_FALSE(s.name.empty());
    ExpectSameBothPaths(body);
  }
  EXPECT_GT(files, 0);
}

TEST(ExpoParserRealFixtures, KnownValuesOfDcgmPodLabels) {
  auto dir = testing::RealFixturesDir();
  if (!dir || !std::filesystem::exists(*dir / "dcgm_pod_labels.prom")) {
    GTEST_SKIP() << "no dcgm_pod_labels.prom";
  }
  std::string body = testing::ReadFile(*dir / "dcgm_pod_labels.prom");
  Exposition e;
  Parse(body, e);
  ASSERT_EQ(e.error_count, 0u);
  int power = 0;
  for (const Sample& s : e.samples) {
    if (s.name != "DCGM_FI_DEV_POWER_USAGE") continue;
    ++power;
    if (e.LabelValue(s, "gpu") == "0") {
      EXPECT_EQ(s.value, 310.5);
      EXPECT_EQ(e.LabelValue(s, "pod"), "vllm-0");
      EXPECT_EQ(e.LabelValue(s, "namespace"), "ml");
    }
    if (e.LabelValue(s, "gpu") == "3") {
      EXPECT_EQ(e.LabelValue(s, "pod"), "");
    }
  }
  EXPECT_EQ(power, 4);
}

TEST(ExpoParserClassifier, SeesMarkupAndProse) {
  // The independent counter above must itself tell markup from samples.
  EXPECT_EQ(Classify("```"), Kind::kOther);
  EXPECT_EQ(Classify("Here is my output:"), Kind::kOther);
  EXPECT_EQ(Classify("a{b=\"c\"} 1"), Kind::kSample);
  EXPECT_EQ(Classify("# HELP x"), Kind::kComment);
  EXPECT_EQ(Classify(""), Kind::kBlank);
  auto e = ParseText("```\nHere is my output:\na{b=\"c\"} 1\n```\n");
  EXPECT_EQ(e.samples.size(), 1u);
  ASSERT_EQ(e.errors.size(), 3u);
  EXPECT_EQ(e.errors[0].line, 1u);
  EXPECT_EQ(e.errors[1].line, 2u);
  EXPECT_EQ(e.errors[2].line, 4u);
}

}  // namespace
}  // namespace gpuattr::expo
