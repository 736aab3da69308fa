#!/usr/bin/env bash
# Runs every test: the normal build (unit, golden and end-to-end tests with the fake apiserver,
# kubectl and a real Prometheus), the unit tests again under ASan+UBSan, and a short fuzz smoke.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)
start=$SECONDS
phase() {  # phase NAME: announces NAME with the seconds spent so far
  echo "== ($((SECONDS - start)) s so far) $1"
}

phase "build and test (RelWithDebInfo)"
GPUATTR_BUILD_DIR=build scripts/build.sh
ctest --test-dir build --output-on-failure -j "$jobs"

phase "unit tests under ASan+UBSan"
# Only the unit-test binary: the e2e tests and the daemon are exercised by the build above.
GPUATTR_BUILD_DIR=build-asan GPUATTR_TARGETS=gpuattr_unit_tests scripts/build.sh -DCMAKE_BUILD_TYPE=Debug -DGPUATTR_SANITIZE=ON \
  -DGPUATTR_BENCH=OFF
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" -L unit

if [ -d tests/fuzz ] && ls tests/fuzz/*_fuzz.cc >/dev/null 2>&1; then
  phase "fuzz smoke (libFuzzer, a few seconds per target)"
  # Only the fuzz targets: the rest of the tree is already tested above.
  GPUATTR_BUILD_DIR=build-fuzz CXX=clang++ GPUATTR_TARGETS="$(basename -s .cc tests/fuzz/*_fuzz.cc)" \
    scripts/build.sh -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUATTR_FUZZ=ON -DGPUATTR_BENCH=OFF
  scripts/fuzz.sh smoke
fi
phase "all tests passed"
