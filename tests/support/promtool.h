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
PromtoolCheck PromtoolCheckMetrics(std::string_view exposition);

}  // namespace gpuattr::testing
