#!/usr/bin/env bash
# Quick start: install what is needed to build and run (scripts/install-deps.sh build runtime: no
# test packages), build the gpuattr binary (only it: no tests, no benchmarks), and run it against
# the current kubeconfig context. Arguments are passed to gpuattr (see `build/gpuattr --help`).
# To install it as a service instead: docs/install.md.
#
# stdout is gpuattr's alone (`scripts/run.sh --once --output json > snapshot.json` works): the
# installer's and the build's output go to stderr, and nothing is printed when nothing is rebuilt.
# A build folder configured before (by scripts/build.sh or scripts/test.sh) is used as it is; a
# new one is configured as a Release build without tests. GPUATTR_BUILD_DIR names the folder
# (default build/); GPUATTR_NO_INSTALL=1 skips the package check (the tests set it).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${GPUATTR_BUILD_DIR:-build}
[ "${GPUATTR_NO_INSTALL:-}" = 1 ] || scripts/install-deps.sh build runtime >&2

if [ ! -f "$dir/build.ninja" ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$dir" -G Ninja "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release -DGPUATTR_TESTS=OFF \
    -DGPUATTR_BENCH=OFF >&2
fi
# ninja re-runs cmake itself when a CMakeLists.txt changed. Its chatter ("Entering directory",
# "no work to do", the glob re-check) is dropped; compiler lines and errors go to stderr.
set +e
ninja -C "$dir" gpuattr 2>&1 | grep -v -e '^ninja: Entering directory' -e '^ninja: no work to do' \
  -e 'Re-checking globbed directories' >&2
status=${PIPESTATUS[0]}
set -e
[ "$status" -eq 0 ] || { echo "run.sh: the build failed (above)" >&2; exit "$status"; }
exec "$dir/gpuattr" "$@"
