// An invariant check for libFuzzer targets: a violation aborts, so the fuzzer keeps the input.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace gpuattr::fuzz {

inline void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant violated: %s\n", what);
    std::abort();
  }
}

}  // namespace gpuattr::fuzz
