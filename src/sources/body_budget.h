// Counts the devices and the pods per device a reader meets, against the body limits
// (sources/limits.h), so that a reader can stop at the first one over (internal helper).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "gpuattr/sources/limits.h"

namespace gpuattr::sources {

class DeviceBudget {
 public:
  explicit DeviceBudget(const BodyLimits& limits) : limits_(limits) {}

  // Admits one more line of `device` (an identity key), labelled with `pod` ("" for none).
  // Returns false, filling `breach`, when the device or the pod is one over its limit.
  bool Admit(const std::string& device, std::string_view device_name, const std::string& pod,
             LimitBreach& breach) {
    auto it = devices_.find(device);
    if (it == devices_.end()) {
      if (devices_.size() >= limits_.devices_per_node) {
        breach = {"devices_per_node", limits_.devices_per_node, devices_.size() + 1, ""};
        return false;
      }
      it = devices_.emplace(device, std::unordered_set<std::string>()).first;
    }
    if (pod.empty() || it->second.count(pod)) return true;
    if (it->second.size() >= limits_.pods_per_device) {
      breach = {"pods_per_device", limits_.pods_per_device, it->second.size() + 1,
                "device " + std::string(device_name)};
      return false;
    }
    it->second.insert(pod);
    return true;
  }

 private:
  const BodyLimits& limits_;
  std::unordered_map<std::string, std::unordered_set<std::string>> devices_;
};

}  // namespace gpuattr::sources
