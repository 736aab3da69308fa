// Node roll-up: the worst reported device state, and resources the device plugin withdrew.
#include <algorithm>

#include "gpuattr/health/health.h"

namespace gpuattr::health {
namespace {

bool IsGpuResource(std::string_view name) { return name.starts_with("nvidia.com/"); }

int Rank(State s) {  // worse is higher; unknown reports nothing
  switch (s) {
    case State::kOk:
      return 1;
    case State::kWarning:
      return 2;
    case State::kCritical:
      return 3;
    case State::kUnknown:
      break;
  }
  return 0;
}

}  // namespace

bool IsGpuNode(const kube::Node& node) {
  for (const kube::ResourceList* list : {&node.capacity, &node.allocatable})
    for (const auto& [name, value] : *list)
      if (IsGpuResource(name)) return true;
  return false;
}

// Every nvidia.com/ resource counts, `.shared` replicas too: the device plugin withdraws the
// replicas of an unhealthy GPU as well, and that is the only signal on a renamed time-sliced node.
std::vector<std::string> WithdrawnGpuResources(const kube::Node& node) {
  std::vector<std::string> out;
  for (const auto& [name, capacity] : node.capacity) {
    if (!IsGpuResource(name)) continue;
    auto it = node.allocatable.find(name);
    int64_t allocatable = it == node.allocatable.end() ? 0 : it->second;
    if (capacity > allocatable)
      out.push_back(name + ": capacity " + std::to_string(capacity) + ", allocatable " +
                    std::to_string(allocatable));
  }
  return out;  // ResourceList is ordered by name
}

State RollUp(std::span<const State> device_states, bool resources_withdrawn) {
  if (resources_withdrawn) return State::kCritical;
  State worst = State::kUnknown;
  for (State s : device_states)
    if (Rank(s) > Rank(worst)) worst = s;
  return worst;
}

std::vector<NodeHealth> AssessNodes(std::span<const DeviceState> devices,
                                    const std::map<std::string, kube::Node>& nodes) {
  std::map<std::string, std::vector<State>> by_node;
  for (const auto& [name, node] : nodes)
    if (IsGpuNode(node)) by_node[name];
  for (const DeviceState& d : devices)
    if (!d.node.empty()) by_node[d.node].push_back(d.state);

  std::vector<NodeHealth> out;
  out.reserve(by_node.size());
  for (const auto& [name, states] : by_node) {
    NodeHealth h;
    h.node = name;
    if (auto it = nodes.find(name); it != nodes.end())
      h.reasons = WithdrawnGpuResources(it->second);
    h.state = RollUp(states, !h.reasons.empty());
    for (State s : {State::kCritical, State::kWarning}) {
      auto n = std::count(states.begin(), states.end(), s);
      if (n > 0)
        h.reasons.push_back(std::to_string(n) + " " + std::string(StateName(s)) +
                            (n == 1 ? " device" : " devices"));
    }
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace gpuattr::health
