#include "gpuattr/util/status.h"

#include <gtest/gtest.h>

namespace gpuattr {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return MakeError(ErrorCode::kInvalidArgument, "odd: " + std::to_string(x));
  return x / 2;
}

TEST(Status, OkAndError) {
  EXPECT_TRUE(Status::Ok().ok());
  Status s = MakeError(ErrorCode::kNotFound, "missing");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kNotFound);
  EXPECT_EQ(s.message(), "missing");
}

TEST(Result, ValueOrError) {
  auto a = Half(4);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, 2);
  auto b = Half(3);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message, "odd: 3");
  EXPECT_FALSE(b.status().ok());
}

}  // namespace
}  // namespace gpuattr
