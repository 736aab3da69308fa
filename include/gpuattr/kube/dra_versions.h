// Which resource.k8s.io versions to watch DRA objects at (docs/design.md#dra): v1, then v1beta2,
// then v1beta1, as far as the apiserver serves them. One GET of the group's discovery document
// (/apis/resource.k8s.io) answers this for both kinds, which is politer than LISTing each kind at
// each version until one does not answer 404.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "gpuattr/util/status.h"

namespace gpuattr::kube {

inline constexpr std::string_view kDraGroup = "resource.k8s.io";
inline constexpr std::string_view kDraGroupPath = "/apis/resource.k8s.io";
// Most preferred first; the shapes gpuattr decodes (kube/decode.h).
inline constexpr std::array<std::string_view, 3> kDraVersions = {"v1", "v1beta2", "v1beta1"};

// The versions of kDraVersions (in that order) that an APIGroup discovery body lists. An empty
// answer means none of them is served (say only v1alpha3). A body that is not an APIGroup is an
// error naming the path.
Result<std::vector<std::string>> DraVersionsToWatch(std::string_view group_discovery_body);

// "/apis/resource.k8s.io/v1/resourceslices"
std::string DraListPath(std::string_view version, std::string_view resource);

}  // namespace gpuattr::kube
