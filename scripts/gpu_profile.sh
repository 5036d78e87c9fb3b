#!/usr/bin/env bash
# For a lent GPU machine (the H200 device): build carb against the PyTorch install's CUDA
# LibTorch, check the cuda backend and NVML telemetry on a few probe configurations, then profile
# a seeded random order of the paper preset until the time budget is spent, and export the
# dataset into $OUT. Never changes GPU clocks, power limits or any other setting: it records them.
#
# That machine has no package registry: the Debian -dev packages carb's core needs (XGBoost,
# SQLite, CLI11, nlohmann-json) travel unpacked in .deps/root (see scripts/gpu_deps.sh).
# Usage there: OUT=... CARB_GPU_BUDGET_S=450 scripts/gpu_profile.sh
# CARB_GPU_DEPLOY_S=S first spends S seconds on the `deploy` preset (resolutions 160-256, what
# people run; in the same seeded-order way) into $OUT/h200-deploy.csv: rows that test how the
# model, trained on the paper preset, holds past its grid (README, "Predicting past the grid").
# CARB_GPU_PLAN=plan.csv (from `carb plan --model models/h200 --preset paper --exclude data/h200.csv
# --backend cuda --budget-s ...`) measures that plan in its order instead of the seeded random
# order: the rows the model knows least first.
# The budget counts from the script's start; profiling stops (cleanly, after the configuration in
# flight) early enough that the export fits inside it. Everything done so far stays in the store.
set -uo pipefail
T0=$(date +%s)
BUDGET=${CARB_GPU_BUDGET_S:-450}
OUT=${OUT:-out}
W=${CARB_GPU_WORK:-/tmp/carb-gpu}  # stores and scratch; only the dataset and its log go to $OUT
mkdir -p "$OUT" "$W"
exec > >(tee -a "$OUT/log.txt") 2>&1
step() { echo "== [$(($(date +%s) - T0)) s] $*"; }
die() { echo "gpu_profile: $*"; exit 1; }

DEPS=$PWD/.deps/root/usr
LIB=$DEPS/lib/x86_64-linux-gnu
[ -f "$LIB/libxgboost.so" ] || die "missing $LIB/libxgboost.so: run scripts/gpu_deps.sh here and carry .deps/root"
export LD_LIBRARY_PATH=$LIB:${LD_LIBRARY_PATH:-}

step "machine (read only; nothing is set)"
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")'
nvidia-smi --query-gpu=name,driver_version,power.limit,power.default_limit,power.draw,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,persistence_mode,compute_mode,mig.mode.current --format=csv
g++ --version | head -1; cmake --version | head -1
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
CUDA_ROOT=$(dirname "$(dirname "$NVCC")")
"$NVCC" --version | tail -1
nproc; free -g | head -2

step configure
PREFIX=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCARB_BUILD_BENCH=OFF -DCARB_BUILD_TESTS=OFF -DCARB_WERROR=OFF \
  -DCMAKE_PREFIX_PATH="$PREFIX;$DEPS" \
  -DXGBOOST_INCLUDE_DIR="$DEPS/include" -DXGBOOST_LIBRARY="$LIB/libxgboost.so" \
  -DSQLite3_INCLUDE_DIR="$DEPS/include" -DSQLite3_LIBRARY="$LIB/libsqlite3.so" \
  -DCLI11_DIR="$DEPS/share/cmake/CLI11" -Dnlohmann_json_DIR="$DEPS/share/cmake/nlohmann_json" \
  -DCMAKE_POLICY_VERSION_MINIMUM=3.5 -DCUDAToolkit_ROOT="$CUDA_ROOT" -DCUDA_TOOLKIT_ROOT_DIR="$CUDA_ROOT" -DTORCH_CUDA_ARCH_LIST=9.0 \
  >"$W/cmake.log" 2>&1 || { tail -40 "$W/cmake.log"; die "cmake failed"; }
grep "carb: LibTorch" "$W/cmake.log"
grep -q "LibTorch has CUDA" "$W/cmake.log" || die "this LibTorch has no CUDA"

step build
cmake --build build-gpu -j"$(nproc)" --target carb carb_torch >"$W/build.log" 2>&1 ||
  { grep -E -A3 "error" "$W/build.log" | head -60; die "build failed"; }
B=build-gpu/carb

# GPU protocol: short windows so that many configurations fit in a lease. NVML energy is read
# over at least 0.5 s of repeated passes; utilization is sampled over 0.5 s of training steps.
P="--warmup 5 --min-passes 10 --max-passes 100 --target-ci 0.01 --max-timed-s 0.5 --min-energy-window 0.5 --util-window 0.5 --cooldown 0.2"

if [ -n "${CARB_GPU_SKIP_PROBE:-}" ]; then step "probe skipped"; else
step "probe: cuda backend, NVML, out-of-memory handling"
cat >"$W/probe.csv" <<'CSV'
family,depth,width,resolution,batch,precision
basic,18,1,224,1,fp32
basic,18,1,224,64,fp16
bottleneck,50,1,224,128,bf16
bottleneck,50,1,1024,2048,fp32
basic,18,1,224,8,fp32
CSV
# Row 4 asks for far more than the GPU holds: expect status oom, then row 5 ok again.
$B profile --backend cuda --platform h200 --db "$W/probe.db" --configs "$W/probe.csv" $P --format json ||
  die "probe profiling failed"
$B data export --db "$W/probe.db" --out "$OUT/h200-probe.csv" || die "probe export failed"
cat "$OUT/h200-probe.csv"
head -c 4000 "$OUT/h200-probe.json"; echo
fi

# A preset in a seeded random order, so that a campaign stopped anywhere is a uniform sample.
seeded_order() {  # PRESET OUT.csv
  $B space --preset "$1" >"$W/$1.csv"
  python3 - "$W/$1.csv" "$2" <<'PY'
import random, sys
rows = open(sys.argv[1]).read().splitlines()
body = rows[1:]
random.Random(20261130).shuffle(body)
open(sys.argv[2], "w").write("\n".join([rows[0]] + body) + "\n")
PY
}

if [ -n "${CARB_GPU_DEPLOY_S:-}" ]; then
  step "profile the deploy preset in a seeded random order for $CARB_GPU_DEPLOY_S s"
  seeded_order deploy "$W/deploy-order.csv"
  timeout -k 25 "$CARB_GPU_DEPLOY_S" $B profile --backend cuda --platform h200 --db "$W/h200-deploy.db" \
    --configs "$W/deploy-order.csv" $P
  echo "deploy profile exit status $?"
  $B data export --db "$W/h200-deploy.db" --out "$OUT/h200-deploy.csv" --platform h200 || die "deploy export failed"
  cp "$W/h200-deploy.db" "$OUT/h200-deploy.db"
fi

if [ -n "${CARB_GPU_PLAN:-}" ]; then
  step "profile the plan $CARB_GPU_PLAN in its order until the budget"
  ORDER=(--plan "$CARB_GPU_PLAN")
else
  step "profile the paper preset in a seeded random order until the budget"
  seeded_order paper "$W/order.csv"
  ORDER=(--configs "$W/order.csv")
fi
# A store from an earlier lease (same protocol) resumes: its configurations are skipped.
[ -n "${CARB_GPU_RESUME_DB:-}" ] && cp "$CARB_GPU_RESUME_DB" "$W/h200.db"
LEFT=$((BUDGET - ($(date +%s) - T0) - 40))
[ "$LEFT" -gt 20 ] || die "no time left to profile"
echo "profiling for at most $LEFT s"
timeout -k 25 "$LEFT" $B profile --backend cuda --platform h200 --db "$W/h200.db" "${ORDER[@]}" $P
echo "profile exit status $?"
step export
$B data export --db "$W/h200.db" --out "$OUT/h200.csv" --platform h200 || die "export failed"
cp "$W/h200.db" "$OUT/h200.db"
$B data info "$OUT/h200.csv" 2>&1 | head -60 || true
nvidia-smi --query-gpu=power.limit,clocks.sm,clocks.mem,temperature.gpu --format=csv
step done
