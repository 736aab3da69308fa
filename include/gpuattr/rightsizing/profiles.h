// The MIG profile table of docs/design.md#rightsizing: per card model, its profiles and G, its
// number of compute slices. A profile's memory is the number in its name, in GB (10^9 bytes):
// conservative against the slice's real size
// (docs/rightsizing.md#why-a-profiles-memory-comes-from-its-name).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuattr::rightsizing {

struct MigProfile {
  std::string name;  // "3g.40gb"
  int g = 1;         // compute slices, the leading number
  double memory_gb = 0;
  bool operator==(const MigProfile&) const = default;
};

struct MigModel {
  std::string family;                // "A100 80GB", for messages and tests
  int slices = 7;                    // G
  std::vector<MigProfile> profiles;  // in the table's order: fewest slices, then least memory
};

// "3g.40gb" → {3g.40gb, 3, 40}; "mig-3g.40gb" and "nvidia.com/mig-3g.40gb" too. Absent for a
// name that is no "<g>g.<n>gb".
std::optional<MigProfile> ParseProfile(std::string_view name);

// The table's row for a card model as the exporter or the node label names it ("NVIDIA
// A100-SXM4-80GB", "NVIDIA H100 NVL", "NVIDIA A30"); null for models without MIG in the table
// (L4, T4, A10, ...). `memory_bytes` (the card's total, when known) tells A100 40GB from 80GB when
// the name does not.
const MigModel* MigModelOf(std::string_view card_model,
                           std::optional<double> memory_bytes = std::nullopt);

// A profile name as a pod requested it or dcgm exported it, mapped onto `model`'s table: the
// table's profile of that name, else the one with the same g whose memory is within 10 % (dcgm's
// "1g.11gb" on an H100 NVL is 1g.12gb), else the name as written. Absent when unparseable.
std::optional<MigProfile> CanonicalProfile(const MigModel* model, std::string_view name);

}  // namespace gpuattr::rightsizing
