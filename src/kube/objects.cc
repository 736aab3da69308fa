#include "gpuattr/kube/objects.h"

namespace gpuattr::kube {
namespace {

template <typename Map>
const typename Map::mapped_type* Find(const Map& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

// "namespace/name" in a buffer of the calling thread: the stages look up tens of thousands of
// pods a cycle, and a new string each time was a malloc and a free each (docs/performance.md).
const std::string& NsKey(std::string_view ns, std::string_view name) {
  thread_local std::string key;
  key.assign(ns);
  key += '/';
  key += name;
  return key;
}

}  // namespace

const Pod* ClusterObjects::FindPod(std::string_view ns, std::string_view name) const {
  return Find(pods, NsKey(ns, name));
}

const OwnerReference* Pod::OwnedBy(std::string_view kind) const {
  for (const OwnerReference& o : owners)
    if (o.kind == kind) return &o;
  return nullptr;
}

const OwnerReference* Pod::Controller() const {
  for (const OwnerReference& o : owners)
    if (o.controller) return &o;
  return nullptr;
}

const Node* ClusterObjects::FindNode(std::string_view name) const {
  thread_local std::string key;
  key.assign(name);
  return Find(nodes, key);
}

const Service* ClusterObjects::FindService(std::string_view ns, std::string_view name) const {
  return Find(services, NsKey(ns, name));
}

bool IsExtendedResource(std::string_view name) {
  return name != "cpu" && name != "memory" && name != "ephemeral-storage" && name != "pods" &&
         name.substr(0, 10) != "hugepages-";
}

}  // namespace gpuattr::kube
