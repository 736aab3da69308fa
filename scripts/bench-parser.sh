#!/usr/bin/env bash
# Our exposition parser next to the established ones, on the same bytes, in one run.
#
#   scripts/bench-parser.sh [FILE...]
#
# Builds the Release benchmark (build-release/, or $GPUATTR_BENCH_BUILD_DIR), then runs rounds that
# interleave ../shared/perf-peers/run.sh (one round each) with our parser timed by the peers'
# protocol (`expo_parser_bench --peers-protocol`), so a noisy spell on the shared machine hits every
# parser alike. Without FILE the inputs are the peers' generated dcgm_1node.prom and
# dcgm_100node.prom. Prints the peers' summary table with our row added, then the Google Benchmark
# view of the same files. Everything is written under $PEERS_WORK (default /tmp/peers-bench).
#
# Knobs (env): PEERS_ROUNDS (5), PEERS_REPS, PEERS_REP_SEC, PEERS_WARM_SEC, PEERS_ONLY, PEERS_NODES,
# PEERS_GO_ENVS (passed on to run.sh); the first run.sh may call its setup.sh (apt-get, as root).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${GPUATTR_BENCH_BUILD_DIR:-build-release}
peers=${GPUATTR_PEERS_DIR:-$PWD/../shared/perf-peers}
export PEERS_WORK=${PEERS_WORK:-/tmp/peers-bench}
rounds=${PEERS_ROUNDS:-5}
reps=${PEERS_REPS:-3}
rep_sec=${PEERS_REP_SEC:-0.25}
warm_sec=${PEERS_WARM_SEC:-0.5}
[ -x "$peers/run.sh" ] || { echo "no $peers/run.sh" >&2; exit 1; }

echo "== build ($build, Release)" >&2
GPUATTR_BUILD_DIR=$build scripts/build.sh -DCMAKE_BUILD_TYPE=Release -DGPUATTR_BENCH=ON >&2
bench=$build/tests/expo_parser_bench
[ -x "$bench" ] || { echo "no $bench (is libbenchmark-dev installed?)" >&2; exit 1; }

mkdir -p "$PEERS_WORK"
combined=$PEERS_WORK/combined.tsv
files=("$@")
: >"$combined"
for round in $(seq 1 "$rounds"); do
  echo "== round $round/$rounds: peers" >&2
  # run.sh generates the inputs when given no files; later rounds reuse them.
  PEERS_ROUNDS=1 "$peers/run.sh" "${files[@]}" >/dev/null
  if [ ${#files[@]} -eq 0 ]; then
    for n in ${PEERS_NODES:-1 100}; do files+=("$PEERS_WORK/inputs/dcgm_${n}node.prom"); done
  fi
  grep -v '^# load avg at end' "$PEERS_WORK/results.tsv" | { [ "$round" -eq 1 ] && cat || grep -v '^#'; } >>"$combined"
  echo "== round $round/$rounds: gpuattr (load avg $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  "$bench" --peers-protocol --reps "$reps" --rep-sec "$rep_sec" --warm-sec "$warm_sec" \
    "${files[@]}" | tee -a "$combined" >&2
done
echo "# load avg at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$combined"

{
  grep '^#' "$combined" | sed 's/^# /    /'
  echo "    gpuattr: $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(${CXX:-c++} --version | head -1), Release"
  echo
  python3 "$peers/summarize.py" "$combined" "${files[@]}"
} >"$PEERS_WORK/combined.md"
cat "$PEERS_WORK/combined.md"

echo
echo "== Google Benchmark, same files (wall time)"
GPUATTR_BENCH_FILES=$(IFS=:; echo "${files[*]}") "$bench" --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true
