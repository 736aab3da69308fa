// The identity of a pod: namespace and name. The one pod key shared by every module (objects,
// DRA holders, exporter labels, attribution, allocation, the ledger).
#pragma once

#include <compare>
#include <string>

namespace gpuattr::kube {

struct PodId {
  std::string namespace_;
  std::string name;
  auto operator<=>(const PodId&) const = default;
  bool operator==(const PodId&) const = default;
  std::string Text() const { return namespace_ + "/" + name; }  // "namespace/name"
};

}  // namespace gpuattr::kube
