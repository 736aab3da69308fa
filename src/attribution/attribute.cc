// Attribute(): the steps in order, then the maps become sorted vectors with indexes.
#include "gpuattr/attribution/attribution.h"

#include <algorithm>

#include "gpuattr/attribution/work.h"

namespace gpuattr::attribution {
namespace {

Attribution Finish(const AttributionInput& input, Work& work) {
  Attribution out;
  out.cluster = input.cluster;
  size_t index = 0;
  for (auto& [id, d] : work.devices) d.index = index++;
  for (auto& [key, link] : work.links) link.device = work.devices.find(key.second)->second.index;
  // These read the work maps: before anything is moved out of them.
  out.namespaces = SummariseNamespaces(input, work.pods, work.links);
  out.nodes = NodePowers(work);
  out.devices.reserve(work.devices.size());
  for (auto& [id, d] : work.devices) out.devices.push_back(std::move(d.device));
  out.cards.reserve(work.cards.size());
  for (auto& [key, c] : work.cards) {
    const size_t card_index = out.cards.size();
    for (const DeviceWork* d : c.devices) {
      out.devices[d->index].card = card_index;
      c.card.devices.push_back(d->index);
    }
    std::sort(c.card.devices.begin(), c.card.devices.end());
    out.cards.push_back(std::move(c.card));
  }
  out.pod_devices.reserve(work.links.size());
  for (auto& [key, link] : work.links) out.pod_devices.push_back(std::move(link));
  out.pods.reserve(work.pods.size());
  for (auto& [id, pod] : work.pods) out.pods.push_back(std::move(pod));
  return out;
}

// The work's pointers into the readings, dropped once every step has read them.
void ForgetReadings(Work& work) {
  for (auto& [node, readings] : work.nodes) {
    std::vector<const sources::DcgmRecord*>().swap(readings.dcgm);
    std::vector<const sources::ProcessReading*>().swap(readings.processes);
    std::vector<const sources::ProcessDeviceReading*>().swap(readings.process_devices);
  }
  for (auto& [id, d] : work.devices) std::vector<const sources::DcgmRecord*>().swap(d.dcgm);
}

}  // namespace

Attribution Attribute(const AttributionInput& input) { return Attribute(input, {}); }

Attribution Attribute(const AttributionInput& input, const std::function<void()>& read) {
  Work work;
  GroupByNode(input, work);
  BuildDevices(work);
  SplitCardPower(work);
  BuildPodLinks(input, work);
  SummarisePods(input, work);
  ForgetReadings(work);
  if (read) read();
  return Finish(input, work);
}

}  // namespace gpuattr::attribution
