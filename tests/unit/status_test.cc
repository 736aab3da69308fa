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

Status CheckEven(int x) {
  GPUATTR_RETURN_IF_ERROR(Half(x));  // a Result<T> works as well as a Status
  return Status::Ok();
}

Result<int> Quarter(int x) {
  GPUATTR_RETURN_IF_ERROR(CheckEven(x));
  GPUATTR_ASSIGN_OR_RETURN(int half, Half(x));
  GPUATTR_ASSIGN_OR_RETURN(half, Half(half));  // assigns an existing variable
  return half;
}

TEST(Status, ReturnIfErrorAndAssignOrReturn) {
  EXPECT_TRUE(CheckEven(4).ok());
  EXPECT_EQ(CheckEven(5).message(), "odd: 5");
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_EQ(Quarter(7).error().message, "odd: 7");
  EXPECT_EQ(Quarter(6).error().message, "odd: 3");
}

}  // namespace
}  // namespace gpuattr
