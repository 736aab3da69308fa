#include "gpuattr/app/stages.h"

#include "gpuattr/allocation/allocation.h"
#include "gpuattr/health/health.h"

namespace gpuattr::app {

publish::CycleOutput RunStages(const CycleInput& input, StageState& state,
                               const StageParams& params) {
  const kube::ClusterObjects& objects = *input.objects;
  publish::CycleOutput out;
  out.attribution =
      attribution::Attribute({input.cluster, objects, input.readings, params.attribution});
  out.allocation = allocation::Allocate({input.cluster, objects, out.attribution, input.now_unix});

  std::vector<health::DeviceState> states;
  states.reserve(out.attribution.devices.size());
  for (const attribution::Device& d : out.attribution.devices)
    states.push_back({d.id.node, d.health.state});
  out.attribution.node_health = health::AssessNodes(states, objects.nodes);

  out.inference =
      state.inference.Update(input.cluster, input.readings, input.now, &out.attribution);

  ledger::PodUids in_cluster;
  for (const auto& [key, pod] : objects.pods) in_cluster.emplace(pod.Id(), pod.uid);
  out.ledger = state.ledger.Record(out.attribution, input.now_unix, &in_cluster);
  return out;
}

}  // namespace gpuattr::app
