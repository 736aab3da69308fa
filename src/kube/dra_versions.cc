#include "gpuattr/kube/dra_versions.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace gpuattr::kube {

Result<std::vector<std::string>> DraVersionsToWatch(std::string_view body) {
  auto bad = [](const std::string& why) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "discovery " + std::string(kDraGroupPath) + ": " + why);
  };
  std::vector<std::string> served;
  try {
    auto j = nlohmann::json::parse(body);
    if (!j.is_object()) return bad("not a JSON object");
    auto versions = j.find("versions");
    if (versions == j.end() || !versions->is_array()) return bad("no \"versions\" array");
    for (const auto& v : *versions) {
      if (!v.is_object()) continue;
      auto version = v.find("version");
      if (version != v.end() && version->is_string()) served.push_back(version->get<std::string>());
    }
  } catch (const std::exception& e) {
    return bad(std::string("malformed JSON: ") + e.what());
  }
  std::vector<std::string> out;
  for (std::string_view want : kDraVersions)
    if (std::find(served.begin(), served.end(), want) != served.end()) out.emplace_back(want);
  return out;
}

std::string DraListPath(std::string_view version, std::string_view resource) {
  return std::string(kDraGroupPath) + "/" + std::string(version) + "/" + std::string(resource);
}

}  // namespace gpuattr::kube
