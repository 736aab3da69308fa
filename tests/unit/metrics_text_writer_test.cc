// The streaming writer's building blocks: number formatting, escaping, label sets, family order.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>

#include "gpuattr/metrics/families.h"
#include "gpuattr/metrics/text_writer.h"

namespace gpuattr::metrics {
namespace {

TEST(FormatValue, SpecialValuesAsPrometheusReadsThem) {
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(0.0), "0");
  EXPECT_EQ(FormatValue(-0.0), "-0");
}

TEST(FormatValue, NotationOfPercent16g) {
  const std::pair<double, const char*> cases[] = {
      {1, "1"},
      {-1, "-1"},
      {0.25, "0.25"},
      {0.1, "0.1"},
      {1e6, "1000000"},
      {1234567.5, "1234567.5"},
      {85899345920.0, "85899345920"},
      {1764460800, "1764460800"},
      {1e15, "1000000000000000"},
      {9007199254740992.0, "9007199254740992"},
      {1e16, "1e+16"},
      {1.5e17, "1.5e+17"},
      {1e21, "1e+21"},
      {1e-4, "0.0001"},
      {0.00012345, "0.00012345"},
      {1e-5, "1e-05"},
      {-2.5e-7, "-2.5e-07"},
      {1e300, "1e+300"},
      {123.456, "123.456"},
      {-0.5, "-0.5"},
  };
  for (const auto& [v, want] : cases) {
    EXPECT_EQ(FormatValue(v), want) << v;
    char ref[64];
    std::snprintf(ref, sizeof ref, "%.16g", v);
    EXPECT_EQ(FormatValue(v), ref) << "prometheus-cpp writes %.16g";
  }
}

TEST(FormatValue, ExactWherePercent16gRoundsOff) {
  EXPECT_EQ(FormatValue(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(FormatValue(1.0000000000000002), "1.0000000000000002");
  EXPECT_EQ(FormatValue(2.0 / 3), "0.6666666666666666");
  EXPECT_EQ(FormatValue(5e-324), "5e-324");
  EXPECT_EQ(FormatValue(123456789012345678.0), "1.2345678901234568e+17");
}

// Random doubles of every magnitude: the text reads back as the same double, it uses the
// notation %.16g chooses, and has no more digits than %.17g.
TEST(FormatValue, RoundTripsEveryDouble) {
  std::mt19937_64 rng(20261201);
  size_t checked = 0;
  for (int i = 0; i < 200000; ++i) {
    uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v)) continue;
    if (i % 2)  // ordinary magnitudes: a random 53-bit mantissa times 2^-60 .. 2^60
      v = std::ldexp(1.0 + static_cast<double>(rng() >> 11) * 0x1p-53,
                     static_cast<int>(rng() % 121) - 60);
    const std::string text = FormatValue(v);
    ASSERT_LT(text.size(), kMaxValueChars) << text;
    ASSERT_EQ(std::strtod(text.c_str(), nullptr), v) << text;
    char g16[64];
    std::snprintf(g16, sizeof g16, "%.16g", v);
    if (std::strchr(g16, 'e') == nullptr) {  // same notation (the exponent agrees)
      EXPECT_EQ(text.find('e'), std::string::npos) << text << " vs " << g16;
    }
    ++checked;
  }
  EXPECT_GT(checked, 190000u);
}

TEST(EscapeLabelValue, EscapesAndKeepsUtf8) {
  EXPECT_EQ(EscapeLabelValue("plain"), "plain");
  EXPECT_EQ(EscapeLabelValue(""), "");
  EXPECT_EQ(EscapeLabelValue("a\\b\"c\nd\te"), "a\\\\b\\\"c\\nd\te");
  EXPECT_EQ(EscapeLabelValue("\xc3\xbc \xe2\x82\xac \xf0\x9f\x98\x80"),
            "\xc3\xbc \xe2\x82\xac \xf0\x9f\x98\x80");  // ü € 😀
}

TEST(EscapeLabelValue, InvalidUtf8BecomesReplacementCharacters) {
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(EscapeLabelValue("a\xff"
                             "b"),
            "a" + fffd + "b");
  EXPECT_EQ(EscapeLabelValue("\xe2\x82"), fffd + fffd);                        // truncated
  EXPECT_EQ(EscapeLabelValue("\xc0\xaf"), fffd + fffd);                        // overlong
  EXPECT_EQ(EscapeLabelValue("\xed\xa0\x80"), fffd + fffd + fffd);             // a UTF-16 surrogate
  EXPECT_EQ(EscapeLabelValue("\xf4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // > U+10FFFF
}

TEST(EscapeHelp, BackslashAndNewline) {
  EXPECT_EQ(EscapeHelp("a \"q\" \\ b\nc"), "a \"q\" \\\\ b\\nc");
}

TEST(Labels, SortedByNameAndFirstValueWins) {
  std::string node = "n1";
  Labels l{{"node", node}, {"cluster", "c"}};
  EXPECT_TRUE(l.emplace("gpu", "0"));
  EXPECT_FALSE(l.emplace("node", "other"));
  std::vector<std::string> names, values;
  for (const Label& x : l) {
    names.emplace_back(x.name);
    values.emplace_back(x.value);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"cluster", "gpu", "node"}));
  EXPECT_EQ(values, (std::vector<std::string>{"c", "0", "n1"}));
}

TEST(Labels, TooManyIsAnError) {
  Labels l;
  std::vector<std::string> names;
  for (size_t i = 0; i < Labels::kMax + 1; ++i) names.push_back("l" + std::to_string(100 + i));
  for (size_t i = 0; i < Labels::kMax; ++i) EXPECT_TRUE(l.emplace(names[i], "v"));
  EXPECT_THROW(l.emplace(names.back(), "v"), std::length_error);
}

constexpr FamilySpec kA{"test_a", MetricType::kGauge, "A \\ gauge\nwith a newline."};
constexpr FamilySpec kB{"test_b_total", MetricType::kCounter, "A counter."};
constexpr FamilySpec kEmpty{"test_empty", MetricType::kGauge, "Never written."};
constexpr FamilySpec kStray{"test_stray", MetricType::kGauge, ""};
constexpr FamilySpec kSpecs[] = {kA, kEmpty, kB};
void NoBuild(const model::Snapshot&, FamilyWriter&) {}
constexpr FamilyGroup kGroup{"test", kSpecs, &NoBuild};
constexpr const FamilyGroup* kGroups[] = {&kGroup};

TEST(TextWriter, FamiliesInTableOrderWhateverTheOrderOfSeries) {
  TextWriter w(kGroups);
  w.Add(kB, {{"x", "1"}}, 3);
  w.Add(kA, {{"b", "2"}, {"a", "q\""}}, 0.5);
  w.Add(kStray, {}, 1);
  w.Add(kB, {{"x", "2"}}, 4);
  w.Add(kA, {}, 7);
  EXPECT_EQ(std::move(w).Finish(),
            "# HELP test_a A \\\\ gauge\\nwith a newline.\n"
            "# TYPE test_a gauge\n"
            "test_a{a=\"q\\\"\",b=\"2\"} 0.5\n"
            "test_a 7\n"
            "# HELP test_b_total A counter.\n"
            "# TYPE test_b_total counter\n"
            "test_b_total{x=\"1\"} 3\n"
            "test_b_total{x=\"2\"} 4\n"
            "# TYPE test_stray gauge\n"
            "test_stray 1\n");
}

// SnapshotStore passes the previous text's length: reserved at once (in huge pages from 2 MiB),
// the same text comes out; pieces point into one buffer, a family's runs in table order.
TEST(TextWriter, SizeHintAndRunsGiveTheSameText) {
  for (size_t hint : {size_t{0}, size_t{100}, size_t{5} << 20}) {
    TextWriter w(kGroups, hint);
    w.Add(kB, {{"x", "1"}}, 3);
    w.Add(kA, {}, 7);
    w.Add(kB, {{"x", "2"}}, 4);
    const ExpositionText text = std::move(w).FinishChunks();
    ASSERT_EQ(text.pieces().size(), 3u) << hint;  // test_a, then test_b_total's two runs
    EXPECT_TRUE(text.pieces()[0].starts_with("# HELP test_a "));
    EXPECT_EQ(text.pieces()[2], "test_b_total{x=\"2\"} 4\n");
    EXPECT_EQ(text.Join(),
              "# HELP test_a A \\\\ gauge\\nwith a newline.\n"
              "# TYPE test_a gauge\n"
              "test_a 7\n"
              "# HELP test_b_total A counter.\n"
              "# TYPE test_b_total counter\n"
              "test_b_total{x=\"1\"} 3\n"
              "test_b_total{x=\"2\"} 4\n")
        << hint;
  }
}

// RenderGroupByGroup's writer: a reused buffer gives the same chunks, and a family outside the
// declared groups is reported (group by group it would not come last).
TEST(TextWriter, ReusedBufferAndUndeclaredFamilies) {
  TextBuffer buffer;
  buffer.Append("left over from the previous group");
  for (int round = 0; round < 2; ++round) {
    TextWriter w(kGroups, std::move(buffer));
    w.Add(kB, {{"x", "1"}}, 3);
    w.Add(kA, {}, 7);
    EXPECT_FALSE(w.has_undeclared());
    if (round == 1) {
      w.Add(kStray, {}, 1);
      EXPECT_TRUE(w.has_undeclared());
    }
    std::string text;
    buffer = std::move(w).FinishInto([&](std::string_view p) { text += p; });
    EXPECT_EQ(text,
              "# HELP test_a A \\\\ gauge\\nwith a newline.\n"
              "# TYPE test_a gauge\n"
              "test_a 7\n"
              "# HELP test_b_total A counter.\n"
              "# TYPE test_b_total counter\n"
              "test_b_total{x=\"1\"} 3\n" +
                  std::string(round == 1 ? "# TYPE test_stray gauge\ntest_stray 1\n" : ""));
  }
}

TEST(TextWriter, NothingWrittenIsEmpty) {
  TextWriter w(kGroups);
  EXPECT_EQ(std::move(w).Finish(), "");
}

TEST(TextWriter, LongLabelValuesGrowTheBuffer) {
  TextWriter w(kGroups);
  const std::string big(1 << 20, 'x');
  for (int i = 0; i < 3; ++i) w.Add(kA, {{"v", big}}, i);
  const std::string text = std::move(w).Finish();
  EXPECT_EQ(text.size(), 3 * (big.size() + std::strlen("test_a{v=\"\"} 0\n")) +
                             std::strlen("# HELP test_a A \\\\ gauge\\nwith a newline.\n") +
                             std::strlen("# TYPE test_a gauge\n"));
}

// Streaming (RenderGroupByGroup's daemon path): families go out as the next one begins, and a
// family larger than kStreamPiece goes out in pieces as it grows, so the buffer never holds it
// whole; the streamed text is the unstreamed one. A family written again after it went out
// (even only in part) is reported as split.
TEST(TextWriter, StreamsALargeFamilyInPiecesAndReportsASplit) {
  const std::string value(200, 'v');
  auto write = [&](TextWriter& w, bool split) {
    w.Add(kA, {}, 1);
    for (int i = 0; i < 30'000; ++i) {
      const std::string n = std::to_string(i);
      w.Add(kB, {{"i", n}, {"v", value}}, i);
    }
    if (split) w.Add(kA, {}, 2);
  };
  TextWriter whole(kGroups);
  write(whole, false);
  const std::string expected = std::move(whole).Finish();
  ASSERT_GT(expected.size(), 5 * TextWriter::kStreamPiece);

  for (bool split : {false, true}) {
    std::string streamed;
    size_t pieces = 0;
    const std::function<void(std::string_view)> sink = [&](std::string_view p) {
      streamed += p;
      ++pieces;
    };
    TextWriter w(kGroups);
    w.StreamTo(&sink);
    write(w, split);
    EXPECT_EQ(w.split(), split);
    const size_t peak = w.peak_size();
    std::move(w).FinishInto(sink);
    if (split) continue;
    EXPECT_EQ(streamed, expected);
    EXPECT_GT(pieces, 5u);
    EXPECT_GT(peak, 0u);
    EXPECT_LT(peak, TextWriter::kStreamPiece + 1024);
  }
}

}  // namespace
}  // namespace gpuattr::metrics
