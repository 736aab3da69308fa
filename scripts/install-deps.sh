#!/usr/bin/env bash
# Installs the Debian 12 packages gpuattr needs to build, test and benchmark. Idempotent: only
# calls apt-get when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache clang libclang-rt-14-dev
  prometheus-cpp-dev libcpp-httplib-dev nlohmann-json3-dev libyaml-cpp-dev
  libboost-program-options-dev libgtest-dev libgmock-dev libbenchmark-dev libssl-dev zlib1g-dev libcrypt-dev
  openssl curl prometheus prometheus-alertmanager python3-yaml chromium
)
# python3-yaml: scripts/gen-prometheusrule.py and its test. chromium: the status page's browser
# test (headless screenshots and layout, tests/e2e/status_page_browser_test.cc). kubectl is not
# installed here: Debian 12 has no kubectl package, and its kubernetes-client (kubectl 1.20,
# kustomize v2.0.3) cannot build config/kubernetes (no folders in `resources`, no `patches`, no
# components). The tests that need kubectl >= 1.21 skip without it.

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
# --no-install-recommends keeps prometheus from pulling node-exporter and ~35 packages.
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
