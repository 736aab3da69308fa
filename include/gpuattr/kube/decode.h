// Kubernetes JSON → compact records (objects.h). Pure and tolerant: missing fields leave defaults;
// a field of the wrong type is an error naming the object and the field
// (`pod "ns/name": field spec.containers[0].ports[0].containerPort: expected a number, got
// string`).
#pragma once

#include <cstdint>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "gpuattr/kube/objects.h"
#include "gpuattr/util/status.h"

namespace gpuattr::kube {

Result<Pod> DecodePod(const nlohmann::json& j);
Result<Node> DecodeNode(const nlohmann::json& j);
Result<Service> DecodeService(const nlohmann::json& j);
// resource.k8s.io v1, v1beta2 and v1beta1 alike: v1beta1 nests a device's attributes and capacity
// under `basic` and writes a request's deviceClassName/allocationMode/count inline; v1beta2 and v1
// put them under `exactly` (or the first of `firstAvailable`).
Result<ResourceSlice> DecodeResourceSlice(const nlohmann::json& j);
Result<ResourceClaim> DecodeResourceClaim(const nlohmann::json& j);

// RFC 3339 timestamp as Kubernetes writes it ("2025-01-02T03:04:05Z", offsets and fractions
// accepted) → unix seconds.
Result<int64_t> ParseTimestamp(std::string_view text);

}  // namespace gpuattr::kube
