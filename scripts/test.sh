#!/usr/bin/env bash
# Runs every test: the normal build (unit, golden and end-to-end tests with the fake apiserver,
# kubectl and a real Prometheus, and the POSIX variants of the daemon and e2e tests), the unit tests
# again under ASan+UBSan on the POSIX calls, and a short fuzz smoke.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)
start=$SECONDS
phase() {  # phase NAME: announces NAME with the seconds spent so far
  echo "== ($((SECONDS - start)) s so far) $1"
}

phase "build and test (RelWithDebInfo)"
# Tests and benchmarks on explicitly: a build/ first configured by scripts/run.sh has them off.
GPUATTR_BUILD_DIR=build scripts/build.sh -DGPUATTR_TESTS=ON -DGPUATTR_BENCH=ON
ctest --test-dir build --output-on-failure -j "$jobs"

phase "unit tests under ASan+UBSan on the POSIX calls (clang, the build of the fuzz targets)"
# One sanitizer build serves both: clang with ASan+UBSan and libFuzzer's instrumentation,
# -O1 with line tables (quick to compile, readable stacks). Only the unit tests and the fuzz
# targets: the e2e tests and the daemon are exercised by the build above. It takes the POSIX
# implementation of util/platform.h (what macOS and the BSDs build), so the unit label runs on
# both: Linux's above, POSIX's here (docs/install.md#other-systems).
# A build-asan/ configured by an older script with g++ cannot take libFuzzer's flags: start it anew.
if [ -f build-asan/CMakeCache.txt ] && ! grep -q '^CMAKE_CXX_COMPILER:.*clang' build-asan/CMakeCache.txt; then
  rm -rf build-asan
fi
fuzz_targets=$(basename -s .cc tests/fuzz/*_fuzz.cc | tr '\n' ' ')
GPUATTR_BUILD_DIR=build-asan CXX=clang++ GPUATTR_TARGETS="gpuattr_unit_tests $fuzz_targets" \
  scripts/build.sh -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" \
  -DGPUATTR_FUZZ=ON -DGPUATTR_BENCH=OFF -DGPUATTR_POSIX_ONLY=ON
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" -L unit

phase "fuzz smoke (libFuzzer, a few seconds per target)"
GPUATTR_FUZZ_BUILD_DIR=build-asan scripts/fuzz.sh smoke
phase "all tests passed"
