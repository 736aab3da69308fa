// Family group "pods": pod ↔ device links and per-pod usage, power and attribution method.
#pragma once

#include "gpuattr/attribution/types.h"
#include "gpuattr/metrics/families.h"
#include "gpuattr/model/snapshot.h"

namespace gpuattr::metrics {

extern const FamilyGroup kPodsGroup;  // pods.cc
void WritePods(const attribution::Attribution& a, FamilyWriter& w);
// gpuattr_pod_info: one series per pod of the cycle's attribution (CycleOutput::pod_identities).
void WritePodInfo(const std::string& cluster, const std::vector<model::PodIdentity>& pods,
                  FamilyWriter& w);

}  // namespace gpuattr::metrics
