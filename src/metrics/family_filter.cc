#include "gpuattr/metrics/family_filter.h"

namespace gpuattr::metrics {

Result<FamilyFilter> FamilyFilter::Make(const std::vector<std::string>& allow,
                                        const std::vector<std::string>& deny) {
  if (!allow.empty() && !deny.empty())
    return MakeError(ErrorCode::kInvalidArgument,
                     "the metric allowlist and denylist are mutually exclusive (as in "
                     "kube-state-metrics): set only one of them");
  FamilyFilter f;
  f.allow_ = !allow.empty();
  for (const std::string& item : f.allow_ ? allow : deny) {
    if (item.empty())
      return MakeError(ErrorCode::kInvalidArgument, "empty pattern (it would match every family)");
    try {
      f.patterns_.emplace_back(item, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "\"" + item + "\" is not a regular expression: " + e.what());
    }
  }
  return f;
}

bool FamilyFilter::Includes(std::string_view name) const {
  bool matched = false;
  for (const std::regex& r : patterns_)
    if (std::regex_search(name.begin(), name.end(), r)) {
      matched = true;
      break;
    }
  return allow_ ? matched : !matched;
}

}  // namespace gpuattr::metrics
