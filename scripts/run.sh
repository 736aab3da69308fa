#!/usr/bin/env bash
# Quick start: install what is needed, build, and run gpuattr against the current kubeconfig
# context. Arguments are passed to gpuattr (see `build/gpuattr --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh -DCMAKE_BUILD_TYPE=Release
exec build/gpuattr "$@"
