#include "gpuattr/kube/quantity.h"

#include <gtest/gtest.h>

namespace gpuattr::kube {
namespace {

int64_t Units(std::string_view s) {
  auto r = ParseQuantity(s);
  EXPECT_TRUE(r.ok()) << s << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : -999;
}

int64_t Milli(std::string_view s) {
  auto r = ParseQuantityMilli(s);
  EXPECT_TRUE(r.ok()) << s << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : -999;
}

TEST(Quantity, PlainIntegers) {
  EXPECT_EQ(Units("0"), 0);
  EXPECT_EQ(Units("1"), 1);
  EXPECT_EQ(Units("2"), 2);
  EXPECT_EQ(Units("48"), 48);
  EXPECT_EQ(Units("007"), 7);
  EXPECT_EQ(Units("+3"), 3);
}

TEST(Quantity, MilliUnitsRoundUpToWholeUnits) {
  EXPECT_EQ(Milli("500m"), 500);
  EXPECT_EQ(Units("500m"), 1);  // like Quantity.Value()
  EXPECT_EQ(Units("1000m"), 1);
  EXPECT_EQ(Units("1001m"), 2);
  EXPECT_EQ(Milli("2"), 2000);
  EXPECT_EQ(Milli("0.5"), 500);
  EXPECT_EQ(Units("1.5"), 2);
  EXPECT_EQ(Milli("250u"), 1);  // 0.25 milli rounds up
}

TEST(Quantity, DecimalSuffixes) {
  EXPECT_EQ(Units("1k"), 1000);
  EXPECT_EQ(Units("1.5k"), 1500);
  EXPECT_EQ(Units("2M"), 2'000'000);
  EXPECT_EQ(Units("3G"), 3'000'000'000);
  EXPECT_EQ(Units("1T"), 1'000'000'000'000);
  EXPECT_EQ(Units("1E"), 1'000'000'000'000'000'000);
}

TEST(Quantity, BinarySuffixes) {
  EXPECT_EQ(Units("1Ki"), 1024);
  EXPECT_EQ(Units("80Gi"), 80LL << 30);
  EXPECT_EQ(Units("512Mi"), 512LL << 20);
  EXPECT_EQ(Units("0.5Ki"), 512);
  EXPECT_EQ(Units("1Ti"), 1LL << 40);
}

TEST(Quantity, Exponents) {
  EXPECT_EQ(Units("1e3"), 1000);
  EXPECT_EQ(Units("1E6"), 1'000'000);
  EXPECT_EQ(Milli("5e-1"), 500);
}

TEST(Quantity, Negative) { EXPECT_EQ(Units("-2"), -2); }

TEST(Quantity, RejectsGarbageWithTheTextInTheMessage) {
  for (std::string_view bad : {"", "abc", "1x", "1KiB", "m", ".", "1..2", "1e", "--1", "1 Gi"}) {
    auto r = ParseQuantity(bad);
    ASSERT_FALSE(r.ok()) << "accepted \"" << bad << "\"";
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message.find(std::string("\"") + std::string(bad) + "\""),
              std::string::npos)
        << r.error().message;
  }
}

TEST(Quantity, RejectsOutOfRange) {
  EXPECT_FALSE(ParseQuantity("10E").ok());
  EXPECT_FALSE(ParseQuantity("9223372036854775808").ok());
  EXPECT_FALSE(ParseQuantityMilli("10P").ok());  // 1e19 milli > int64
  EXPECT_EQ(Units("9223372036854775807"), 9223372036854775807LL);
}

}  // namespace
}  // namespace gpuattr::kube
