#include "support/pods.h"

namespace gpuattr::testing {

kube::Pod MakeRunningPod(std::string ns, std::string name, std::string node, std::string image,
                         std::vector<kube::ContainerPort> ports) {
  kube::Pod p;
  p.namespace_ = std::move(ns);
  p.name = std::move(name);
  p.uid = "uid-" + p.name;
  p.node_name = std::move(node);
  p.phase = "Running";
  p.all_containers_ready = true;
  kube::Container c;
  c.name = "main";
  c.image = std::move(image);
  c.ports = std::move(ports);
  p.containers.push_back(std::move(c));
  return p;
}

kube::Pod MakeDaemonSetPod(std::string ns, std::string name, std::string node, std::string image,
                           std::vector<kube::ContainerPort> ports) {
  kube::Pod p = MakeRunningPod(std::move(ns), std::move(name), std::move(node), std::move(image),
                               std::move(ports));
  p.owners.push_back({"DaemonSet", p.name.substr(0, p.name.rfind('-')), true, "apps/v1"});
  return p;
}

kube::Node MakeGpuNode(std::string name, int64_t gpus) {
  kube::Node n;
  n.name = std::move(name);
  n.capacity["nvidia.com/gpu"] = gpus;
  return n;
}

}  // namespace gpuattr::testing
