#!/usr/bin/env bash
# Installs the Debian 12 packages gpuattr needs, by purpose:
#   scripts/install-deps.sh [runtime] [build] [test]     (no argument: all three, as CI does)
# runtime: the shared libraries build/gpuattr loads (ldd, mapped to packages with dpkg -S) and CA
#          certificates; build: compiler, CMake, Ninja and the -dev packages of the daemon;
#          test: what the tests, benchmarks, fuzzing and packaging add (GoogleTest, prometheus-cpp
#          as the tests' oracle, clang for the sanitizers, Prometheus, chromium, lintian...).
# Idempotent: only calls apt-get when something is missing. apt's output goes to stderr, so a
# caller's stdout stays its own (scripts/run.sh).
set -euo pipefail

# runtime-packages:begin (tests/unit/deploy_manifests_test.cc checks it against ldd build/gpuattr)
runtime=(
  libc6 libgcc-s1 libstdc++6 libssl3 zlib1g libyaml-cpp0.7 libboost-program-options1.74.0
  libcpp-httplib0.11 libbrotli1 libcrypt1 ca-certificates
)
# runtime-packages:end
# file: `cmake --build build --target package` (docs/install.md) fails without it, as CPack's
# Debian generator runs it to find the binaries for dpkg-shlibdeps (dpkg-dev, from build-essential).
build=(
  build-essential cmake ninja-build pkg-config ccache git file
  libcpp-httplib-dev nlohmann-json3-dev libyaml-cpp-dev libboost-program-options-dev libssl-dev
  zlib1g-dev libcrypt-dev
)
# python3-yaml: scripts/gen-prometheusrule.py and its test. chromium: the status page's browser
# test (headless screenshots and layout, tests/e2e/status_page_browser_test.cc). lintian: the
# package test (tests/e2e/package_test.cc). kubectl is not installed here: Debian 12
# has no kubectl package, and its kubernetes-client (kubectl 1.20, kustomize v2.0.3) cannot build
# config/kubernetes (no folders in `resources`, no `patches`, no components). The tests that need
# kubectl >= 1.21 skip without it. jsonnet: the mixin (mixin/, scripts/gen-mixin.py and
# tests/unit/mixin_test.cc). npm: the dashboards' check against Grafana's published schema
# (tests/e2e/grafana_schema_test.cc installs the pinned @grafana/schema outside the repository).
test=(
  clang libclang-rt-14-dev prometheus-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev
  openssl curl prometheus prometheus-alertmanager python3-yaml chromium lintian jsonnet npm
)

wanted=()
[ $# -eq 0 ] && set -- runtime build test
for purpose in "$@"; do
  case "$purpose" in
    runtime) wanted+=("${runtime[@]}") ;;
    build) wanted+=("${build[@]}") ;;
    test) wanted+=("${test[@]}") ;;
    *) echo "install-deps: unknown purpose '$purpose' (runtime, build or test)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${wanted[@]}"; do
  # An npm from elsewhere (NodeSource's nodejs bundles it and conflicts with Debian's) will do.
  [ "$p" = npm ] && command -v npm >/dev/null && continue
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq >&2
# --no-install-recommends keeps prometheus from pulling node-exporter and ~35 packages.
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
