// What a pod holds on one device, and the MIG profiles a cluster advertises, from the attribution
// and the objects (docs/rightsizing.md#what-a-pod-holds). Internal to rightsizing.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gpuattr/attribution/types.h"
#include "gpuattr/kube/objects.h"
#include "gpuattr/rightsizing/recommend.h"

namespace gpuattr::rightsizing {

// A MIG slice: the profile the pod requested (`nvidia.com/mig-<profile>`, when it requests one
// profile only), else the exporter's, mapped onto the table. A time-sliced device: r from the
// node's `<resource>.replicas` label, else the device's pod count. Whole GPU otherwise.
Holding HoldingOf(const attribution::PodDevice& link, const attribution::Device& device,
                  const kube::Pod& pod, const kube::Node* node);

// Per card model (as the exporter names it), the MIG profiles the nodes with such cards advertise
// that the model's table lacks.
using AdvertisedProfiles = std::map<std::string, std::vector<MigProfile>>;
AdvertisedProfiles AdvertisedByModel(const attribution::Attribution& attribution,
                                     const kube::ClusterObjects& objects);

}  // namespace gpuattr::rightsizing
