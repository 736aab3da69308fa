// Building model snapshots in tests: a cluster's cycle output is shared and immutable once
// published, so tests that set one part at a time get a fresh copy to change.
#pragma once

#include <memory>
#include <string>

#include "gpuattr/model/snapshot.h"

namespace gpuattr::testing {

// The cluster's output, copied (or made) so that it can be changed before the snapshot is used.
inline model::CycleOutput& MutableOutput(model::ClusterSnapshot& c) {
  auto out = c.latest.output ? std::make_shared<model::CycleOutput>(*c.latest.output)
                             : std::make_shared<model::CycleOutput>();
  c.latest.output = out;
  return *out;
}

// A complete snapshot of one cluster's cycle result, as the session publishes it.
inline model::Snapshot SnapshotOf(const std::string& cluster, const model::CycleResult& result) {
  model::Snapshot s;
  s.complete = true;
  model::ClusterSnapshot c;
  c.cluster = cluster;
  c.latest = result;
  s.clusters.push_back(std::move(c));
  return s;
}

// A pod of namespace "ml" as attribution names it (its id and node, nothing measured): the
// attribution a view's rows by index point into.
inline attribution::Pod AttributedPod(const std::string& name, const std::string& node) {
  attribution::Pod p;
  p.id = {"ml", name};
  p.node = node;
  return p;
}

}  // namespace gpuattr::testing
