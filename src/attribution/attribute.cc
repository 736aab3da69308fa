// Attribute(): the steps in order, then the maps become sorted vectors with indexes.
#include "gpuattr/attribution/attribution.h"

#include <algorithm>

#include "gpuattr/attribution/work.h"

namespace gpuattr::attribution {
namespace {

Attribution Finish(const AttributionInput& input, Work& work) {
  Attribution out;
  out.cluster = input.cluster;
  std::map<DeviceId, size_t> device_index;
  for (auto& [id, d] : work.devices) {
    device_index.emplace(id, out.devices.size());
    out.devices.push_back(d.device);
  }
  for (auto& [key, c] : work.cards) {
    size_t card_index = out.cards.size();
    for (const DeviceId& id : c.devices) {
      size_t i = device_index.at(id);
      out.devices[i].card = card_index;
      c.card.devices.push_back(i);
    }
    std::sort(c.card.devices.begin(), c.card.devices.end());
    out.cards.push_back(std::move(c.card));
  }
  for (auto& [key, link] : work.links) {
    link.device = device_index.at(key.second);
    out.pod_devices.push_back(link);
  }
  for (auto& [id, pod] : work.pods) out.pods.push_back(pod);
  out.namespaces = SummariseNamespaces(input, work.pods, work.links);
  out.nodes = NodePowers(work);
  return out;
}

}  // namespace

Attribution Attribute(const AttributionInput& input) {
  Work work;
  GroupByNode(input, work);
  BuildDevices(work);
  SplitCardPower(work);
  BuildPodLinks(input, work);
  SummarisePods(input, work);
  return Finish(input, work);
}

}  // namespace gpuattr::attribution
