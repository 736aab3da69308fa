// DRA objects decoded from the three resource.k8s.io versions gpuattr reads (v1, v1beta2, v1beta1).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpuattr/kube/decode.h"

namespace gpuattr::kube {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// The decoders take a parsed document; these tests write objects as nlohmann JSON.
Result<ResourceSlice> DecodeResourceSlice(const json& j) {
  return DecodeText(&kube::DecodeResourceSlice, j.dump());
}
Result<ResourceClaim> DecodeResourceClaim(const json& j) {
  return DecodeText(&kube::DecodeResourceClaim, j.dump());
}

constexpr int64_t kGi = int64_t{1} << 30;

// v1 and v1beta2 share the device shape: attributes and capacity directly on the device.
constexpr const char* kSliceV1 = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
  "metadata": {"name": "dgx-a-gpu.nvidia.com-x7r2q", "resourceVersion": "77"},
  "spec": {
    "driver": "gpu.nvidia.com", "nodeName": "dgx-a",
    "pool": {"name": "dgx-a", "generation": 1, "resourceSliceCount": 1},
    "devices": [
      {"name": "gpu-0",
       "attributes": {"type": {"string": "gpu"},
                      "uuid": {"string": "GPU-aaaa"},
                      "productName": {"string": "NVIDIA H100 80GB HBM3"},
                      "index": {"int": 0},
                      "driverVersion": {"version": "570.158.1"}},
       "capacity": {"memory": {"value": "80Gi"}}},
      {"name": "gpu-2-mig-3g40gb-0",
       "attributes": {"type": {"string": "mig"},
                      "uuid": {"string": "MIG-bbbb"},
                      "gpu.nvidia.com/parentUUID": {"string": "GPU-cccc"},
                      "profile": {"string": "3g.40gb"}},
       "capacity": {"memory": {"value": "40Gi"}, "multiprocessors": {"value": "60"}}}
    ]
  }
})";

TEST(DecodeResourceSlice, V1DevicesWithTypedAttributes) {
  auto r = DecodeResourceSlice(json::parse(kSliceV1));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->name, "dgx-a-gpu.nvidia.com-x7r2q");
  EXPECT_EQ(r->Key(), "dgx-a-gpu.nvidia.com-x7r2q");
  EXPECT_EQ(r->resource_version, "77");
  EXPECT_EQ(r->driver, "gpu.nvidia.com");
  EXPECT_EQ(r->node_name, "dgx-a");
  EXPECT_EQ(r->pool, "dgx-a");
  ASSERT_EQ(r->devices.size(), 2u);
  const DraDevice& gpu = r->devices[0];
  EXPECT_EQ(gpu.name, "gpu-0");
  EXPECT_EQ(gpu.type, "gpu");
  EXPECT_EQ(gpu.uuid, "GPU-aaaa");
  EXPECT_EQ(gpu.parent_uuid, "");
  EXPECT_EQ(gpu.product_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpu.memory_bytes, 80 * kGi);
  const DraDevice& mig = r->devices[1];
  EXPECT_EQ(mig.type, "mig");
  EXPECT_EQ(mig.uuid, "MIG-bbbb");
  EXPECT_EQ(mig.parent_uuid, "GPU-cccc");  // qualified with the driver's own domain
  EXPECT_EQ(mig.profile, "3g.40gb");
  EXPECT_EQ(mig.memory_bytes, 40 * kGi);
}

TEST(DecodeResourceSlice, V1beta1NestsAttributesUnderBasic) {
  auto r = DecodeResourceSlice(json::parse(R"({
    "metadata": {"name": "node-1-gpu"},
    "spec": {"driver": "gpu.nvidia.com", "nodeName": "node-1", "pool": {"name": "node-1"},
      "devices": [
        {"name": "gpu-1", "basic": {
          "attributes": {"type": {"string": "gpu"}, "uuid": {"string": "GPU-1111"},
                         "productName": {"string": "NVIDIA A100-SXM4-40GB"}},
          "capacity": {"memory": {"value": "40Gi"}}}},
        {"name": "gpu-1-mig-1g5gb-0", "basic": {
          "attributes": {"type": {"string": "mig"}, "uuid": {"string": "MIG-2222"},
                         "parentUUID": {"string": "GPU-1111"}, "profile": {"string": "1g.5gb"}},
          "capacity": {"memory": "4864Mi"}}}
      ]}
  })"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->devices.size(), 2u);
  EXPECT_EQ(r->devices[0].uuid, "GPU-1111");
  EXPECT_EQ(r->devices[0].type, "gpu");
  EXPECT_EQ(r->devices[0].product_name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(r->devices[0].memory_bytes, 40 * kGi);
  EXPECT_EQ(r->devices[1].parent_uuid, "GPU-1111");
  EXPECT_EQ(r->devices[1].profile, "1g.5gb");
  EXPECT_EQ(r->devices[1].memory_bytes, int64_t{4864} << 20);  // v1alpha3's bare quantity
}

TEST(DecodeResourceSlice, ForeignDomainAttributesAndUnknownValueKindsAreIgnored) {
  auto r = DecodeResourceSlice(json::parse(R"({
    "metadata": {"name": "s"},
    "spec": {"driver": "gpu.nvidia.com", "devices": [
      {"name": "d", "attributes": {"other.example.com/uuid": {"string": "NOT-MINE"},
                                   "type": {"bool": true}}}]}
  })"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->devices.size(), 1u);
  EXPECT_EQ(r->devices[0].uuid, "");
  EXPECT_EQ(r->devices[0].type, "");
  EXPECT_FALSE(r->devices[0].memory_bytes.has_value());  // absent stays unknown, not 0
}

TEST(DecodeResourceSlice, WrongTypesNameTheSliceAndTheField) {
  auto r = DecodeResourceSlice(json::parse(R"({
    "metadata": {"name": "bad-slice"},
    "spec": {"driver": "gpu.nvidia.com", "devices": [
      {"name": "d", "attributes": {"uuid": {"string": 7}}}]}
  })"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("resourceslice \"bad-slice\""));
  EXPECT_THAT(r.error().message, HasSubstr("spec.devices[0].attributes[\"uuid\"].string"));

  r = DecodeResourceSlice(json::parse(R"({
    "metadata": {"name": "bad-cap"},
    "spec": {"devices": [{"name": "d", "basic": {"capacity": {"memory": {"value": "lots"}}}}]}
  })"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("spec.devices[0].basic.capacity[\"memory\"].value"));
  EXPECT_FALSE(DecodeResourceSlice(json::array()).ok());
}

TEST(DecodeResourceClaim, V1ExactlyWithAllocationAndReservedFor) {
  auto r = DecodeResourceClaim(json::parse(R"({
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
    "metadata": {"name": "llm-dra-0-gpu-7kq2x", "namespace": "ml", "resourceVersion": "9"},
    "spec": {"devices": {"requests": [
      {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                  "allocationMode": "ExactCount", "count": 2}}]}},
    "status": {
      "allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "dgx-a", "device": "gpu-0"},
        {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "dgx-a", "device": "gpu-1"}]}},
      "reservedFor": [{"resource": "pods", "name": "llm-dra-0", "uid": "u-101"}]}
  })"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->Key(), "ml/llm-dra-0-gpu-7kq2x");
  EXPECT_EQ(r->resource_version, "9");
  ASSERT_EQ(r->requests.size(), 1u);
  EXPECT_EQ(r->requests[0].name, "gpu");
  EXPECT_EQ(r->requests[0].device_class_name, "gpu.nvidia.com");
  EXPECT_EQ(r->requests[0].allocation_mode, "ExactCount");
  EXPECT_EQ(r->requests[0].count, 2);
  EXPECT_TRUE(r->allocated);
  ASSERT_EQ(r->results.size(), 2u);
  EXPECT_EQ(r->results[1].request, "gpu");
  EXPECT_EQ(r->results[1].driver, "gpu.nvidia.com");
  EXPECT_EQ(r->results[1].pool, "dgx-a");
  EXPECT_EQ(r->results[1].device, "gpu-1");
  ASSERT_EQ(r->reserved_for.size(), 1u);
  EXPECT_EQ(r->reserved_for[0].resource, "pods");
  EXPECT_EQ(r->reserved_for[0].name, "llm-dra-0");
  EXPECT_EQ(r->reserved_for[0].uid, "u-101");
}

TEST(DecodeResourceClaim, V1beta2FirstAvailableStandsForTheRequest) {
  auto r = DecodeResourceClaim(json::parse(R"({
    "metadata": {"name": "flex", "namespace": "research"},
    "spec": {"devices": {"requests": [
      {"name": "slice", "firstAvailable": [
        {"name": "small", "deviceClassName": "mig.nvidia.com", "count": 1},
        {"name": "whole", "deviceClassName": "gpu.nvidia.com"}]}]}}
  })"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->requests.size(), 1u);
  EXPECT_EQ(r->requests[0].name, "slice");
  EXPECT_EQ(r->requests[0].device_class_name, "mig.nvidia.com");
  EXPECT_EQ(r->requests[0].allocation_mode, "ExactCount");
  EXPECT_FALSE(r->allocated);
  EXPECT_TRUE(r->results.empty());
  EXPECT_TRUE(r->reserved_for.empty());
}

TEST(DecodeResourceClaim, V1beta1RequestsAreInline) {
  auto r = DecodeResourceClaim(json::parse(R"({
    "apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
    "metadata": {"name": "all-gpus", "namespace": "ml"},
    "spec": {"devices": {"requests": [
      {"name": "gpus", "deviceClassName": "gpu.nvidia.com", "allocationMode": "All"},
      {"name": "two", "deviceClassName": "gpu.nvidia.com", "count": 2}]}},
    "status": {"allocation": {"devices": {"results": []}}}
  })"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->requests.size(), 2u);
  EXPECT_EQ(r->requests[0].allocation_mode, "All");
  EXPECT_EQ(r->requests[0].device_class_name, "gpu.nvidia.com");
  EXPECT_EQ(r->requests[1].allocation_mode, "ExactCount");
  EXPECT_EQ(r->requests[1].count, 2);
  EXPECT_TRUE(r->allocated);
}

TEST(DecodeResourceClaim, WrongTypesNameTheClaimAndTheField) {
  auto r = DecodeResourceClaim(json::parse(R"({
    "metadata": {"name": "c", "namespace": "ml"},
    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"count": "one"}}]}}
  })"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("resourceclaim \"ml/c\""));
  EXPECT_THAT(r.error().message, HasSubstr("spec.devices.requests[0].exactly.count"));

  r = DecodeResourceClaim(json::parse(R"({
    "metadata": {"name": "c", "namespace": "ml"},
    "status": {"reservedFor": [{"resource": "pods", "name": 5}]}
  })"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("status.reservedFor[0].name"));
}

}  // namespace
}  // namespace gpuattr::kube
