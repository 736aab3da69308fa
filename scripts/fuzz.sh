#!/usr/bin/env bash
# Runs the libFuzzer targets built into build-fuzz/ (or $GPUATTR_FUZZ_BUILD_DIR; scripts/test.sh
# builds them into build-asan/ with the ASan unit tests). Build them with
#   GPUATTR_BUILD_DIR=build-fuzz CXX=clang++ scripts/build.sh -DGPUATTR_FUZZ=ON -DGPUATTR_BENCH=OFF
#
#   scripts/fuzz.sh smoke                 every target ~5 s ($GPUATTR_FUZZ_SMOKE_SECONDS), fresh corpus
#   scripts/fuzz.sh long SECONDS TARGET   one target (e.g. expo_parser_fuzz) for SECONDS, keeping its
#                                         corpus in $GPUATTR_FUZZ_WORK/TARGET (default /tmp/gpuattr-fuzz)
#
# Corpora are seeded from fixtures/exporters/*.prom, ../shared/fixtures-real/*.prom (when present)
# and tests/fuzz/seeds/TARGET/ (JSON seeds for the query-API and state-file targets),
# copied into a scratch directory: nothing is written into the repository. Crash inputs are kept
# in the scratch directory and named in the output; the exit code is non-zero on any crash.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${GPUATTR_FUZZ_BUILD_DIR:-build-fuzz}
mode=${1:-}

usage() {
  echo "usage: scripts/fuzz.sh smoke | scripts/fuzz.sh long SECONDS TARGET" >&2
  exit 2
}

seed() {  # seed DIR TARGET: copy the exposition samples and the target's own seeds into a corpus
  local dir=$1 name=$2 f
  mkdir -p "$dir"
  for f in "$root"/fixtures/exporters/*.prom "$root"/../shared/fixtures-real/*.prom \
    "$root"/tests/fuzz/seeds/"$name"/*; do
    [ -f "$f" ] && cp "$f" "$dir/seed-$(basename "$f")"
  done
  return 0
}

# run TARGET SECONDS CORPUS ARTIFACTS: one libFuzzer run; prints its summary lines.
run() {
  local target=$1 seconds=$2 corpus=$3 artifacts=$4 name log dict=()
  name=$(basename "$target")
  [ -f "$root/tests/fuzz/$name.dict" ] && dict=(-dict="$root/tests/fuzz/$name.dict")
  log="$artifacts/$name.log"
  mkdir -p "$artifacts"
  echo "-- $name: ${seconds}s, corpus $corpus"
  local rc=0
  "$target" "${dict[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1 || rc=$?
  grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" || true
  echo "   corpus files: $(find "$corpus" -type f | wc -l)"
  if [ "$rc" -ne 0 ]; then
    echo "!! $name failed (exit $rc); log: $log" >&2
    grep -E 'ERROR|invariant|SUMMARY|Test unit written' "$log" >&2 || tail -20 "$log" >&2
    return 1
  fi
  echo "   no crash"
}

case "$mode" in
  smoke)
    [ $# -eq 1 ] || usage
    seconds=${GPUATTR_FUZZ_SMOKE_SECONDS:-5}
    shopt -s nullglob
    targets=("$build"/tests/*_fuzz)
    if [ ${#targets[@]} -eq 0 ]; then
      echo "no fuzz targets in $build/tests (configure with CXX=clang++ -DGPUATTR_FUZZ=ON)" >&2
      exit 1
    fi
    scratch=$(mktemp -d /tmp/gpuattr-fuzz-smoke.XXXXXX)
    failed=0
    for t in "${targets[@]}"; do
      [ -x "$t" ] || continue
      name=$(basename "$t")
      seed "$scratch/$name/corpus" "$name"
      run "$t" "$seconds" "$scratch/$name/corpus" "$scratch/$name" || failed=1
    done
    if [ "$failed" -eq 0 ]; then
      rm -rf "$scratch"
    else
      echo "crash inputs and logs kept in $scratch" >&2
    fi
    exit "$failed"
    ;;
  long)
    [ $# -eq 3 ] || usage
    seconds=$2
    name=$3
    target="$build/tests/$name"
    [ -x "$target" ] || { echo "no fuzz target $target" >&2; exit 1; }
    work=${GPUATTR_FUZZ_WORK:-/tmp/gpuattr-fuzz}/$name
    seed "$work/corpus" "$name"
    run "$target" "$seconds" "$work/corpus" "$work"
    ;;
  *)
    usage
    ;;
esac
