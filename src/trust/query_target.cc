#include "gpuattr/trust/query_target.h"

#include "gpuattr/trust/vet.h"

namespace gpuattr::trust {

std::string_view JudgeQueryTarget(sources::RepairedSeries& series, const QueryTargetContext& ctx) {
  if (series.targets.empty()) return ctx.api_pinned ? std::string_view() : kNoTarget;
  for (const kube::PodId& t : series.targets) {
    const kube::Pod* pod = ctx.objects->FindPod(t.namespace_, t.name);
    if (pod == nullptr) return kUntrustedTarget;
    const bool pinned = ctx.pinned && ctx.pinned(*pod);
    if (!JudgeExporter(*pod, pinned, ctx.config).trusted()) return kUntrustedTarget;
    if (series.node.empty()) series.node = pod->node_name;
    if (pod->node_name != series.node) return kPodOnOtherNode;
  }
  if (series.workload) {
    const kube::Pod* pod = ctx.objects->FindPod(series.workload->namespace_, series.workload->name);
    if (pod == nullptr || pod->node_name != series.node || !ctx.holds_gpu || !ctx.holds_gpu(*pod))
      return kUntrustedTarget;
  }
  return {};
}

}  // namespace gpuattr::trust
