#!/usr/bin/env bash
# End-to-end scale run (docs/design.md#targets): the real gpuattr binary in server mode against the
# fake apiserver serving a generated GPU cluster (8 A100s per node, half of the nodes
# MIG-partitioned, one port-less GPU job pod per device, one dcgm-exporter per node) on 127.0.0.1.
#
#   scripts/bench-scale.sh [scale_e2e_bench options]     e.g. --nodes 250,500,1000 --latency-ms 5
#
# Builds the Release binaries (build-release/, or $GPUATTR_BENCH_BUILD_DIR; only the targets it
# needs), then runs tests/bench/scale_e2e_bench, which prints one table row per size: first and
# steady cycle times (each steady cycle makes one proxy GET per exporter), where the steady
# cycle's time goes, LISTs after the first cycle (must be 0), the client connections the steady
# cycles' proxy GETs came on (keep-alive: as many as scrape.concurrency, none new), the daemon's
# peak RSS (VmHWM), /metrics latency p50/p99 with concurrent scrapers (Accept-Encoding: gzip,
# as Prometheus; --scraper lean|httplib picks the client) and CPU per scrape. See
# `scale_e2e_bench --help` for the knobs. Profiling the daemon (heaptrack, perf, its debug lines):
# docs/fakeapi.md, "Profiling the daemon".
set -euo pipefail
cd "$(dirname "$0")/.."
build=${GPUATTR_BENCH_BUILD_DIR:-build-release}
echo "== build ($build, Release: gpuattr, scale_e2e_bench)" >&2
GPUATTR_BUILD_DIR=$build GPUATTR_TARGETS="gpuattr scale_e2e_bench" \
  scripts/build.sh -DCMAKE_BUILD_TYPE=Release -DGPUATTR_BENCH=ON >&2
bench=$build/tests/scale_e2e_bench
[ -x "$bench" ] || { echo "no $bench (is libbenchmark-dev installed?)" >&2; exit 1; }
echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
exec "$bench" --gpuattr "$build/gpuattr" "$@"
