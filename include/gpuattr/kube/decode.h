// Kubernetes JSON → compact records (objects.h). Pure and tolerant: missing fields leave defaults;
// a field of the wrong type is an error naming the object and the field
// (`pod "ns/name": field spec.containers[0].ports[0].containerPort: expected a number, got
// string`).
#pragma once

#include <cstdint>
#include <string_view>

#include "gpuattr/kube/objects.h"
#include "gpuattr/util/json_document.h"
#include "gpuattr/util/status.h"

namespace gpuattr::kube {

Result<Pod> DecodePod(JsonValue j);
Result<Node> DecodeNode(JsonValue j);
Result<Service> DecodeService(JsonValue j);
Result<Namespace> DecodeNamespace(JsonValue j);
// resource.k8s.io v1, v1beta2 and v1beta1 alike: v1beta1 nests a device's attributes and capacity
// under `basic` and writes a request's deviceClassName/allocationMode/count inline; v1beta2 and v1
// put them under `exactly` (or the first of `firstAvailable`).
Result<ResourceSlice> DecodeResourceSlice(JsonValue j);
Result<ResourceClaim> DecodeResourceClaim(JsonValue j);

// One object's JSON text, parsed and decoded (tests, fixtures; the cache decodes from pages).
template <typename T>
Result<T> DecodeText(Result<T> (*decode)(JsonValue), std::string text) {
  auto doc = JsonDocument::Parse(std::move(text));
  if (!doc.ok()) return doc.error();
  return decode(doc->Root());
}

// RFC 3339 timestamp as Kubernetes writes it ("2025-01-02T03:04:05Z", offsets and fractions
// accepted) → unix seconds.
Result<int64_t> ParseTimestamp(std::string_view text);

}  // namespace gpuattr::kube
