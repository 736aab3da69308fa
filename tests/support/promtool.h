// `promtool check metrics` on an exposition (docs/design.md#naming-labels-and-units: it must print
// nothing).
#pragma once

#include <string>
#include <string_view>

namespace gpuattr::testing {

struct PromtoolCheck {
  bool available = false;  // /usr/bin/promtool exists; callers GTEST_SKIP() otherwise
  int exit_code = -1;
  std::string printed;  // stdout and stderr together; "" when the exposition is clean
};

// Runs `promtool check metrics` with `exposition` on stdin (through a private temporary file).
// One known complaint is not counted: promtool's unit lint objects to "hours" in the contract's
// GPU-hours families (`gpuattr_*_gpu_hours_total use base unit "seconds" instead of "hours"`,
// docs/accounting.md#counters); the names are the design contract's, and a GPU-hour is the unit
// bills are in. Any other line still fails.
PromtoolCheck PromtoolCheckMetrics(std::string_view exposition);

}  // namespace gpuattr::testing
