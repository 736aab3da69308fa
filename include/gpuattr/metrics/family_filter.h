// --metric-allowlist / --metric-denylist (docs/app.md#choosing-metric-families): which families
// the exposition carries, chosen as kube-state-metrics chooses its own. Each item is a regular
// expression (ECMAScript syntax) searched in the family name, unanchored as kube-state-metrics
// matches it (anchor with ^...$ for one exact name); the two lists are mutually exclusive.
// process_* (the process itself, appended at each scrape) is never filtered.
#pragma once

#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/util/status.h"

namespace gpuattr::metrics {

class FamilyFilter {
 public:
  FamilyFilter() = default;  // keeps every family
  // Both lists non-empty, or an item that is no regular expression: an error naming it.
  static Result<FamilyFilter> Make(const std::vector<std::string>& allow,
                                   const std::vector<std::string>& deny);
  // Whether the family `name` is written.
  bool Includes(std::string_view name) const;
  bool keeps_everything() const { return patterns_.empty() && !allow_; }

 private:
  std::vector<std::regex> patterns_;
  bool allow_ = false;  // true: only matching families; false: all but matching ones
};

}  // namespace gpuattr::metrics
