// An allocation that exercises every family of the allocation group (a GPU node with a held and
// an unhealthy GPU, a pod holding one, a time-sliced node with a pod holding a replica, a pending
// pod with a hint), for metrics and report tests.
#pragma once

#include <string>

#include "gpuattr/allocation/allocation.h"

namespace gpuattr::testing {

inline allocation::Allocation RichAllocation(const attribution::Attribution& attribution) {
  kube::ClusterObjects o;
  kube::Node node;
  node.name = "n1";
  node.capacity = {{"nvidia.com/gpu", 3}};
  node.allocatable = {{"nvidia.com/gpu", 2}};
  o.nodes[node.name] = node;
  kube::Container gpu;
  gpu.name = "main";
  gpu.limits = {{"nvidia.com/gpu", 1}};
  kube::Pod held;
  held.namespace_ = "a";
  held.name = "x";
  held.node_name = "n1";
  held.phase = "Running";
  held.containers = {gpu};
  o.pods[held.Key()] = held;
  kube::Pod waiting = held;
  waiting.name = "next";
  waiting.node_name.clear();
  waiting.phase = "Pending";
  waiting.creation_unix = 1764460000;
  waiting.containers[0].limits = {{"nvidia.com/gpu", 4}};
  o.pods[waiting.Key()] = waiting;
  // A time-sliced node (4 replicas per GPU) and a pod holding one replica.
  kube::Node sliced;
  sliced.name = "ts1";
  sliced.labels = {{"nvidia.com/gpu.replicas", "4"}};
  sliced.capacity = sliced.allocatable = {{"nvidia.com/gpu.shared", 8}};
  o.nodes[sliced.name] = sliced;
  kube::Pod replica = held;
  replica.name = "replica";
  replica.node_name = "ts1";
  replica.containers[0].limits = {{"nvidia.com/gpu.shared", 1}};
  o.pods[replica.Key()] = replica;
  return allocation::Allocate({attribution.cluster, o, attribution, 1764460800});
}

}  // namespace gpuattr::testing
