#!/usr/bin/env bash
# Quick start: install what is needed, build the gpuattr binary (only it: no tests, no
# benchmarks), and run it against the current kubeconfig context. Arguments are passed to gpuattr
# (see `build/gpuattr --help`). To install it as a service instead: docs/install.md.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
GPUATTR_TARGETS=gpuattr scripts/build.sh -DCMAKE_BUILD_TYPE=Release
exec build/gpuattr "$@"
