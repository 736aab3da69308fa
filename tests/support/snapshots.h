// Building model snapshots in tests: a cluster's cycle output is shared and immutable once
// published, so tests that set one part at a time get a fresh copy to change.
#pragma once

#include <memory>

#include "gpuattr/model/snapshot.h"

namespace gpuattr::testing {

// The cluster's output, copied (or made) so that it can be changed before the snapshot is used.
inline model::CycleOutput& MutableOutput(model::ClusterSnapshot& c) {
  auto out = c.latest.output ? std::make_shared<model::CycleOutput>(*c.latest.output)
                             : std::make_shared<model::CycleOutput>();
  c.latest.output = out;
  return *out;
}

}  // namespace gpuattr::testing
