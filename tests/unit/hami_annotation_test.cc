// HAMi's pod annotation (attribution/hami.h, HAMi v2.10.0 format): parsed when well formed,
// rejected whole (never a crash) for each malformation, with the key named in the error.
#include <gtest/gtest.h>

#include <string>

#include "gpuattr/attribution/hami.h"

namespace gpuattr::attribution {
namespace {

TEST(HamiAnnotation, ParsesContainersAndDevices) {
  auto d = ParseHamiAllocation("GPU-a,NVIDIA,3000,0:;GPU-b,NVIDIA,5000,30:GPU-c,NVIDIA,1,100:;");
  ASSERT_TRUE(d.ok()) << d.error().message;
  ASSERT_EQ(d->size(), 3u);
  EXPECT_EQ((*d)[0].uuid, "GPU-a");
  EXPECT_EQ((*d)[0].memory_mib, 3000);
  EXPECT_EQ((*d)[0].cores_percent, 0);
  EXPECT_EQ((*d)[1].cores_percent, 30);
  EXPECT_EQ((*d)[2].uuid, "GPU-c");
  // A container without devices (";;") is allowed.
  EXPECT_TRUE(ParseHamiAllocation(";GPU-a,NVIDIA,1,1:;").ok());
}

TEST(HamiAnnotation, FractionIsTheLargerOfMemoryAndCores) {
  EXPECT_DOUBLE_EQ(HamiFraction({"GPU-a", 11517, 0}, 23034), 0.5);
  EXPECT_DOUBLE_EQ(HamiFraction({"GPU-a", 4096, 30}, 23034), 0.3);
  EXPECT_DOUBLE_EQ(HamiFraction({"GPU-a", 99999, 0}, 23034), 1.0);  // never more than the card
  EXPECT_DOUBLE_EQ(HamiFraction({"GPU-a", 4096, 30}, 0), 0.3);      // card memory unknown
  EXPECT_LT(HamiFraction({"GPU-a", 4096, 0}, 0), 0);                // unknown fraction
}

TEST(HamiAnnotation, EachMalformationIsRejected) {
  for (const std::string& bad : {
           std::string(""),                                       // names no device
           std::string(";;"),                                     // names no device
           std::string("GPU-a,NVIDIA,3000,0"),                    // device not closed by ':'
           std::string("GPU-a,NVIDIA,3000,0;"),                   // closed by ';' instead of ':'
           std::string("GPU-a,NVIDIA,3000:;"),                    // 3 fields
           std::string("GPU-a,NVIDIA,3000,0,1:;"),                // 5 fields
           std::string(",NVIDIA,3000,0:;"),                       // no UUID
           std::string("GPU a,NVIDIA,3000,0:;"),                  // UUID with a space
           std::string("GPU-\"a,NVIDIA,3000,0:;"),                // UUID with a quote
           std::string(std::string(200, 'G') + ",NVIDIA,1,0:;"),  // UUID too long
           std::string("GPU-a,,3000,0:;"),                        // no type
           std::string("GPU-a,NVIDIA,-1,0:;"),                    // negative memory
           std::string("GPU-a,NVIDIA,lots,0:;"),                  // memory not a number
           std::string("GPU-a,NVIDIA,3000x,0:;"),                 // trailing junk
           std::string("GPU-a,NVIDIA,99999999999,0:;"),           // memory over int32
           std::string("GPU-a,NVIDIA,3000,101:;"),                // cores over 100
           std::string("GPU-a,NVIDIA,3000,:;"),                   // empty cores
       }) {
    auto d = ParseHamiAllocation(bad);
    EXPECT_FALSE(d.ok()) << bad;
    if (!d.ok()) {
      EXPECT_NE(d.error().message.find("hami.io/vgpu-devices-allocated"), std::string::npos);
    }
  }
}

TEST(HamiAnnotation, LengthAndCountAreBounded) {
  std::string many;
  for (int i = 0; i < 65; ++i) many += "GPU-a,NVIDIA,1,1:";
  EXPECT_FALSE(ParseHamiAllocation(many + ";").ok());  // 65 devices
  std::string sixty_four;
  for (int i = 0; i < 64; ++i) sixty_four += "GPU-a,NVIDIA,1,1:";
  EXPECT_TRUE(ParseHamiAllocation(sixty_four + ";").ok());
  EXPECT_FALSE(ParseHamiAllocation(std::string(kHamiMaxAnnotationBytes + 1, ':')).ok());
}

}  // namespace
}  // namespace gpuattr::attribution
