// Counts the distinct families a reader skipped, keeping the first few names (internal helper).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>

#include "gpuattr/sources/readings.h"

namespace gpuattr::sources {

class FamilyTally {
 public:
  explicit FamilyTally(ReadStats& stats) : stats_(stats) {}

  void Ignored(std::string_view name) {
    if (ignored_.insert(name).second) {
      ++stats_.ignored_families;
      if (stats_.ignored_family_names.size() < kMaxFamilyNamesKept) {
        stats_.ignored_family_names.emplace_back(name);
      }
    }
  }
  void Unknown(std::string_view name) {
    if (unknown_.insert(name).second) {
      ++stats_.unknown_families;
      if (stats_.unknown_family_names.size() < kMaxFamilyNamesKept) {
        stats_.unknown_family_names.emplace_back(name);
      }
    }
  }

 private:
  ReadStats& stats_;
  std::unordered_set<std::string_view> ignored_;  // views into the parsed body
  std::unordered_set<std::string_view> unknown_;
};

// Appends `part` length-prefixed, so that no label value can make two identities collide.
inline void AppendKeyPart(std::string& key, std::string_view part) {
  const auto n = static_cast<uint32_t>(part.size());
  key.append(reinterpret_cast<const char*>(&n), sizeof n);
  key.append(part);
}

}  // namespace gpuattr::sources
