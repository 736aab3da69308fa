#!/usr/bin/env bash
# The demo: a fake GPU cluster (fixtures/scenarios/demo: an 8x A100 mixed-MIG box, a time-sliced
# node, a GKE time-shared node and a HAMi vGPU node, with idle pods, pending pods and a vLLM
# server) and gpuattr reading it, serving
# http://127.0.0.1:9787/metrics and the status page. Builds what is missing first. Ctrl-C stops
# everything.
#
#   scripts/demo.sh                  # gpuattr on 127.0.0.1:9787
#   scripts/demo.sh --prometheus     # also a local Prometheus on 127.0.0.1:9090 with the bundled
#                                    # scrape config and alert rules (config/prometheus/)
#   scripts/demo.sh -- --interval 5s # arguments after -- go to gpuattr
set -euo pipefail
cd "$(dirname "$0")/.."

with_prometheus=0
gpuattr_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --prometheus) with_prometheus=1 ;;
    --) shift; gpuattr_args=("$@"); break ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

build=${GPUATTR_BUILD_DIR:-build}
if [ ! -x "$build/gpuattr" ] || [ ! -x "$build/tests/gpuattr-fakecluster" ]; then
  echo "demo.sh: building gpuattr and gpuattr-fakecluster into $build/" >&2
  GPUATTR_TARGETS="gpuattr gpuattr-fakecluster" scripts/build.sh -DGPUATTR_BENCH=OFF
fi
if [ "$with_prometheus" = 1 ] && ! command -v prometheus >/dev/null; then
  echo "demo.sh: --prometheus needs the prometheus binary (apt-get install prometheus)" >&2
  exit 2
fi

tmp=$(mktemp -d -t gpuattr-demo.XXXXXX)
pids=()
cleanup() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  # Up to 10 s for a clean stop, then SIGKILL.
  for _ in $(seq 100); do
    alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup INT TERM EXIT

"$build/tests/gpuattr-fakecluster" --scenario fixtures/scenarios/demo --context demo \
  --kubeconfig-out "$tmp/kubeconfig" >"$tmp/fakecluster.out" &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/kubeconfig" ] && break; sleep 0.1; done
if [ ! -s "$tmp/kubeconfig" ]; then
  echo "demo.sh: the fake apiserver did not start" >&2
  exit 1
fi

# The demo's energy counters and idle runs stay in its temporary folder, not in your real state file.
"$build/gpuattr" --kubeconfig "$tmp/kubeconfig" --context demo --state.file "$tmp/state.json" \
  --web.listen-address 127.0.0.1:9787 "${gpuattr_args[@]}" &
pids+=($!)

if [ "$with_prometheus" = 1 ]; then
  prometheus --config.file=config/prometheus/prometheus.yml --storage.tsdb.path="$tmp/prometheus" \
    --web.listen-address=127.0.0.1:9090 --log.level=warn &
  pids+=($!)
fi

cat >&2 <<MSG

  gpuattr demo: a fake cluster "demo" ($(head -1 "$tmp/fakecluster.out"))
    metrics      http://127.0.0.1:9787/metrics
    status page  http://127.0.0.1:9787/
    kubectl      kubectl --kubeconfig $tmp/kubeconfig get pods -A
$([ "$with_prometheus" = 1 ] && echo "    Prometheus   http://127.0.0.1:9090/ (alerts: http://127.0.0.1:9090/alerts)")
  Import grafana/dashboards/*.json into Grafana (docs/dashboards.md). Ctrl-C stops the demo.

MSG
wait -n "${pids[@]}"
echo "demo.sh: a process exited; stopping the demo" >&2
