// Test harness for GPU-hours: a scenario folder as the stages see it, DRA objects included (the
// attribution harness leaves them out), and one cycle's per-hour shares of every card.
#pragma once

#include <filesystem>

#include "golden/attribution_harness.h"
#include "gpuattr/accounting/accounting.h"

namespace gpuattr::testing {

// LoadAttributionCase (bodies that are no GPU exporter's left out) plus the scenario's
// ResourceSlices and ResourceClaims.
inline Result<AttributionCase> LoadAccountingCase(const std::filesystem::path& dir) {
  auto c = LoadAttributionCase(dir, /*skip_non_gpu=*/true);
  if (!c) return c;
  auto sc = LoadScenario(dir);
  if (!sc) return sc.error();
  for (const nlohmann::json& obj : sc->objects) {
    const std::string kind = obj.value("kind", "");
    if (kind == "ResourceSlice") {
      auto s = kube::DecodeText(&kube::DecodeResourceSlice, obj.dump());
      if (!s) return s.error();
      c->objects.resource_slices[s->name] = std::move(*s);
    } else if (kind == "ResourceClaim") {
      auto claim = kube::DecodeText(&kube::DecodeResourceClaim, obj.dump());
      if (!claim) return claim.error();
      c->objects.resource_claims[claim->Key()] = std::move(*claim);
    }
  }
  return c;
}

// The shares of every card of one cycle of the case (the GPU-hours of one hour).
inline std::vector<accounting::CardAccount> ShareCase(const AttributionCase& c) {
  const model::CycleOutput out = RunCase(c);
  return accounting::ShareCards({out.attribution, out.allocation, c.objects});
}

}  // namespace gpuattr::testing
