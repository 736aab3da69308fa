#!/usr/bin/env bash
# Renders `gpuattr --once` against every fixture scenario (served by gpuattr-fakecluster) into
# OUTDIR/<scenario>.prom, with the series that change from run to run (durations, timestamps,
# pending ages, request counts, build info) left out. Used to show that a refactoring leaves the
# exposition of every scenario byte-identical:
#
#   git stash; scripts/render-scenarios.sh /tmp/before; git stash pop
#   scripts/render-scenarios.sh /tmp/after && diff -r /tmp/before /tmp/after
#
# Builds gpuattr and gpuattr-fakecluster into $GPUATTR_BUILD_DIR (default build/) first, unless
# GPUATTR_SKIP_BUILD is set (binaries copied elsewhere).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/render-scenarios.sh OUTDIR}
build=${GPUATTR_BUILD_DIR:-build}
if [ -z "${GPUATTR_SKIP_BUILD:-}" ]; then
  GPUATTR_BUILD_DIR=$build GPUATTR_TARGETS="gpuattr gpuattr-fakecluster" scripts/build.sh >/dev/null
fi
mkdir -p "$out"
tmp=$(mktemp -d -t gpuattr-render.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

volatile='^gpuattr_(cycle_duration_seconds|last_cycle_timestamp_seconds|exporter_scrape_duration_seconds|pending_pod_seconds|apiserver_requests_total|build_info)[{ ]'

for dir in fixtures/scenarios/*/; do
  name=$(basename "$dir")
  rm -f "$tmp/kubeconfig"
  "$build/tests/gpuattr-fakecluster" --scenario "$dir" --context "$name" \
    --kubeconfig-out "$tmp/kubeconfig" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do [ -s "$tmp/kubeconfig" ] && break; sleep 0.05; done
  rc=0
  "$build/gpuattr" --kubeconfig "$tmp/kubeconfig" --once --state.file "$tmp/state-$name.json" \
    >"$tmp/$name.prom" 2>"$tmp/$name.err" || rc=$?
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  { echo "# exit $rc"; grep -Ev "$volatile" "$tmp/$name.prom" || true; } >"$out/$name.prom"
  echo "$name: exit $rc, $(wc -l <"$out/$name.prom") lines"
done
