#!/usr/bin/env bash
# Configures and builds into build/ (or $GPUATTR_BUILD_DIR). Extra arguments go to cmake;
# $GPUATTR_TARGETS (space-separated) builds only those targets.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${GPUATTR_BUILD_DIR:-build}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$dir" -G Ninja "${launcher[@]}" "$@" >/dev/null
# shellcheck disable=SC2086  # word splitting of the target list is intended
ninja -C "$dir" ${GPUATTR_TARGETS:-}
