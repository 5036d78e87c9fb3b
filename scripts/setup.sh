#!/usr/bin/env bash
# Installs the Debian packages carb builds and runs with. Idempotent; run as root (or with sudo).
# `scripts/setup.sh --bench` also installs the Python peers the benchmarks compare carb with
# (scikit-learn, xgboost); CI does not need them.
set -euo pipefail
pkgs=(
  build-essential cmake ninja-build pkg-config clang-format
  libtorch-dev libopenblas0-openmp
  libxgboost-dev xgboost
  libsqlite3-dev sqlite3 nlohmann-json3-dev libcli11-dev libfmt-dev libeigen3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  gnuplot-nox
  clang libclang-rt-14-dev
  pybind11-dev python3-dev python3-numpy python3-pytest
)
[[ "${1:-}" == "--bench" ]] && pkgs+=(python3-sklearn python3-xgboost)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
