// Which workload a pod belongs to (docs/rightsizing.md#workloads): the unit a rightsizing
// recommendation is made for, found from the pod object alone (no extra objects are listed).
#pragma once

#include <compare>
#include <string>

#include "gpuattr/kube/objects.h"

namespace gpuattr::rightsizing {

// (namespace, kind, name): published as the labels namespace, workload_kind, workload.
struct WorkloadId {
  std::string namespace_;
  std::string kind;  // "Deployment", "StatefulSet", "Job", "CronJob", "RayCluster", "Pod", ...
  std::string name;
  auto operator<=>(const WorkloadId&) const = default;
  bool operator==(const WorkloadId&) const = default;
  std::string Text() const { return namespace_ + "/" + kind + "/" + name; }  // for messages
};

// The pod's controller (the owner reference with `controller: true`):
// - an apps ReplicaSet named `D-<h>` whose pod carries `pod-template-hash=<h>` is Deployment D;
// - a batch Job named `C-<8 or more digits>` (the name a CronJob gives its Jobs) is CronJob C;
// - any other controller is itself (kind and name as the reference says);
// - no controller (no owner, or only owners without `controller: true`): the pod, kind "Pod".
// Pure.
WorkloadId WorkloadOf(const kube::Pod& pod);

}  // namespace gpuattr::rightsizing
