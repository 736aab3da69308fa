// The start-up warning for a server others can reach without TLS or authentication.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuattr/http/server.h"

namespace gpuattr::http {
namespace {

using ::testing::HasSubstr;

TEST(ExposureWarning, OnlyWhenReachableWithoutTlsAndAuth) {
  EXPECT_FALSE(ExposureWarning(true, false, false));
  EXPECT_FALSE(ExposureWarning(false, true, true));
  auto both = ExposureWarning(false, false, false);
  ASSERT_TRUE(both);
  EXPECT_THAT(*both, HasSubstr("without TLS and without authentication"));
  ASSERT_TRUE(ExposureWarning(false, true, false));
  EXPECT_THAT(*ExposureWarning(false, true, false), HasSubstr("without authentication"));
  ASSERT_TRUE(ExposureWarning(false, false, true));
  EXPECT_THAT(*ExposureWarning(false, false, true), HasSubstr("without TLS"));
}

}  // namespace
}  // namespace gpuattr::http
